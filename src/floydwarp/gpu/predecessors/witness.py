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
from ...predecessors import NO_PREDECESSOR
from .. import checks, modules, panel

#: int16 with n <= KEYED_MAX_N runs on keys (fw_witness_keyed): k fits the low 16 bits
KEYED_MAX_N = 1 << 16
WARPS = 8
#: candidates a warp takes together; segments are padded to a multiple (witness.cu)
UNROLL = 8
#: candidates a warp holds in shared memory at a time
WINDOW = 128
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
    """Every column's candidate edges ``k -> j`` as ``fw_witness`` reads them: ``entries``
    in segments by (column group, chunk of k, column), k ascending, each padded to a
    multiple of ``UNROLL``; segment ``s`` is ``entries[seg[s]:seg[s+1]]``.  An entry is
    int2 {``(w << 16) | k`` (padding: 2**30), byte offset of k in a row slice} for keys,
    else ``WitnessEntry<T>`` {offset, w} (padding: weight INF) -- ``entry_bytes / 4``
    int32 words a row of ``entries``."""

    seg: object
    entries: object
    shape: Shape
    chunks: int
    #: candidate edges, without the padding
    count: int


#: the kernel's segment offsets are int32, with room for the padding
_MAX_ENTRIES = 2**30


def _kernels(sh: Shape, dtype):
    """(count, fill, witness) kernels of witness.cu for ``dtype`` on ``sh``: one module."""
    if sh.keyed:
        witness = modules.name_expression("fw_witness_keyed", sh.chunk, sh.columns)
    else:
        witness = modules.name_expression("fw_witness", dtype, sh.chunk, sh.columns)
    group = (modules.name_expression("fw_witness_count", dtype, sh.chunk, sh.columns),
             modules.name_expression("fw_witness_fill", dtype, sh.chunk, sh.columns, sh.keyed), witness)
    return (modules.kernel("witness.cu", group[0], group), modules.kernel("witness.cu", group[1], group),
            modules.kernel("witness.cu", witness, group, dynamic_smem=sh.smem))


def candidates(d, w, slack: float, limit: float) -> Candidates | None:
    """The candidate lists of the n x n device distances ``d`` and start matrix ``w``
    (views, any row pitch): the edges ``k -> j`` (``k != j``) with ``w[k,j]`` below INF
    and equal to ``d[k,j]`` (``slack`` 0) or at most ``d[k,j] + slack * w[k,j]`` (``d <= w``
    always: a run only lowers its start matrix).  None when there are more than ``limit``.

    Two kernels of witness.cu, one block per (column group, chunk): the first sizes each
    segment, the host adds up the blocks' sizes (one small copy each way), the second
    writes the segments.  Where CuPy built them (nonzero, sort, scatter), a machine without
    CuPy's disk cache compiled some 35 of CuPy's kernels, outside the ``compile`` clock."""
    import cupy as cp

    n = d.shape[0]
    dt = d.dtype
    sh = shape(dt, n)
    chunks = -(-n // sh.chunk)
    blocks = -(-n // sh.group) * chunks
    count, fill, _ = _kernels(sh, dt)
    args = (*panel.pitched(d), *panel.pitched(w), np.int32(n), np.int32(chunks), dt.type(numeric.inf_of(dt)),
            np.float64(slack))
    sizes = cp.empty(blocks * sh.group, cp.int32)
    totals = cp.empty((blocks, 2), cp.int32)            # per block: candidates, padded size
    count((blocks,), (sh.group,), args + (sizes, totals))
    totals = totals.get().astype(np.int64)
    found, padded = int(totals[:, 0].sum()), totals[:, 1]
    if found > limit or padded.sum() > _MAX_ENTRIES:
        return None
    base = np.zeros(blocks, np.int32)
    np.cumsum(padded[:-1], out=base[1:])
    seg = cp.empty(blocks * sh.group + 1, cp.int32)
    entries = cp.empty((int(padded.sum()), sh.entry_bytes // 4), cp.int32)
    fill((blocks,), (sh.group,), args + (sizes, cp.asarray(base), seg, entries))
    return Candidates(seg, entries, sh, chunks, found)


def recover(d, pred, slack: float, cand: Candidates) -> int:
    """Predecessors of the n x n device distances ``d`` into ``pred`` (views, any row
    pitch) from the candidates of ``d``; returns how many reachable pairs found no witness."""
    import cupy as cp

    n = d.shape[0]
    sh, dt = cand.shape, d.dtype
    misses = cp.zeros(1, cp.uint64)
    grid = (-(-n // 32), -(-n // sh.group))       # the rows fastest: one group's candidates stay in L2
    args = (*panel.pitched(d), np.int32(n), np.int32(cand.chunks), cand.seg, cand.entries,
            np.int32(cand.entries.shape[0]), *panel.pitched(pred), dt.type(numeric.inf_of(dt)))
    if not sh.keyed:
        args += (np.float64(slack),)
    _kernels(sh, dt)[2](grid, (32 * WARPS,), args + (np.int32(NO_PREDECESSOR), misses), shared_mem=sh.smem)
    return int(misses.get()[0])


def run(ctx, wp: WitnessPlan, distances) -> bool:
    """Distances (``distances(ctx)``: ``fast`` without predecessors), then predecessors of
    ``ctx``.  False, with ``ctx.d`` as it was, when an edge weighs 0, the start matrix
    cannot be kept in GPU memory, too many edges are tight, or (float runs) a pair found
    no witness: the caller then tries another method."""
    cp = ctx.cp
    n = ctx.n
    d = ctx.d[:n, :n]
    if wp.zero_seen and checks.count_zeros_off_diagonal(d):
        return False
    try:
        start = cp.empty((n, n), d.dtype)
    except cp.cuda.memory.OutOfMemoryError:
        return False
    panel.copy(start, d)
    distances(ctx)
    with ctx.phase("witness"):
        try:
            cand = candidates(d, start, wp.slack, wp.max_tight * n * n)
            ok = cand is not None and recover(d, ctx.pr[:n, :n], wp.slack, cand) == 0
        except cp.cuda.memory.OutOfMemoryError:
            ok = False
        if not ok:
            panel.copy(d, start)
    return ok
