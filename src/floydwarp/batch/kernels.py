"""Numba kernels of the batched CPU engine: one ``prange`` over graphs, each graph's
matrix small enough to stay in the core's L1 cache while Floyd-Warshall runs on it.

Every graph is solved in a scratch matrix whose rows are padded to a whole number of
64-byte vectors (``lanes(dtype)`` entries): the ``j`` loop then runs over full vectors
with no scalar remainder.  The padding columns start at INF and only ever receive
candidates through padding columns of row k, so they never reach a real entry (``k``
runs over the graph's own vertices only).  Row ``k`` is copied to its own buffer each
round so the vectorizer sees two arrays that cannot alias.

Arithmetic follows numeric.py: sums are narrowed to the matrix dtype (INF = max // 2
makes every sum of two entries representable), a candidate wins only when strictly
smaller (NaN never does), and with ``clamp`` every new entry is kept at or above
``-INF``.  A pair whose ``d[i, k]`` is INF (exactly: no path yet) is skipped: no path
runs through k from i, and the entry it would lower is an unreachable one.
"""
from __future__ import annotations

import numpy as np
from numba import njit, prange

from ..cpu.kernels import narrow

#: bytes of the widest vector register the rows are padded for (AVX-512)
VECTOR_BYTES = 32


def lanes(dtype) -> int:
    return max(1, VECTOR_BYTES // np.dtype(dtype).itemsize)


@njit(cache=True)
def _load(d, n, width, inf, src, dst, w, lo, hi):
    """d[:n, :width] = the start matrix of one graph from its edges src/dst/w[lo:hi]."""
    for i in range(n):
        for j in range(width):
            d[i, j] = inf
        d[i, i] = 0
    for e in range(lo, hi):
        i = src[e]
        j = dst[e]
        x = w[e]
        if x < d[i, j]:
            d[i, j] = x


@njit(cache=True)
def _relax(d, row, row2, n, width, inf, lo, clamp):
    """Floyd-Warshall on d[:n, :width], two pivots (k, k + 1) per pass over the matrix:
    row k + 1 and each d[i, k + 1] first take their step-k values, then every row takes
    both steps at once -- the textbook recurrence, half the loads and stores."""
    for k in range(0, n - 1, 2):
        k1 = k + 1
        b = d[k1, k]
        for j in range(width):
            x = narrow(b + d[k, j], d)
            if clamp:
                x = x if x > lo else lo
            y = d[k1, j]
            row[j] = d[k, j]
            row2[j] = x if x < y else y
        dkk1 = row[k1]
        for i in range(n):
            a = d[i, k]
            a2 = d[i, k1]
            x = narrow(a + dkk1, d)
            a2 = x if x < a2 else a2
            if clamp:
                a2 = a2 if a2 > lo else lo
            if a == inf:
                if a2 == inf:
                    continue
                _step(d, i, a2, row2, width, lo, clamp)
            elif a2 == inf:
                _step(d, i, a, row, width, lo, clamp)
            else:
                for j in range(width):
                    x = narrow(a + row[j], d)
                    y = narrow(a2 + row2[j], d)
                    x = x if x < y else y
                    if clamp:
                        x = x if x > lo else lo
                    d[i, j] = x if x < d[i, j] else d[i, j]
    if n % 2:
        k = n - 1
        for j in range(width):
            row[j] = d[k, j]
        for i in range(n):
            a = d[i, k]
            if a != inf:
                _step(d, i, a, row, width, lo, clamp)


@njit(cache=True)
def _step(d, i, a, row, width, lo, clamp):
    """d[i, :width] = min(d[i, :width], a + row) (clamped at lo)."""
    for j in range(width):
        x = narrow(a + row[j], d)
        if clamp:
            x = x if x > lo else lo
        d[i, j] = x if x < d[i, j] else d[i, j]


@njit(cache=True)
def _relax_pred(d, p, row, prow, n, width, inf, lo, clamp):
    for k in range(n):
        for j in range(width):
            row[j] = d[k, j]
            prow[j] = p[k, j]
        for i in range(n):
            a = d[i, k]
            if a == inf:
                continue
            for j in range(width):
                x = narrow(a + row[j], d)
                if clamp and x < lo:
                    x = lo
                if x < d[i, j]:
                    d[i, j] = x
                    p[i, j] = prow[j]


@njit(cache=True)
def _store(d, n, out, g, threshold, out_inf, clip, max_distance):
    """out[g] = d[:n, :n] with unreachable entries at out_inf and, with ``clip``, reachable
    distances above max_distance cut to it; padding rows and columns at out_inf.
    Returns whether a diagonal entry is negative (a negative cycle).  Branch-free selects,
    so the loops vectorize."""
    size = out.shape[1]
    top = max_distance if clip else threshold
    negative = False
    for i in range(n):
        o = out[g, i]
        for j in range(n):
            v = d[i, j]
            c = v if v < top else top
            o[j] = out_inf if v >= threshold else c
        for j in range(n, size):
            o[j] = out_inf
        negative = negative or d[i, i] < 0
    for i in range(n, size):
        o = out[g, i]
        for j in range(size):
            o[j] = out_inf
    return negative


@njit(cache=True)
def _store_pred(p, n, d, threshold, pred, g, none):
    size = pred.shape[1]
    for i in range(n):
        for j in range(n):
            pred[g, i, j] = p[i, j] if d[i, j] < threshold else none
        for j in range(n, size):
            pred[g, i, j] = none
    for i in range(n, size):
        for j in range(size):
            pred[g, i, j] = none


@njit(parallel=True, cache=True)
def solve_all(sizes, eptr, src, dst, w, out, negative, inf, lo, clamp, threshold, out_inf, clip,
              max_distance, width_max, chunk, lanes_):
    """Distances of every graph into ``out`` (B, N, N); ``negative[g]`` flags a negative cycle."""
    count = sizes.size
    size = out.shape[1]
    for c in prange((count + chunk - 1) // chunk):
        d = np.empty((size, width_max), w.dtype)
        row = np.empty(width_max, w.dtype)
        row2 = np.empty(width_max, w.dtype)
        for g in range(c * chunk, min(count, (c + 1) * chunk)):
            n = sizes[g]
            width = (n + lanes_ - 1) // lanes_ * lanes_
            _load(d, n, width, inf, src, dst, w, eptr[g], eptr[g + 1])
            _relax(d, row, row2, n, width, inf, lo, clamp)
            negative[g] = _store(d, n, out, g, threshold, out_inf, clip, max_distance)


@njit(parallel=True, cache=True)
def solve_all_pred(sizes, eptr, src, dst, w, out, pred, negative, inf, lo, clamp, threshold, out_inf, clip,
                   max_distance, width_max, chunk, lanes_, none):
    """:func:`solve_all` with predecessors (SciPy's convention, ``none`` where there is none)."""
    count = sizes.size
    size = out.shape[1]
    for c in prange((count + chunk - 1) // chunk):
        d = np.empty((size, width_max), w.dtype)
        p = np.empty((size, width_max), np.int32)
        row = np.empty(width_max, w.dtype)
        prow = np.empty(width_max, np.int32)
        for g in range(c * chunk, min(count, (c + 1) * chunk)):
            n = sizes[g]
            width = (n + lanes_ - 1) // lanes_ * lanes_
            _load(d, n, width, inf, src, dst, w, eptr[g], eptr[g + 1])
            for i in range(n):
                for j in range(width):
                    p[i, j] = i if d[i, j] < inf and i != j else none
            _relax_pred(d, p, row, prow, n, width, inf, lo, clamp)
            _store_pred(p, n, d, threshold, pred, g, none)
            negative[g] = _store(d, n, out, g, threshold, out_inf, clip, max_distance)


@njit(cache=True)
def pyg_edges(src, dst, ptr):
    """One pass over a PyG batch's edges: ``(local source, local target, graph of each edge,
    code, first bad edge)``, code 1/2 for a source/target outside the batch, 3 for an edge
    between two graphs (graphs.py words the error).  Edges usually come grouped by graph,
    so the graph is looked up (binary search in ``ptr``) only when the source leaves it."""
    count = src.size
    nodes = ptr[-1]
    local_src = np.empty(count, np.int32)
    local_dst = np.empty(count, np.int32)
    graph = np.empty(count, np.int64)
    g = 0
    for e in range(count):
        u = src[e]
        v = dst[e]
        if u < 0 or u >= nodes:
            return local_src, local_dst, graph, 1, e
        if v < 0 or v >= nodes:
            return local_src, local_dst, graph, 2, e
        if u < ptr[g] or u >= ptr[g + 1]:
            g = np.searchsorted(ptr, u, side="right") - 1
        if v < ptr[g] or v >= ptr[g + 1]:
            return local_src, local_dst, graph, 3, e
        local_src[e] = u - ptr[g]
        local_dst[e] = v - ptr[g]
        graph[e] = g
    return local_src, local_dst, graph, 0, -1
