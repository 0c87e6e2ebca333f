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
    tiles of phases 2 and 3 run in parallel (``prange``).  The rounds are
    ``floydwarp.schedule`` with the :class:`Tiles` engine (``phases=True`` adds
    "phase1".."phase3" to the timings).  n is padded to a
    multiple of the block size with INF (0 on the padded diagonal).  The tiles
    are built straight from the graph a tile row at a time; with
    ``workdir=DIR`` they and the result live in memory-mapped files there, so
    a matrix larger than RAM is streamed through memory by the OS.  With
    predecessors, a zero-weight cycle can leave the blocked order with a
    predecessor loop; ``solve()`` checks and redoes such a run with ``rows``
    (``metadata["pred_fallback"]`` says so).
``rows``
    Seed 002's OpenMP loop: for each k, row k is copied to a buffer and the
    rows i are relaxed in parallel.
``serial``
    The compiled textbook triple loop on one thread.
``bfs`` (taken by ``algorithm="auto"`` when every edge weighs 1)
    All-pairs breadth-first search, one bit per target (floydwarp/bfs.py, cpu/bfs.py).

The first call of a (kernel, dtype) pair compiles it (or loads it from Numba's
on-disk cache); that happens on a tiny matrix before the clock starts, so
``timings["compute"]`` is the run alone: the rounds and unpacking the tiles
into the result.  ``timings["start"]`` is building the start matrix (or tiles)
and predecessors, ``timings["compile"]`` the compilation or cache load.
"""
from __future__ import annotations

import functools
import time

import numpy as np

from .. import checkpoint, schedule
from ..options import CHECKPOINT, WORKDIR
from ..errors import FloydwarpError
from ..plan import EngineOutput, Stopwatch
from ..predecessors import initial_predecessors
from ..registry import register, register_backend
from ..tiling import start_tiles
from .. import team
from .storage import Storage
from .threads import NumbaThreads

register_backend("cpu", "Numba kernels, all cores")

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


@functools.cache
def _kernels():
    from . import kernels  # imports Numba: only when the cpu backend runs

    return kernels


@functools.lru_cache(maxsize=256)
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
        return default_block_size(plan.dtype, plan.n)       # at most n (one tile for n <= 128)
    if isinstance(bs, bool) or not isinstance(bs, (int, np.integer)) or bs < 1:
        raise FloydwarpError(f"block_size must be a positive integer, got {plan.block_size!r}")
    # a tile larger than the matrix only adds padding
    return int(max(1, min(int(bs), plan.n)))


@functools.lru_cache(maxsize=64)
def _lo_of(dtype, inf):
    return dtype.type(-inf)


def _lo(plan):
    """The clamp floor -INF in the matrix dtype (unused for floats, whose ``clamp`` is False)."""
    return _lo_of(plan.dtype, plan.inf)


def _tiny(dtype, pred):
    """A 3-vertex start matrix (and predecessors) for compiling kernels off the clock."""
    inf = np.dtype(dtype).type(np.iinfo(dtype).max // 2 if np.dtype(dtype).kind == "i" else np.inf)
    d = np.full((3, 3), inf, dtype=dtype)
    np.fill_diagonal(d, 0)
    d[0, 1] = 1
    return d, (initial_predecessors(d, inf) if pred else None), inf


def _warm_up(name, dtype, pred, run):
    """Compile (or load from cache) one kernel specialization on a tiny matrix, off the clock."""
    key = (name, dtype, pred)
    if key in _warm:
        return
    d, p, inf = _tiny(dtype, pred)
    run(d, p, inf, True, np.dtype(dtype).type(-inf), lambda done, total: None)
    _warm.add(key)


def _solve(graph, plan, name, run):
    """rows and serial: in place on the n x n matrix."""
    sw = Stopwatch()
    with sw("start"):
        d = graph.to_matrix(plan.dtype, plan.inf)
        pred = initial_predecessors(d, plan.inf) if plan.predecessors else None
    with NumbaThreads(plan.threads) as threads:
        metadata = {"threads": 1 if name == "serial" else threads}
        if plan.n == 0:
            return EngineOutput(d, pred, {**sw.timings, "compute": 0.0}, metadata=metadata)
        with sw("compile"):
            _warm_up(name, plan.dtype, plan.predecessors, run)
        with sw("compute"):
            run(d, pred, plan.inf, bool(plan.clamp), _lo(plan), plan.report)
    return EngineOutput(d, pred, sw.timings, metadata=metadata)


# --------------------------------------------------------------------------- blocked
def _solve_blocked(graph, plan):
    """The blocked schedule on tiles built straight from the graph (no n x n start matrix),
    in memory or, with ``workdir=DIR``, in memory-mapped files there."""
    bs = _block_size(plan) if plan.n else 1
    nb = -(-plan.n // bs)
    per_entry = plan.dtype.itemsize + (4 if plan.predecessors else 0)
    store = Storage.for_plan(plan, 2 * (nb * bs) ** 2 * per_entry)          # tiles + the result matrix
    with NumbaThreads(plan.threads, tasks=nb * nb) as threads:
        metadata = {"threads": threads, "block_size": bs, **store.metadata}
        warm = BlockedWarmUp.needed(plan.dtype, plan.predecessors, tiled=nb > 1,
                                    unpack=not keeps(store, (nb, nb, bs), plan.n))
        if warm is not None and threads > 1:
            warm.start_helper()
        # stage marks, not a Stopwatch's contexts: 1.4 us of a small graph's solve
        started = time.perf_counter()
        t, p = start_tiles(graph, bs, plan.dtype, plan.inf, with_pred=plan.predecessors, alloc=store.tiles)
        built = time.perf_counter()
        if warm is not None:
            warm.run()
        ckpt = checkpoint.from_plan(plan, graph, block=bs)
        stages = schedule.Stages(schedule.WallClock()) if plan.options.get("phases") else None
        compiled = time.perf_counter()
        with Tiles(t, p, bool(plan.clamp), _lo(plan), threads) as tiles:
            schedule.run(tiles, checkpointer=ckpt, report=plan.report, stages=stages)
        d = unpacked(store, t, plan.n, "dist")
        pred = None if p is None else unpacked(store, p, plan.n, "pred")
        done = time.perf_counter()
    store.release_tiles()
    timings = {"start": built - started, "compile": compiled - built, "compute": done - compiled}
    if stages is not None:
        timings.update(stages.timings())
    return EngineOutput(d, pred, timings, negative_diagonal=tiles.negative_diagonal, metadata=metadata)


class BlockedWarmUp:
    """Compiles (or loads) the kernels of a blocked run off the clock, on tiny tiles, only
    those it calls: phases 2 and 3 for a matrix of several tiles (``tiled``; one tile is
    closed by phase 1 alone), unpacking unless the tile is the result (:func:`keeps`).

    With a cold cache the phase 2-3 kernel is half of the compile (bench/NOTES_cpu.md):
    :meth:`start_helper` hands it to a helper process (cpu/ahead.py) that compiles it into
    Numba's on-disk cache on another core while this one builds the start tiles and
    compiles the rest; :meth:`run` then loads it from there."""

    @classmethod
    def needed(cls, dtype, pred, tiled, unpack) -> "BlockedWarmUp | None":
        """The warm-up of these kernels, or None when this process has run it already."""
        return None if ("blocked", dtype, pred, tiled, unpack) in _warm else cls(dtype, pred, tiled, unpack)

    def __init__(self, dtype, pred, tiled, unpack):
        self.key = ("blocked", dtype, pred, tiled, unpack)
        self.unpack, self.helper = unpack, None
        d, p, inf = _tiny(dtype, pred)
        k = 2 if tiled else 1
        self.t = np.tile(d, (k, k, 1, 1))
        self.p = None if p is None else np.tile(p, (k, k, 1, 1))
        self.tiles = Tiles(self.t, self.p, True, np.dtype(dtype).type(-inf))

    def start_helper(self):
        """Fork a helper compiling the phase 2-3 kernel when it is needed and not cached."""
        if self.tiles.crew is not None:
            from . import ahead

            self.helper = ahead.start([self.tiles.crew.call(0, False)])

    def run(self):
        self.tiles.close_pivot(0)          # phase 1 and unpacking while the helper compiles
        for tiles in (self.t, self.p) if self.unpack else ():
            if tiles is not None:
                m = tiles.shape[0] * tiles.shape[2]
                _kernels().unpack_rows(tiles, np.empty((m, m), tiles.dtype), 0, m)
        if self.helper is not None:
            self.helper.wait()             # whatever its outcome: the call below compiles if it must
            self.helper = None
        with self.tiles as tiles:
            schedule.run(tiles)
        _warm.add(self.key)


class Tiles:
    """The cpu engine of the blocked schedule (floydwarp.schedule): the tiled matrix
    ``t[I, J]`` (and predecessors ``p``) in one NumPy array or memory map; phase 1 is one
    Numba call, phases 2 and 3 are one kernel (``update_tiles``) run by a crew of
    ``threads`` threads (cpu/crew.py) for the length of a ``with`` block, reading copies
    of the pivot row and column tiles that phases 1 and 2 write as they go; tiles never
    move."""

    def __init__(self, t, p, clamp, lo, threads=1):
        self.t, self.p, self.clamp, self.lo = t, p, clamp, lo
        self.rounds = nb = t.shape[0]
        K = self.K = _kernels()
        # phase 1's row buffers (a Numba np.empty would cost its cold compile ~60 ms)
        self.rowk = np.empty(t.shape[2], t.dtype)
        self.prowk = None if p is None else np.empty(t.shape[2], p.dtype)
        # the panel copies: none for one tile (closed by phase 1 alone)
        self.rowp = self.colp = self.prow = None
        if nb > 1:
            self.rowp, self.colp = np.empty(t.shape[1:], t.dtype), np.empty(t.shape[1:], t.dtype)
            self.prow = None if p is None else np.empty(t.shape[1:], p.dtype)
        self.crew = None
        if nb > 1:
            from .crew import Crew         # imports Numba, as _kernels() has by now

            if p is None:
                self.crew = Crew(K.update_tiles, (t, clamp, lo, self.rowp, self.colp), threads)
            else:
                self.crew = Crew(K.update_tiles_pred, (t, p, clamp, lo, self.rowp, self.colp, self.prow), threads)
        self.panels_of = None

    def __enter__(self):
        if self.crew is not None:
            self.crew.__enter__()
        return self

    def __exit__(self, *exc):
        return self.crew is not None and self.crew.__exit__(*exc)

    def state(self):
        return self.t, self.p

    def close_pivot(self, r):
        if self.p is None:
            negative = self.K.close_pivot(self.t, r, self.clamp, self.lo, self.rowk)
        else:
            negative = self.K.close_pivot_pred(self.t, self.p, r, self.clamp, self.lo, self.rowk, self.prowk)
        if self.crew is not None:         # the closed pivot tile into its slots of the panel copies
            self.rowp[r] = self.colp[r] = self.t[r, r]
            if self.p is not None:
                self.prow[r] = self.p[r, r]
        if self.rounds == 1:              # one tile: phase 1 is the whole run
            self.negative_diagonal = bool(negative)

    #: whether a diagonal entry went negative, where the engine knows it for free (one tile)
    negative_diagonal = None

    # Phases 2 and 3 update the tiles off the pivot tile: a matrix of one tile has none.
    def update_panels(self, r):
        if self.crew is not None:
            self.crew.lead(r, True)
            self.panels_of = r

    def product(self, r, part):
        if self.crew is not None:
            # phase 3 reads the panel copies round r's phase 2 wrote: the rounds run in
            # order, without lookahead (which would start round r + 1 first)
            if part != schedule.ALL or self.panels_of != r:
                raise FloydwarpError(f"cpu blocked: phase 3 of round {r} ({part}) without its phase 2 just before")
            self.crew.lead(r, False)


def keeps(store, shape, n) -> bool:
    """True when tiles of ``shape`` (its first three entries count) are the n x n result
    already: one unpadded tile in RAM."""
    return store.workdir is None and tuple(shape[:3]) == (1, 1, n)


def unpacked(store, tiles, n, name):
    """The n x n matrix of ``tiles``: a view of it when :func:`keeps`, otherwise unpacked
    into a new array or the work folder's ``NAME.npy``."""
    if keeps(store, tiles.shape, n):
        return tiles[0, 0]
    out = store.result((n, n), tiles.dtype, name)
    team.run(_kernels().unpack_rows, n, tiles, out, threads=team.shares(n, n * n))
    return out


# --------------------------------------------------------------------------- rows, serial
def _stepper(steps, steps_pred):
    def run(d, pred, inf, clamp, lo, report):
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


def _run_rows(d, pred, inf, clamp, lo, report):
    from . import steps  # imports Numba: only when the algorithm runs

    _stepper(steps.rows_steps, steps.rows_steps_pred)(d, pred, inf, clamp, lo, report)


def _run_serial(d, pred, inf, clamp, lo, report):
    from . import steps

    _stepper(steps.serial_steps, steps.serial_steps_pred)(d, pred, inf, clamp, lo, report)


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
@register("cpu", "blocked", default=True, predecessors=True, bytes_moved=_blocked_traffic,
          options={**CHECKPOINT, **WORKDIR})
def blocked(graph, plan) -> EngineOutput:
    """3-phase blocked Floyd-Warshall on tiles (Numba, all cores, vectorized min-plus tiles)."""
    return _solve_blocked(graph, plan)


@register("cpu", "rows", predecessors=True, k_order=True, bytes_moved=_per_k_traffic)
def rows(graph, plan) -> EngineOutput:
    """Per k, rows in parallel with row k buffered (seed 002's OpenMP loop)."""
    return _solve(graph, plan, "rows", _run_rows)


@register("cpu", "serial", predecessors=True, k_order=True, bytes_moved=_per_k_traffic)
def serial(graph, plan) -> EngineOutput:
    """The compiled textbook triple loop, one thread."""
    return _solve(graph, plan, "serial", _run_serial)


# cpu/bfs (all-pairs breadth-first search for unit weights), listed after the Floyd-Warshall algorithms
from . import bfs  # noqa: E402,F401
