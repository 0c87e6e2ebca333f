"""Numba kernels of the batched CPU engine: one ``prange`` over graphs, each graph's
matrix small enough to stay in the core's L1 cache while Floyd-Warshall runs on it.

Each thread takes ``chunk`` graphs at a time and solves each in its own scratch matrix
through the per-graph steps of steps.py, C function pointers: a loader (from the graph's
edges, :func:`solve_all`, or straight from its dense matrix, :func:`solve_dense`), the
relaxation and the store into the padded output.  The kernels see only the arithmetic
dtype (their scalars and scratch) and addresses, so each is compiled once for each
arithmetic dtype, whatever the input's and the output's dtypes (steps.py says why).  The
weights' scan of dense matrices reads them with the same loader (:func:`scan_dense`).
"""
from __future__ import annotations

import numpy as np
from numba import njit, prange

from ..jit import fractional, greatest, least
from . import steps
from .vectors import lanes


@njit(inline="always")
def _scratch(size, itemsize, lanes_):
    """A thread's scratch for graphs of at most ``size`` vertices, uninitialized (every step
    writes what it reads): ``size`` rows of the widest width and one vector more (the store
    reads whole vectors), and one row; and that width."""
    width_max = max(lanes_, (size + lanes_ - 1) // lanes_ * lanes_)
    return np.empty((size * width_max + lanes_) * itemsize, np.uint8), np.empty(width_max * itemsize, np.uint8), \
        width_max


@njit(parallel=True, cache=True)
def solve_all(load, relax, store, sizes, eptr, src, dst, w, out, size, negative, bounds, clamp, itemsize, chunk,
              lanes_):
    """Distances of every graph into the (B, size, size) output at address ``out``, from the
    edges at addresses ``src``, ``dst``, ``w`` (steps.load_edges: ``w`` unread for hop
    counts), in the arithmetic of the steps (``itemsize`` bytes an entry, ``lanes_`` a
    vector; ``bounds``: the address of steps.bounds); ``negative[g]`` flags a negative cycle."""
    count = sizes.size
    for c in prange((count + chunk - 1) // chunk):
        d, row2, _ = _scratch(size, itemsize, lanes_)
        at, at2 = np.int64(d.ctypes.data), np.int64(row2.ctypes.data)
        for g in range(c * chunk, min(count, (c + 1) * chunk)):
            n = sizes[g]
            nv = (n + lanes_ - 1) // lanes_
            width = nv * lanes_
            load(at, n, width, bounds, src, dst, w, eptr[g], eptr[g + 1])
            relax(at, at2, n, width, nv, bounds, clamp, 0, 0, 0, 0)
            negative[g] = store(at, n, width, out, g * size * size, size, bounds)


@njit(parallel=True, cache=True)
def solve_dense(load, relax, store, addresses, rows, sizes, missing, use_missing, unit, out, size, negative, bad,
                bounds, clamp, itemsize, chunk, lanes_, matrix_itemsize):
    """:func:`solve_all` reading each graph's start matrix straight from its dense matrix
    (steps.load_dense: row i of graph g at ``addresses[g] + i * rows[g]`` entries; the rules
    of convert.dense_scan; ``missing``: the address of the no-edge value; ``unit``: every
    edge weighs 1), one pass over the matrices and no edge list.  ``bad[g]``: the first
    entry (``i * n + j``) of graph g holding NaN or ``-inf``, else -1 (its distances are
    then meaningless: the caller refuses the batch).  The relaxation of a graph asks for the
    next one's rows (``matrix_itemsize`` bytes an entry) in the thread's chunk."""
    count = sizes.size
    for c in prange((count + chunk - 1) // chunk):
        d, row2, _ = _scratch(size, itemsize, lanes_)
        at, at2 = np.int64(d.ctypes.data), np.int64(row2.ctypes.data)
        end = min(count, (c + 1) * chunk)
        for g in range(c * chunk, end):
            n = sizes[g]
            nv = (n + lanes_ - 1) // lanes_
            width = nv * lanes_
            bad[g] = load(at, addresses[g], n, rows[g], width, bounds, missing, use_missing, unit)
            h = min(g + 1, end - 1)                    # the next graph of the chunk (none after the last)
            ahead = addresses[h] if h > g else 0
            relax(at, at2, n, width, nv, bounds, clamp, ahead, sizes[h], rows[h] * matrix_itemsize,
                  sizes[h] * matrix_itemsize)
            negative[g] = store(at, n, width, out, g * size * size, size, bounds)


@njit(parallel=True, cache=True)
def solve_all_pred(load, relax_pred, store, sizes, eptr, src, dst, w, out, pred, size, negative, bounds, clamp,
                   itemsize, chunk, lanes_):
    """:func:`solve_all` with predecessors into the int32 (B, size, size) array at address
    ``pred`` (steps.relax_pred)."""
    count = sizes.size
    for c in prange((count + chunk - 1) // chunk):
        d, row, width_max = _scratch(size, itemsize, lanes_)
        p, prow = np.empty(size * width_max, np.int32), np.empty(width_max, np.int32)
        at, at_row = np.int64(d.ctypes.data), np.int64(row.ctypes.data)
        at_p, at_prow = np.int64(p.ctypes.data), np.int64(prow.ctypes.data)
        for g in range(c * chunk, min(count, (c + 1) * chunk)):
            n = sizes[g]
            width = (n + lanes_ - 1) // lanes_ * lanes_
            load(at, n, width, bounds, src, dst, w, eptr[g], eptr[g + 1])
            relax_pred(at, at_p, at_row, at_prow, n, width, bounds, clamp, pred, g * size * size, size)
            negative[g] = store(at, n, width, out, g * size * size, size, bounds)


#: graphs a thread scans at a time (scan_dense)
SCAN_CHUNK = 64


def scan_dense(load, addresses, rows, sizes, missing, use_missing, top, bottom, counts, bad, low, high, whole):
    """convert.dense_scan's answers (the same arguments, ``missing`` at an address) for
    matrices whose every entry a wide dtype -- ``top``'s: float64, or int64 for integers of
    up to 32 bits -- holds apart from ``top``, its largest value: :func:`scan_wide`, with
    ``load`` the loader (steps.load_dense) of the matrices into that dtype."""
    wide = np.asarray(top).dtype
    marker = steps.bounds(wide, top, top, top, top)        # absent entries load as ``top``
    scan_wide(load, addresses, rows, sizes, missing, use_missing, marker.ctypes.data, top, top, bottom, counts, bad,
              low, high, whole, SCAN_CHUNK, lanes(wide))


@njit(parallel=True, cache=True)
def scan_wide(load, addresses, rows, sizes, missing, use_missing, bounds, marker, top, bottom, counts, bad, low, high,
              whole, chunk, lanes_):
    """Each graph read as the solve reads it (the loader ``load``, whole vectors; ``bounds``:
    its steps.bounds, INF = ``marker``) into a scratch of ``marker``'s dtype, absent entries
    and non-negative self-loops at ``marker``, and its statistics taken over the scratch in
    one long loop, which LLVM vectorizes
    (convert.dense_scan's loops over rows of 1-59 entries ran mostly in their scalar
    remainders: 3.5-5 us a graph of 1-59 vertices in float64 on the 2-core box, one thread,
    against 2.7-3 here, most of it the matrices' bytes coming from memory).  ``lanes_``:
    entries of ``marker``'s dtype in one vector."""
    count = sizes.size
    most = 0
    for g in range(count):
        most = max(most, sizes[g])
    width_max = max(lanes_, (most + lanes_ - 1) // lanes_ * lanes_)
    for c in prange((count + chunk - 1) // chunk):
        d = np.full(most * width_max + lanes_, marker)
        at = np.int64(d.ctypes.data)
        for g in range(c * chunk, min(count, (c + 1) * chunk)):
            n = sizes[g]
            width = (n + lanes_ - 1) // lanes_ * lanes_
            bad[g] = load(at, addresses[g], n, rows[g], width, bounds, missing, use_missing, False)
            for i in range(n):
                if not d[i * width + i] < 0:         # a non-negative self-loop is no edge
                    d[i * width + i] = marker
            kept, fractions = 0, 0
            entries = d[:n * width]
            for e in range(n * width):
                x = entries[e]
                keep = x != marker
                kept += np.int64(keep)
                fractions += np.int64(keep & fractional(x))
            lo, hi = top, bottom
            for e in range(n * width):         # a loop of its own: with the sums, LLVM vectorizes neither
                x = entries[e]
                keep = x != marker
                lo = least(lo, x if keep else top)
                hi = greatest(hi, x if keep else bottom)
            counts[g], low[g], high[g], whole[g] = kept, lo, hi, fractions == 0


@njit(cache=True)
def _graph_of(ptr, vertex):
    """The graph that holds ``vertex``: the last ``g`` with ``ptr[g] <= vertex``."""
    return np.searchsorted(ptr, vertex, side="right") - 1


@njit(parallel=True, cache=True)
def pyg_edges(src, dst, ptr, chunk):
    """One parallel pass over a PyG batch's edges, ``chunk`` edges a thread at a time:
    ``(local source, local target, eptr, code, first bad edge, grouped)``.  Code 1/2: a
    source/target outside the batch, 3: an edge between two graphs (pyg_layout.py words the
    error; the first bad edge in edge order).  ``grouped``: each graph's edges come together
    and in graph order, as PyG stores them; only then is ``eptr`` (B + 1: graph g's edges
    are ``eptr[g] .. eptr[g + 1] - 1``) filled.  A graph is looked up (binary search in
    ``ptr``) only when the source leaves the current one; every edge writes the ``eptr``
    entries of the graphs its predecessor's graph is followed by, so threads write
    disjoint entries."""
    edges = src.size
    count = ptr.size - 1
    nodes = ptr[-1]
    local_src = np.empty(edges, np.int32)
    local_dst = np.empty(edges, np.int32)
    eptr = np.empty(count + 1, np.int64)
    parts = (edges + chunk - 1) // chunk
    codes = np.zeros(parts, np.int64)
    bads = np.zeros(parts, np.int64)
    scattered = np.zeros(parts, np.bool_)
    for c in prange(parts):
        lo = c * chunk
        prev = -1
        if lo > 0 and 0 <= src[lo - 1] < nodes:       # else the chunk before reports it
            prev = _graph_of(ptr, src[lo - 1])
        g = max(prev, 0)
        for e in range(lo, min(edges, lo + chunk)):
            u = src[e]
            v = dst[e]
            if u < 0 or u >= nodes:
                codes[c], bads[c] = 1, e
                break
            if v < 0 or v >= nodes:
                codes[c], bads[c] = 2, e
                break
            if u < ptr[g] or u >= ptr[g + 1]:
                g = _graph_of(ptr, u)
            if v < ptr[g] or v >= ptr[g + 1]:
                codes[c], bads[c] = 3, e
                break
            if g < prev:
                scattered[c] = True
            elif not scattered[c]:
                for h in range(prev + 1, g + 1):
                    eptr[h] = e
                prev = g
            local_src[e] = u - ptr[g]
            local_dst[e] = v - ptr[g]
    for c in range(parts):
        if codes[c]:
            return local_src, local_dst, eptr, codes[c], bads[c], False
    last = _graph_of(ptr, src[edges - 1]) if edges else -1
    for h in range(last + 1, count + 1):
        eptr[h] = edges
    return local_src, local_dst, eptr, 0, -1, not scattered.any()
