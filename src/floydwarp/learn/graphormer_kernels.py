"""Numba kernels of the Graphormer drop-ins (learn/graphormer.py): Floyd-Warshall that
keeps, for every pair, the last pivot that improved it, and the edge inputs read off it.

Graphormer's ``algos.floyd_warshall`` runs the textbook loop (k outer, then i, then j) on
its adjacency matrix with 510 for "no edge" and records ``path[i][j] = k`` whenever ``k``
makes ``d[i][j]`` strictly smaller.  With positive weights the last such ``k`` does not
depend on the order of the updates within a round: it is the smallest ``k`` for which
some shortest path uses only intermediate vertices up to ``k`` (before it the best such
path is longer, from it on none is shorter), or none (-1) when the direct edge is a
shortest path.  So any exact k-outer run that records strict improvements gives the same
matrix; this one runs a row at a time in vectors (batch/vectors.py, ``minplus_row_last``)
in an unsigned dtype with saturating sums:

* distances are clipped at 510 where they are stored, and weights at 510 where they are
  loaded: Graphormer stores every distance of 510 or more as 510 (with path 510), and a
  weight of 510 or more cannot be on a path shorter than that;
* ``p[i][j]`` holds ``k + 1`` (0: no pivot), so uint8 rows take graphs of up to 254
  vertices with unit weights (distances below 254), uint16 rows anything else.

The edge input of a pair is the features of the edges of its path, the path spelled out
as Graphormer's ``get_all_edges`` spells it: ``path(i, j) = path(i, k), k, path(k, j)``
with ``k = p[i][j]``, here without recursion (a stack of right ends, at most n deep).
"""
from __future__ import annotations

import numpy as np
from numba import njit, prange

from ..batch.vectors import minplus_row_last

#: Graphormer's distance (and path entry) for "unreachable"
UNREACHABLE = 510
#: graphs a thread takes at a time
CHUNK = 16


@njit(inline="always")
def _load(d, p, n, width, inf, src, dst, w, lo, hi, cap):
    """The start matrix of one graph: its edges' weights (1 where ``w`` is None, at most
    ``cap``), INF elsewhere, 0 on the diagonal (self-loops change nothing, as in Graphormer)."""
    for e in range(n * width):
        d[e] = inf
        p[e] = 0
    for i in range(n):
        d[i * width + i] = 0
    for e in range(lo, hi):
        u, v = src[e], dst[e]
        if u == v:
            continue
        x = 1 if w is None else min(w[e], cap)
        if x < d[u * width + v]:
            d[u * width + v] = x


@njit(inline="always")
def _pivots(d, p, n, width, nv, inf):
    for k in range(n):
        bk = k * width
        for i in range(n):
            a = d[i * width + k]
            if a != inf:
                minplus_row_last(d, i * width, p, i * width, a, d, bk, nv, k + 1)


@njit(cache=True)
def _relax(d, p, n, width, nv, inf):
    """All n pivots; rows of 1..4 vectors get straight-line code (a literal ``nv``)."""
    if nv == 1:
        _pivots(d, p, n, width, 1, inf)
    elif nv == 2:
        _pivots(d, p, n, width, 2, inf)
    elif nv == 3:
        _pivots(d, p, n, width, 3, inf)
    elif nv == 4:
        _pivots(d, p, n, width, 4, inf)
    else:
        _pivots(d, p, n, width, nv, inf)


@njit(inline="always")
def _pivot(P, stride, off, a, b):
    """Graphormer's path entry of (a, b) in ``P`` (row stride ``stride``; ``off`` = 1 where
    entries hold pivot + 1 with 0 for none, 0 where they hold the pivot or -1)."""
    return np.int64(P[a * stride + b]) - off


@njit(inline="always")
def _graph_paths(g, d, p, sizes, eptr, src, dst, w, inf, lanes_, dist, path, shift, pad, top):
    """Graph g of :func:`paths`, in the scratch rows ``d`` and ``p``."""
    size = dist.shape[1]
    n = sizes[g]
    nv = (n + lanes_ - 1) // lanes_
    width = nv * lanes_
    _load(d, p, n, width, inf, src, dst, w, eptr[g], eptr[g + 1], UNREACHABLE)
    _relax(d, p, n, width, nv, inf)
    with_path = path.size > 0
    most = 0
    for i in range(size):
        for j in range(size):
            if i >= n or j >= n:
                dist[g, i, j] = pad
                if with_path:
                    path[g, i, j] = pad
                continue
            x = d[i * width + j]
            x = UNREACHABLE if x == inf else min(np.int64(x), UNREACHABLE)
            most = max(most, x)
            dist[g, i, j] = x + shift
            if with_path:
                path[g, i, j] = UNREACHABLE if x == UNREACHABLE else _pivot(p, width, 1, i, j)
    top[g] = most


@njit(inline="always")
def _scratch(size, lanes_, inf):
    width_max = max(lanes_, (size + lanes_ - 1) // lanes_ * lanes_)
    return np.empty(size * width_max, type(inf)), np.empty(size * width_max, type(inf))


@njit(parallel=True, cache=True)
def paths(sizes, eptr, src, dst, w, inf, lanes_, dist, path, shift, pad, top):
    """Every graph's Graphormer distances into ``dist`` (B, N, N) and, where ``path`` is not
    empty, its path matrix: ``dist = min(d, 510) + shift``, ``path`` = last pivot, -1 or 510;
    ``pad`` in the padding of both; ``top[g]`` the largest ``min(d, 510)`` of graph g (its
    ``np.amax``; 0 for a graph of no vertex).  ``inf`` (the row dtype's maximum) sets the
    dtype; ``w`` None: every edge weighs 1."""
    count = sizes.size
    for c in prange((count + CHUNK - 1) // CHUNK):
        d, p = _scratch(dist.shape[1], lanes_, inf)
        for g in range(c * CHUNK, min(count, (c + 1) * CHUNK)):
            _graph_paths(g, d, p, sizes, eptr, src, dst, w, inf, lanes_, dist, path, shift, pad, top)


@njit(cache=True)
def paths_serial(sizes, eptr, src, dst, w, inf, lanes_, dist, path, shift, pad, top):
    """:func:`paths` on one thread: a graph or two, where waking the pool costs more."""
    d, p = _scratch(dist.shape[1], lanes_, inf)
    for g in range(sizes.size):
        _graph_paths(g, d, p, sizes, eptr, src, dst, w, inf, lanes_, dist, path, shift, pad, top)


@njit(inline="always")
def _spell(P, stride, off, i, j, stack, edges_a, edges_b, limit):
    """The first ``limit`` edges (a, b) of the path i -> j spelled by the pivots in ``P``
    (:func:`_pivot`) into ``edges_a``/``edges_b``: ``(edges written, more left)``, or
    (-1, False) when the pivots spell no path (a pivot out of range, a stack deeper than
    ``stack``'s n entries, or more than n - 1 edges)."""
    a, b, top, t = np.int64(i), np.int64(j), 0, 0        # a prange index is unsigned: no float mix
    n = stack.size
    while True:
        k = _pivot(P, stride, off, a, b)
        while k != -1:
            if k < 0 or k >= n or top == n:
                return -1, False
            stack[top] = b
            top += 1
            b = k
            k = _pivot(P, stride, off, a, b)
        if t == limit:
            return t, True
        if t == n:                          # a path has at most n - 1 edges: these go round
            return -1, False
        edges_a[t], edges_b[t] = a, b
        t += 1
        if top == 0:
            return t, False
        top -= 1
        a, b = b, stack[top]


@njit(inline="always")
def _edge_input_row(i, flat, feat, out, bad):
    n = feat.shape[0]
    limit = out.shape[2]
    stack = np.empty(n, np.int64)
    ea = np.empty(limit, np.int64)
    eb = np.empty(limit, np.int64)
    bad[i] = -1
    for j in range(n):
        if i == j or flat[i * n + j] == UNREACHABLE:
            continue
        t, more = _spell(flat, n, 0, i, j, stack, ea, eb, limit)
        if t < 0 or more:
            bad[i] = 2 * j + (0 if t < 0 else 1)
            return
        for s in range(t):
            out[i, j, s, :] = feat[ea[s], eb[s], :]


@njit(cache=True)
def edge_input(path, feat, out, bad):
    """Graphormer's ``gen_edge_input`` of one graph: ``out`` (n, n, D, F), filled with -1
    by the caller, gets ``feat[a, b, :]`` of the t-th edge (a, b) of every path i -> j
    (i != j, ``path[i, j] != 510``).  ``bad[i]``: the first j of row i whose path has more
    than D edges (2 j + 1) or whose pivots spell none (2 j), else -1.  One thread: a call
    is one graph (see :func:`edge_inputs` for a batch)."""
    n = path.shape[0]
    flat = path.reshape(n * n)
    for i in range(n):
        _edge_input_row(i, flat, feat, out, bad)


@njit(parallel=True, cache=True)
def edge_inputs(sizes, path, eptr, src, dst, ids, feat, shift, out):
    """Graphormer's collated ``edge_input`` of a batch: ``out`` (B, N, N, D, F), filled with
    ``shift - 1`` by the caller, gets ``feat[ids[e]] + shift`` for the t-th edge e of each
    path i -> j (``path`` as :func:`paths` writes it; pairs at 510 have none), t < D: the
    collator's cut at ``multi_hop_max_dist``.  Of parallel edges the last listed gives the
    features, as Graphormer's ``attn_edge_type`` is written edge by edge."""
    count = sizes.size
    size = path.shape[1]
    limit, width = out.shape[3], out.shape[4]
    flat = out.reshape(out.size)
    pair = limit * width                        # entries of one (g, i, j)
    for c in prange((count + CHUNK - 1) // CHUNK):
        emap = np.empty(size * size, np.int64)
        stack = np.empty(size, np.int64)
        ea = np.empty(limit, np.int64)
        eb = np.empty(limit, np.int64)
        for g in range(c * CHUNK, min(count, (c + 1) * CHUNK)):
            n = sizes[g]
            if limit == 0 or n < 2:
                continue
            for e in range(eptr[g], eptr[g + 1]):
                emap[src[e] * n + dst[e]] = ids[e]
            pg = path[g].reshape(size * size)
            own = stack[:n]
            for i in range(n):
                for j in range(n):
                    if i == j or pg[i * size + j] == UNREACHABLE:
                        continue
                    t, _ = _spell(pg, size, 0, i, j, own, ea, eb, limit)
                    at = ((g * size + i) * size + j) * pair
                    for s in range(t):
                        row = emap[ea[s] * n + eb[s]]
                        for f in range(width):
                            flat[at + s * width + f] = feat[row, f] + shift


@njit(parallel=True, cache=True)
def attn_bias(sizes, spatial, spatial_pos_max, out):
    """Graphormer's collated ``attn_bias`` (B, N + 1, N + 1): row and column 0 are the graph
    token; 0 where both ends are real (or the row is padding and the column real), -inf
    where the distance (``spatial - 1``) reaches ``spatial_pos_max`` and on padding columns."""
    size = spatial.shape[1]
    for g in prange(sizes.size):
        n = sizes[g]
        for i in range(size + 1):
            for j in range(size + 1):
                far = 0 < i <= n and 0 < j <= n and spatial[g, i - 1, j - 1] - 1 >= spatial_pos_max
                out[g, i, j] = -np.inf if j > n or far else 0.0
