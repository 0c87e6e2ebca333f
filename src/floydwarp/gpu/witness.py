"""``fast`` with predecessors recovered after the distance run ("witness").

With every weight positive, the predecessor of ``j`` on a shortest path from ``i`` is
any in-neighbour ``k`` of ``j`` with ``d[i,k] + w[k,j] == d[i,j]`` -- a *witness* -- and
the last edge ``k -> j`` of a shortest path is itself one: ``w[k,j] == d[k,j]`` (a
*tight* edge).  So the distances run at the full rate of the dtype (``wide`` without
predecessors), and then one pass looks for each pair's witness among the tight edges
into ``j`` only (its *candidates*, ``fw_witness`` in kernels/witness.cu): ``n`` times
the number of tight edges instead of ``n**3`` -- on random graphs a few percent of the
edges are tight, on sparse graphs there are at most ``m``.

Each pair takes the candidate of least ``d[i,k] + w[k,j]`` (the smallest ``k`` among
equals).  With positive weights ``d[i,k] < d[i,j]`` along every predecessor edge, so
the predecessors cannot loop (``solve()`` need not look for loops).  Exact runs
(integer arithmetic) find ``d[i,j]`` itself.  Float runs round: their candidates are the
edges within ``slack = n * eps`` of tight (the forward error bound of a sum of ``n``
terms), only candidates with ``d[i,k] < d[i,j]`` count, and a pair whose best sum is
not within ``slack * d[i,j]`` of ``d[i,j]`` is a miss: the run then falls back
(engine.py), as it does when more than ``MAX_TIGHT`` of the pairs are tight edges and
keys would be faster (graphs of many equal weights).
"""
from __future__ import annotations

import dataclasses

import numpy as np

from .. import numeric
from ..arrays import array_module
from ..predecessors import NO_PREDECESSOR
from . import modules, wide

#: vertices k per chunk (the 32 row slices in shared memory: 64 KiB) and columns per
#: warp, by item size
CHUNK = {2: 1024, 4: 512, 8: 256}
COLUMNS = {2: 32, 4: 32, 8: 16}
WARPS = 8
#: the share of all pairs that may be candidates where keys are the alternative: the
#: witness pass costs about 3-4 times less per candidate and row than a keyed
#: relaxation (bench/NOTES.md), and past this share the keyed run is cheaper
MAX_TIGHT_KEYED = 0.25

#: dtypes whose keys run below their own rate (int16: int32 keys, half the packed
#: 16-bit rate), where the witness pass goes first
KEYS_SLOWER = ("int16",)


@dataclasses.dataclass(frozen=True)
class WitnessPlan:
    #: relative tolerance of the float run (0 for integer arithmetic)
    slack: float
    #: the largest share of pairs that may be candidates (``MAX_TIGHT_KEYED`` or 1)
    max_tight: float


def plan_witness(plan, n: int, keys_possible: bool) -> WitnessPlan | None:
    """How to recover ``plan``'s predecessors after its run, or None: weights not all
    positive (zero-weight edges could close a loop of witnesses) or not known."""
    stats = plan.stats
    if stats is None or n == 0 or not stats.min_weight > 0:
        return None
    dt = np.dtype(plan.dtype)
    slack = 0.0 if numeric.exact(dt, stats) else float(n * np.finfo(dt).eps)
    return WitnessPlan(slack, MAX_TIGHT_KEYED if keys_possible else 1.0)


def shape(dtype) -> tuple[int, int, int]:
    """(chunk, columns per warp, columns per block) for a dtype."""
    isz = np.dtype(dtype).itemsize
    return CHUNK[isz], COLUMNS[isz], WARPS * COLUMNS[isz]


def smem_bytes(dtype) -> int:
    """Dynamic shared memory of ``fw_witness``: the 32 row slices, or the 32 x G
    predecessors written back (whichever is larger)."""
    dt = np.dtype(dtype)
    kc, _, group = shape(dt)
    cols = max(kc, group)
    return max(32 * (cols + (2 if dt.itemsize == 2 else 1)) * dt.itemsize, 32 * (group + 1) * 4)


@dataclasses.dataclass(frozen=True)
class Candidates:
    """Every column's candidate edges ``k -> j``, in segments by (column group, chunk of
    k, column), k ascending: segment ``s`` is ``k[seg[s]:seg[s+1]]``, ``w`` likewise."""

    seg: object
    k: object
    w: object
    chunks: int


def tight(d, w, slack: float):
    """The candidate edges of a band of rows k: ``w[k,j]`` finite and within ``slack``
    of ``d[k,j]`` (``d <= w`` always: a run only lowers its start matrix)."""
    finite = w < numeric.inf_of(w.dtype)
    if slack == 0:
        return finite & (w == d)
    return finite & (w <= d + slack * w)


#: rows k per band of the candidate search (bounds its temporaries)
_BAND = 2048
#: the kernel's segment offsets are int32
_MAX_ENTRIES = 2**31 - 1


def count(d, w, slack: float) -> int:
    """How many candidate edges there are (off the diagonal)."""
    xp = array_module(d)
    n = d.shape[0]
    total = 0
    for lo in range(0, n, _BAND):
        m = tight(d[lo:lo + _BAND], w[lo:lo + _BAND], slack)
        total += int(xp.count_nonzero(m)) - int(xp.count_nonzero(xp.diagonal(m, offset=lo)))
    return total


def candidates(d, w, slack: float) -> Candidates:
    """The candidate lists of the n x n distances ``d`` and start matrix ``w`` (NumPy or CuPy)."""
    xp = array_module(d)
    n = d.shape[0]
    kc, _, group = shape(d.dtype)
    chunks = -(-n // kc)
    ks, js = [], []
    for lo in range(0, n, _BAND):
        m = tight(d[lo:lo + _BAND], w[lo:lo + _BAND], slack)
        k, j = xp.nonzero(m)
        k = k.astype(np.int64) + lo
        off = k != j
        ks.append(k[off])
        js.append(j[off].astype(np.int64))
    k = xp.concatenate(ks) if ks else xp.zeros(0, np.int64)
    j = xp.concatenate(js) if js else xp.zeros(0, np.int64)
    segment = ((j // group) * chunks + k // kc) * group + j % group
    order = xp.argsort(segment * kc + k % kc)
    nseg = -(-n // group) * chunks * group
    seg = xp.zeros(nseg + 1, np.int32)
    seg[1:] = xp.cumsum(xp.bincount(segment, minlength=nseg))
    return Candidates(seg, k[order].astype(np.int32), w[k[order], j[order]], chunks)


def _kernel(dtype):
    kc, cols, _ = shape(dtype)
    expr = modules.name_expression("fw_witness", dtype, kc, cols)
    return modules.kernel("witness.cu", expr, dynamic_smem=smem_bytes(dtype))


def recover(d, w, pred, slack: float, cand: Candidates | None = None) -> int:
    """Predecessors of the n x n device distances ``d`` (start matrix ``w``) into
    ``pred`` (views, any row pitch); returns how many reachable pairs found no witness."""
    import cupy as cp

    n = d.shape[0]
    if cand is None:
        cand = candidates(d, w, slack)
    _, _, group = shape(d.dtype)
    misses = cp.zeros(1, cp.uint64)
    dt = d.dtype
    _kernel(dt)((-(-n // group), -(-n // 32)), (32 * WARPS,),
                (d, np.int64(d.strides[0] // d.itemsize), np.int32(n), np.int32(cand.chunks), cand.seg, cand.k,
                 cand.w, pred, np.int64(pred.strides[0] // pred.itemsize), dt.type(numeric.inf_of(dt)),
                 np.float64(slack), np.int32(NO_PREDECESSOR), misses), shared_mem=smem_bytes(dt))
    return int(misses.get()[0])


def run(ctx, wp: WitnessPlan) -> bool:
    """Distances (``wide``) and then predecessors of ``ctx``.  False, with ``ctx.d`` as it
    was, when the start matrix cannot be kept in GPU memory, too many edges are tight,
    or (float runs) a pair found no witness: the caller then tries another method."""
    cp = ctx.cp
    n = ctx.n
    d = ctx.d[:n, :n]
    try:
        start = d.copy()
    except cp.cuda.memory.OutOfMemoryError:
        return False
    wide.run(ctx)
    with ctx.phase("witness"):
        ok = count(d, start, wp.slack) <= min(wp.max_tight * n * n, _MAX_ENTRIES)
        if ok:
            try:
                ok = recover(d, start, ctx.pr[:n, :n], wp.slack) == 0
            except cp.cuda.memory.OutOfMemoryError:
                ok = False
        if not ok:
            d[...] = start
    return ok
