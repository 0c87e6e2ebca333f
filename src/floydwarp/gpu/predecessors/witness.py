"""``fast`` with predecessors recovered after the distance run ("witness").

With every weight positive, the predecessor of ``j`` on a shortest path from ``i`` is
any in-neighbour ``k`` of ``j`` with ``d[i,k] + w[k,j] == d[i,j]`` -- a *witness* -- and
the last edge ``k -> j`` of a shortest path is itself one: ``w[k,j] == d[k,j]`` (a
*tight* edge).  So the distances run at the full rate of the dtype (``fast`` without
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
(predecessors/__init__.py), as it does when more than ``MAX_TIGHT_KEYED`` of the pairs are tight edges
and keys would be faster (graphs of many equal weights), or when an edge weighs 0 (a
zero-weight cycle could close a loop of witnesses).  int16 (n <= 65536) runs the pass on
keys ``(d << 16) + ((w << 16) | k)``: one add-min per candidate and row.
"""
from __future__ import annotations

import dataclasses

import numpy as np

from ... import numeric
from ...arrays import array_module
from ...predecessors import NO_PREDECESSOR
from .. import checks, modules, panel

#: int16 with n <= KEYED_MAX_N runs on keys (fw_witness_keyed): k fits the low 16 bits
KEYED_MAX_N = 1 << 16
WARPS = 8
#: candidates a warp takes together; segments are padded to a multiple (witness.cu)
UNROLL = 8
#: candidates a warp holds in shared memory at a time
WINDOW = 128
#: a padding key: above every key whose sum can be a distance (those stay below 2**30)
_PAD_KEY = 1 << 30
#: the share of all pairs that may be candidates where keys are the alternative: the
#: witness pass costs about 3-4 times less per candidate and row than a keyed
#: relaxation (bench/NOTES.md), and past this share the keyed run is cheaper
MAX_TIGHT_KEYED = 0.25

#: dtypes the kernels take (``witness.cu``)
WITNESS_DTYPES = ("int16", "int32", "float32", "float64")
#: dtypes whose keys run below their own rate (int16: int32 keys, half the packed
#: 16-bit rate), where the witness pass goes first
KEYS_SLOWER = ("int16",)


@dataclasses.dataclass(frozen=True)
class WitnessPlan:
    #: relative tolerance of the float run (0 for integer arithmetic)
    slack: float
    #: the largest share of pairs that may be candidates (``MAX_TIGHT_KEYED`` or 1)
    max_tight: float
    #: the smallest weight is 0: the start matrix must show it on the diagonal only
    #: (a dense matrix's zero diagonal; a zero self-loop is never a witness)
    zero_seen: bool = False


def plan_witness(plan, n: int, keys_possible: bool) -> WitnessPlan | None:
    """How to recover ``plan``'s predecessors after its run, or None: a negative weight,
    or weights not known.  Zero-weight edges could close a loop of witnesses: ``run``
    declines them."""
    stats = plan.stats
    dt = np.dtype(plan.dtype)
    if stats is None or n == 0 or stats.min_weight < 0 or dt.name not in WITNESS_DTYPES:
        return None
    slack = 0.0 if numeric.exact(dt, stats) else float(n * np.finfo(dt).eps)
    return WitnessPlan(slack, MAX_TIGHT_KEYED if keys_possible else 1.0, stats.min_weight == 0)


@dataclasses.dataclass(frozen=True)
class Shape:
    """How ``fw_witness`` splits the work: ``chunk`` vertices k per shared-memory pass
    (32 row slices of 64 KiB: three blocks an SM), ``columns`` per warp, and whether
    the candidates are int16 keys."""

    chunk: int
    columns: int
    keyed: bool
    itemsize: int

    @property
    def group(self) -> int:
        """Columns per block."""
        return WARPS * self.columns

    @property
    def entry_bytes(self) -> int:
        """A candidate: int2 {key, offset}, or WitnessEntry<T> {offset, w} (16 bytes for 8-byte w)."""
        return 16 if self.itemsize == 8 and not self.keyed else 8

    @property
    def smem(self) -> int:
        """Dynamic shared memory: the 32 row slices (pitch odd in words: a bank per lane;
        or the 32 x group predecessors written back), then each warp's window of
        ``WINDOW`` candidates."""
        isz = self.itemsize
        cols = max(self.chunk, self.group)
        rows = max(32 * (cols + (2 if isz == 2 else 1)) * isz, 32 * (self.group + 1) * 4)
        return -(-rows // 16) * 16 + WARPS * WINDOW * self.entry_bytes


def shape(dtype, n: int) -> Shape:
    isz = np.dtype(dtype).itemsize
    if isz == 2 and n <= KEYED_MAX_N:
        return Shape(1024, 32, True, isz)
    # float64: fewer columns a warp, or its best sums spill at three blocks an SM
    return Shape({2: 1024, 4: 512, 8: 224}[isz], 8 if isz == 8 else 16, False, isz)


@dataclasses.dataclass(frozen=True)
class Candidates:
    """Every column's candidate edges ``k -> j``, in segments by (column group, chunk of
    k, column), k ascending, each padded to a multiple of ``UNROLL`` with ``k = -1``
    (weight INF): segment ``s`` is ``k[seg[s]:seg[s+1]]``, ``w`` likewise."""

    seg: object
    k: object
    w: object
    shape: Shape
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
#: the kernel's segment offsets are int32, with room for the padding
_MAX_ENTRIES = 2**30


def _off_diagonal(band_mask, n: int) -> int:
    """True entries off the diagonal of an n x n NumPy mask given band by band:
    ``band_mask(lo)`` is rows ``lo .. lo + _BAND`` (on a device: checks.count_off_diagonal)."""
    total = 0
    for lo in range(0, n, _BAND):
        m = band_mask(lo)
        total += int(np.count_nonzero(m)) - int(np.count_nonzero(np.diagonal(m, offset=lo)))
    return total


def zero_edges(w) -> int:
    """Zero weights of the start matrix ``w`` off its diagonal."""
    if array_module(w) is not np:
        return checks.count_off_diagonal(w, w, zero=True)
    return _off_diagonal(lambda lo: w[lo:lo + _BAND] == 0, w.shape[0])


def count(d, w, slack: float) -> int:
    """How many candidate edges there are (off the diagonal)."""
    if array_module(d) is not np:
        return checks.count_off_diagonal(d, w, inf=numeric.inf_of(w.dtype), slack=slack)
    return _off_diagonal(lambda lo: tight(d[lo:lo + _BAND], w[lo:lo + _BAND], slack), d.shape[0])


def candidates(d, w, slack: float) -> Candidates:
    """The candidate lists of the n x n distances ``d`` and start matrix ``w`` (NumPy or CuPy)."""
    xp = array_module(d)
    n = d.shape[0]
    sh = shape(d.dtype, n)
    kc, group = sh.chunk, sh.group
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
    k, j, segment = k[order], j[order], segment[order]
    nseg = -(-n // group) * chunks * group
    # segment is sorted: each one's size from where it starts (bincount checks its input with a
    # CuPy reduction, which compiles for 3.5 s where CuPy's disk cache is cold)
    sizes = xp.diff(xp.searchsorted(segment, xp.arange(nseg + 1)))
    first = xp.cumsum(sizes) - sizes                    # of each segment, unpadded
    seg = xp.zeros(nseg + 1, np.int64)
    seg[1:] = xp.cumsum(-(-sizes // UNROLL) * UNROLL)
    at = seg[segment] + xp.arange(k.size) - first[segment]
    total = int(seg[-1])
    ks = xp.full(total, -1, np.int32)
    ws = xp.full(total, numeric.inf_of(w.dtype), w.dtype)
    ks[at] = k
    ws[at] = w[k, j]
    return Candidates(seg.astype(np.int32), ks, ws, sh, chunks)


def _kernel(sh: Shape, dtype):
    if sh.keyed:
        expr = modules.name_expression("fw_witness_keyed", sh.chunk, sh.columns)
    else:
        expr = modules.name_expression("fw_witness", dtype, sh.chunk, sh.columns)
    return modules.kernel("witness.cu", expr, dynamic_smem=sh.smem)


def recover(d, w, pred, slack: float, cand: Candidates | None = None) -> int:
    """Predecessors of the n x n device distances ``d`` (start matrix ``w``) into
    ``pred`` (views, any row pitch); returns how many reachable pairs found no witness."""
    import cupy as cp

    n = d.shape[0]
    if cand is None:
        cand = candidates(d, w, slack)
    sh, dt = cand.shape, d.dtype
    misses = cp.zeros(1, cp.uint64)
    grid = (-(-n // 32), -(-n // sh.group))       # the rows fastest: one group's candidates stay in L2
    head = (*panel.pitched(d), np.int32(n), np.int32(cand.chunks), cand.seg)
    tail = (np.int32(cand.k.size), *panel.pitched(pred), dt.type(numeric.inf_of(dt)))
    pad = cand.k < 0
    offset = cp.where(pad, 0, cand.k % sh.chunk * dt.itemsize)      # of k in a row slice, in bytes
    if sh.keyed:
        # int2 {(w << 16) | k: sum and vertex in one word, offset}
        entries = cp.stack([cp.where(pad, _PAD_KEY, (cand.w.astype(cp.int32) << 16) | cand.k), offset], axis=1)
        args = head + (entries,) + tail + (np.int32(NO_PREDECESSOR), misses)
    else:
        # WitnessEntry<T> {int offset; T w} (8 bytes, 16 for 8-byte types: w at byte 8)
        wide8 = dt.itemsize == 8
        entries = cp.zeros((cand.k.size, 4 if wide8 else 2), cp.int32)
        entries[:, 0] = offset
        entries.view(dt)[:, (8 if wide8 else 4) // dt.itemsize] = cand.w
        args = head + (entries,) + tail + (np.float64(slack), np.int32(NO_PREDECESSOR), misses)
    _kernel(sh, dt)(grid, (32 * WARPS,), args, shared_mem=sh.smem)
    return int(misses.get()[0])


def run(ctx, wp: WitnessPlan, distances) -> bool:
    """Distances (``distances(ctx)``: ``fast`` without predecessors), then predecessors of
    ``ctx``.  False, with ``ctx.d`` as it was, when an edge weighs 0, the start matrix
    cannot be kept in GPU memory, too many edges are tight, or (float runs) a pair found
    no witness: the caller then tries another method."""
    cp = ctx.cp
    n = ctx.n
    d = ctx.d[:n, :n]
    if wp.zero_seen and zero_edges(d):
        return False
    try:
        start = d.copy()
    except cp.cuda.memory.OutOfMemoryError:
        return False
    distances(ctx)
    with ctx.phase("witness"):
        try:
            ok = (count(d, start, wp.slack) <= min(wp.max_tight * n * n, _MAX_ENTRIES)
                  and recover(d, start, ctx.pr[:n, :n], wp.slack) == 0)
        except cp.cuda.memory.OutOfMemoryError:
            ok = False
        if not ok:
            d[...] = start
    return ok
