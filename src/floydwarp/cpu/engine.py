"""The ``cpu`` backend: Numba kernels on every core (see cpu/kernels.py).

Algorithms
----------
``blocked`` (default)
    The 3-phase blocked schedule on a tiled copy of the matrix (tiles of
    ``block_size``^2 contiguous entries): per round r, (1) close the pivot tile
    by Floyd-Warshall, (2) update the pivot row tiles to ``P* (x) X`` and the
    pivot column tiles to ``X (x) P*`` with the closed pivot tile ``P*``,
    (3) update every other tile with the min-plus product of its column-panel
    and row-panel tiles, read from contiguous copies of the two panels; the
    tiles of phases 2 and 3 run in parallel (``prange``).  n is padded to a
    multiple of the block size with INF (0 on the padded diagonal).  With
    predecessors, a zero-weight cycle can leave the blocked order with a
    predecessor loop; ``solve()`` checks and redoes such a run with ``rows``
    (``metadata["pred_fallback"]`` says so).
``rows``
    Seed 002's OpenMP loop: for each k, row k is copied to a buffer and the
    rows i are relaxed in parallel.
``serial``
    The compiled textbook triple loop on one thread.

The first call of a (kernel, dtype) pair compiles it (or loads it from Numba's
on-disk cache); that happens on a tiny matrix before the clock starts, so
``timings["compute"]`` is the run alone: packing into tiles, the rounds and
unpacking, not building the matrix or the predecessor start.
"""
from __future__ import annotations

import contextlib
import time
from contextlib import contextmanager

import numpy as np

from .. import checkpoint
from ..errors import FloydwarpError
from ..plan import EngineOutput
from ..predecessors import initial_predecessors
from ..registry import register, register_backend

register_backend("cpu", "Numba kernels, all cores", auto_priority=10)

#: Measured blocked rates (G relaxations/s, n = 2048, 2 threads, mean of two
#: sweeps) per dtype and tile edge on a 2-core Xeon (AVX2/AVX-512, 48 KiB L1d,
#: 2 MiB L2 per core); see bench/NOTES_cpu.md.  The curves are flat (within
#: ~10 %) over these sizes, so the default tile is the one that minimizes
#: padded work / rate for the n at hand (n = 2000 takes 80 rather than pad to
#: 2048 with 64).
BLOCK_RATES = {
    "int16": {64: 90.3, 80: 90.5, 96: 84.7, 128: 97.1, 160: 89.1},
    "int32": {48: 45.7, 64: 49.7, 80: 48.7, 96: 46.7, 128: 49.2, 160: 47.9},
    "float32": {48: 47.9, 64: 47.5, 80: 47.7, 96: 44.9, 128: 45.8, 160: 45.2},
    "int64": {48: 18.0, 64: 17.3, 96: 17.8, 128: 19.9, 160: 18.7},
    "float64": {48: 20.5, 64: 19.6, 96: 20.6, 128: 23.7, 160: 22.4},
}
#: The fastest tile per dtype at n = 2048.
DEFAULT_BLOCK = {name: max(rates, key=rates.get) for name, rates in BLOCK_RATES.items()}
#: rows/serial report progress about this many times per run
_PROGRESS_STEPS = 64

_warm: set = set()


def _kernels():
    from . import kernels  # imports Numba: only when the cpu backend runs

    return kernels


@contextmanager
def _threads(requested):
    import numba

    limit = numba.config.NUMBA_NUM_THREADS
    n = limit if requested is None else int(requested)
    if not 1 <= n <= limit:
        raise FloydwarpError(
            f"threads={requested} is out of range: Numba runs 1..{limit} threads here "
            f"(set NUMBA_NUM_THREADS before starting Python for more)")
    previous = numba.get_num_threads()
    numba.set_num_threads(n)
    try:
        yield n
    finally:
        numba.set_num_threads(previous)


def default_block_size(dtype, n) -> int:
    """The tile edge for n vertices: among the measured sizes that leave at least 10
    tiles per side (else 5, for parallel slack in phases 2 and 3), the one that
    minimizes padded work / rate; a small matrix (n <= 128 and too small for 5
    tiles) is one tile."""
    rates = BLOCK_RATES[np.dtype(dtype).name]
    fastest = max(rates, key=rates.get)
    n = max(int(n), 1)
    for min_tiles in (10, 5):
        sizes = [b for b in rates if -(-n // b) >= min_tiles]
        if sizes:
            break
    else:
        return n if n <= 128 else min(rates)

    def cost(b):
        padded = -(-n // b) * b
        return (padded ** 3 / rates[b], b != fastest)

    return min(sizes, key=cost)


def _block_size(plan) -> int:
    bs = plan.block_size
    if bs is None:
        bs = default_block_size(plan.dtype, plan.n)
    if isinstance(bs, bool) or not isinstance(bs, (int, np.integer)) or bs < 1:
        raise FloydwarpError(f"block_size must be a positive integer, got {plan.block_size!r}")
    # a tile larger than the matrix only adds padding
    return int(max(1, min(int(bs), plan.n)))


def _lo(plan):
    """The clamp floor -INF in the matrix dtype (unused for floats, whose ``clamp`` is False)."""
    return np.dtype(plan.dtype).type(-plan.inf)


def _warm_up(name, dtype, pred, run):
    """Compile (or load from cache) one kernel specialization on a tiny matrix, off the clock."""
    key = (name, np.dtype(dtype).name, pred)
    if key in _warm:
        return
    inf = np.dtype(dtype).type(np.iinfo(dtype).max // 2 if np.dtype(dtype).kind == "i" else np.inf)
    d = np.full((3, 3), inf, dtype=dtype)
    np.fill_diagonal(d, 0)
    d[0, 1] = 1
    p = initial_predecessors(d, inf) if pred else None
    run(d, p, 2, inf, True, np.dtype(dtype).type(-inf), lambda done, total: None)
    _warm.add(key)


def _solve(graph, plan, name, run):
    d = graph.to_matrix(plan.dtype, plan.inf)
    pred = initial_predecessors(d, plan.inf) if plan.predecessors else None
    bs = _block_size(plan)
    with _threads(plan.threads) as threads:
        metadata = {"threads": 1 if name == "serial" else threads}
        if name == "blocked":
            metadata["block_size"] = bs
        if plan.n == 0:
            return EngineOutput(d, pred, {"compute": 0.0}, metadata=metadata)
        _warm_up(name, plan.dtype, plan.predecessors, run)
        extra = {}
        if name == "blocked":
            extra["checkpointer"] = checkpoint.from_plan(plan, graph, block=bs)
        t0 = time.perf_counter()
        run(d, pred, bs, plan.inf, bool(plan.clamp), _lo(plan), plan.report, **extra)
        seconds = time.perf_counter() - t0
    return EngineOutput(d, pred, {"compute": seconds}, metadata=metadata)


# --------------------------------------------------------------------------- runners
def _run_blocked(d, pred, bs, inf, clamp, lo, report, checkpointer=None):
    """Rounds on the tiled matrix; with a checkpointer, resume from its folder and save
    at round boundaries (see floydwarp.checkpoint)."""
    K = _kernels()
    t = K.pack(d, bs, inf)
    p = None if pred is None else K.pack_pred(pred, bs)
    nb = t.shape[0]
    start = 0
    if checkpointer is not None and checkpointer.resuming:
        saved = checkpointer.load()
        if saved is not None:
            start, arrays = saved
            t[...] = arrays["dist"]
            if p is not None:
                p[...] = arrays["pred"]
    with checkpointer.stop_on_signals() if checkpointer else contextlib.nullcontext():
        for r in range(start, nb):
            if p is None:
                K.blocked_round(t, r, clamp, lo)
            else:
                K.blocked_round_pred(t, p, r, clamp, lo)
            report(r + 1, nb)
            if checkpointer is not None:
                checkpointer.after_round(r + 1, {"dist": t} if p is None else {"dist": t, "pred": p}, nb)
    if p is not None:
        K.unpack(p, pred)
    K.unpack(t, d)


def _stepper(steps, steps_pred):
    def run(d, pred, bs, inf, clamp, lo, report):
        n = d.shape[0]
        chunk = max(1, -(-n // _PROGRESS_STEPS))
        for k0 in range(0, n, chunk):
            k1 = min(n, k0 + chunk)
            if pred is None:
                steps(d, k0, k1, clamp, lo)
            else:
                steps_pred(d, pred, k0, k1, clamp, lo)
            report(k1, n)
    return run


def _run_rows(d, pred, bs, inf, clamp, lo, report):
    K = _kernels()
    _stepper(K.rows_steps, K.rows_steps_pred)(d, pred, bs, inf, clamp, lo, report)


def _run_serial(d, pred, bs, inf, clamp, lo, report):
    K = _kernels()
    _stepper(K.serial_steps, K.serial_steps_pred)(d, pred, bs, inf, clamp, lo, report)


# --------------------------------------------------------------------------- traffic models
def _per_k_traffic(n, itemsize, block_size=None):
    """rows/serial: every cell read and written once per k: 2 n^3 itemsize."""
    return 2.0 * int(n) ** 3 * itemsize


def _blocked_traffic(n, itemsize, block_size=None):
    """Blocked: every round reads and writes each tile once (the pivot panels stay in
    L2), plus packing and unpacking: 2 n^3 / B + 4 n^2 elements."""
    n = int(n)
    guess = {2: "int16", 4: "int32"}.get(int(itemsize), "float64")
    b = int(block_size or default_block_size(guess, max(n, 1)))
    return (2.0 * n ** 3 / b + 4.0 * n ** 2) * itemsize


# --------------------------------------------------------------------------- registrations
@register("cpu", "blocked", default=True, predecessors=True, bytes_moved=_blocked_traffic)
def blocked(graph, plan) -> EngineOutput:
    """3-phase blocked Floyd-Warshall on tiles (Numba, all cores, vectorized min-plus tiles)."""
    return _solve(graph, plan, "blocked", _run_blocked)


@register("cpu", "rows", predecessors=True, k_order=True, bytes_moved=_per_k_traffic)
def rows(graph, plan) -> EngineOutput:
    """Per k, rows in parallel with row k buffered (seed 002's OpenMP loop)."""
    return _solve(graph, plan, "rows", _run_rows)


@register("cpu", "serial", predecessors=True, k_order=True, bytes_moved=_per_k_traffic)
def serial(graph, plan) -> EngineOutput:
    """The compiled textbook triple loop, one thread."""
    return _solve(graph, plan, "serial", _run_serial)
