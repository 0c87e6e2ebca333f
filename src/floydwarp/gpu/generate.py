"""Erdős–Rényi graphs drawn on the GPU (kernels/generate.cu): the host generator's graph
(floydwarp/generate.py) for the same arguments, edge for edge and weight for weight, from the
same NumPy PCG64 streams, with its edges left in GPU memory.

The host generator took 1.40 s for n = 32,768 at 5 % (54 M edges) on the H100's host, and its
edges then crossed the bus again for the solve; here the edges are drawn where the solve
builds its start matrix (``start.from_device_edges``).  Each stream is split into chunks of
draws that threads reach by the LCG's jump-ahead: a count pass, a scan per block and a fill
pass that recomputes its chunk (kernels/generate.cu).  The only floating-point function is
``log1p`` (gaps below 40 %): where CUDA's result differs from the host C library's in the last
bit, a gap within rounding of an integer moves one edge (odds about 1e-14 an edge, as between
two hosts).

What crosses the bus: the streams' states (32 bytes a block), the potentials (8 bytes a
vertex) and a few counts per block.  No CuPy kernel is used (each compiles on a machine
without CuPy's cache): only copies, memsets and the module's own kernels.
"""
from __future__ import annotations

import math

import numpy as np

from ..errors import FloydwarpError
from ..draws import PER_PAIR_FROM, ROWS_PER_BLOCK, block_streams, potentials
from ..graph import Graph
from ..numeric import WeightStats
from . import device, modules

#: draws per thread of the place passes (gaps; pairs) and 32-bit halves of the weight passes (even)
GAP_CHUNK, PAIR_CHUNK, WEIGHT_CHUNK = 256, 2048, 512
_THREADS = 128
#: the widest weight range drawn here: NumPy draws wider ones 64 bits at a time
MAX_RANGE = 2 ** 32 - 2
#: the kernels of kernels/generate.cu, one module (device.Start can load it ahead)
KERNELS = ("fw_gen_place_count", "fw_gen_place_scan", "fw_gen_place_fill", "fw_gen_weight_count", "fw_gen_scan",
            "fw_gen_weight_fill", "fw_gen_finish")
MODULE = ("generate.cu", KERNELS)


def unsupported(weights, real=False) -> str | None:
    """Why the GPU cannot draw a graph with these weights (None when it can)."""
    lo, hi = (int(w) for w in weights)
    if real:
        return "real (fractional) weights are drawn on the host only"
    if hi - lo > MAX_RANGE:
        return f"the weight range {lo}..{hi} is wider than 2**32 - 1 values: drawn on the host only"
    return None


def stream_states(seeds) -> np.ndarray:
    """(state hi, state lo, inc hi, inc lo) of NumPy's PCG64 for each ``SeedSequence``, as uint64."""
    out = np.empty((len(seeds), 4), np.uint64)
    mask = (1 << 64) - 1
    for i, seed in enumerate(seeds):
        st = np.random.PCG64(seed).state["state"]
        out[i] = (st["state"] >> 64, st["state"] & mask, st["inc"] >> 64, st["inc"] & mask)
    return out


def block_cells(n: int, directed: bool) -> np.ndarray:
    """Candidate pairs of each block of rows (i != j; i < j when undirected)."""
    starts = np.arange(0, n, ROWS_PER_BLOCK, dtype=np.int64)
    rows = np.minimum(ROWS_PER_BLOCK, n - starts)
    if directed:
        return rows * (n - 1)
    return rows * (n - 1 - starts) - rows * (rows - 1) // 2


def gap_draws(cells: np.ndarray, p: float, margin: float = 6.0) -> np.ndarray:
    """Draws of the gap method per block: the expected edges and ``margin`` standard deviations,
    never more than cells + 1 (which always pass the block's last pair)."""
    expected = cells * p
    return np.minimum(cells + 1, (expected + margin * np.sqrt(expected) + 64).astype(np.int64))


def weight_draws(edges: np.ndarray, span: int, margin: float = 6.0) -> np.ndarray:
    """32-bit halves to draw per block for ``edges`` weights in 0..span-1: the edges and the
    rejections expected (Lemire: (2**32 - span) % span of 2**32 values are drawn again)."""
    rate = ((1 << 32) - span) % span / 2 ** 32
    extra = edges * rate
    return edges + (extra + margin * np.sqrt(extra) + 64).astype(np.int64)


def lemire_threshold(span: int) -> int:
    """The low products below which NumPy draws a bounded 32-bit value again."""
    return ((1 << 32) - span) % span


def erdos_renyi(n, percent, seed, weights, potential, directed, real=False) -> Graph:
    """:func:`floydwarp.generate.erdos_renyi` on the GPU (arguments checked there)."""
    reason = unsupported(weights, real) or device.probe()
    if reason:
        raise FloydwarpError(f"cannot draw this graph on the GPU: {reason}")
    import cupy as cp

    lo, hi = weights
    p = percent / 100.0
    potential_stream, streams = block_streams(n, seed)
    cells = block_cells(n, directed)
    kernels = {name: modules.kernel("generate.cu", name, KERNELS) for name in KERNELS}
    mode = 0 if p <= 0 or n < 2 else (2 if p >= PER_PAIR_FROM else 1)
    places = _Places(cp, kernels, stream_states([s[0] for s in streams]), cells, n, directed, mode, p) if mode else None
    edges = places.edges if places else np.zeros(len(cells), np.int64)
    total = int(edges.sum())
    m = total if directed else 2 * total
    src, dst, w = cp.empty(m, np.int32), cp.empty(m, np.int32), cp.empty(m, np.int64)
    if not total:
        return Graph.from_edges(src, dst, w, n=n, stats=WeightStats(n, 0, 0, True), sorted=directed)
    offsets, dev_edges = cp.asarray(np.cumsum(edges) - edges), cp.asarray(edges)
    places.fill(dev_edges, offsets, src, dst)
    span = hi - lo + 1
    if span > 1:
        _draw_weights(cp, kernels, stream_states([s[1] for s in streams]), edges, dev_edges, offsets, span, lo, w)
    h = cp.asarray(potentials(potential_stream, potential, n)) if potential > 0 else None
    extremes = cp.asarray(np.array([np.iinfo(np.int64).max, np.iinfo(np.int64).min], np.int64))
    kernels["fw_gen_finish"]((max(1, min(-(-total // _THREADS), 8192)),), (_THREADS,),
                             (src, dst, w, np.int64(total), np.intp(0) if h is None else h, np.bool_(not directed),
                              np.bool_(span == 1), np.int64(lo), extremes))
    low, high = (int(x) for x in extremes.get())
    return Graph.from_edges(src, dst, w, n=n, stats=WeightStats(n, low, high, True), sorted=directed)


def _grid(chunks: int, nblocks: int) -> tuple:
    """Count and fill passes: threads over the chunks (x), blocks of rows over y."""
    return max(1, min(-(-chunks // _THREADS), 1 << 20)), max(1, min(nblocks, 65535))


class _Places:
    """Where each block's edges lie: the count and scan passes at construction (``edges``: the
    count per block), the fill pass in :meth:`fill`.  A gap method whose draws ended before a
    block's last pair (past 6 sigma: rare) draws again with a wider margin."""

    def __init__(self, cp, kernels, states, cells, n, directed, mode, p):
        self.kernels, nblocks = kernels, len(cells)
        scale = 1.0 / math.log1p(-p) if mode == 1 else 0.0
        chunk = PAIR_CHUNK if mode == 2 else GAP_CHUNK
        states, margin = cp.asarray(states), 6.0
        while True:
            draws = cells if mode == 2 else gap_draws(cells, p, margin)
            self.chunks = max(1, -(-int(draws.max()) // chunk))
            self.sums, counts = cp.empty(nblocks * self.chunks, np.int64), cp.empty(nblocks, np.int64)
            self.args = (states, cp.asarray(draws), np.int64(nblocks), np.int64(self.chunks), np.int32(chunk),
                         np.int64(n), np.int32(ROWS_PER_BLOCK), np.bool_(directed), np.int32(mode), np.float64(p),
                         np.float64(scale))
            self.grid = _grid(self.chunks, nblocks)
            kernels["fw_gen_place_count"](self.grid, (_THREADS,), (*self.args, self.sums))
            kernels["fw_gen_place_scan"]((-(-nblocks // _THREADS),), (_THREADS,), (*self.args, self.sums, counts))
            self.edges = counts.get()
            if self.edges.min() >= 0:
                return
            margin *= 2

    def fill(self, edges, offsets, src, dst):
        """Write each block's edges (src, dst) from ``offsets[b]`` (device arrays)."""
        self.kernels["fw_gen_place_fill"](self.grid, (_THREADS,), (*self.args, self.sums, edges, offsets, src, dst))


def _draw_weights(cp, kernels, states, edges, dev_edges, offsets, span, lo, w):
    """Each block's edges' weights into ``w`` from ``offsets[b]``: lo + NumPy's bounded draws in
    0..span-1, drawing more where the rejections outran the margin (past 6 sigma: rare)."""
    states, nblocks, margin = cp.asarray(states), len(edges), 6.0
    threshold = lemire_threshold(span)
    while True:
        draws = weight_draws(edges, span, margin)
        chunks = max(1, -(-int(draws.max()) // WEIGHT_CHUNK))
        accepted, totals = cp.empty(nblocks * chunks, np.int64), cp.empty(nblocks, np.int64)
        args = (states, cp.asarray(draws), np.int64(nblocks), np.int64(chunks), np.int32(WEIGHT_CHUNK),
                np.uint64(span), np.uint32(threshold))
        kernels["fw_gen_weight_count"](_grid(chunks, nblocks), (_THREADS,), (*args, accepted))
        kernels["fw_gen_scan"]((-(-nblocks // _THREADS),), (_THREADS,), (np.int64(nblocks), np.int64(chunks),
                                                                         accepted, totals))
        if (totals.get() >= edges).all():
            break
        margin *= 2
    kernels["fw_gen_weight_fill"](_grid(chunks, nblocks), (_THREADS,), (*args, np.int64(lo), accepted, dev_edges,
                                                                        offsets, w))
