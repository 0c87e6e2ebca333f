"""Shortest paths as edge IDs (the DGL drop-in's ``paths``, the PyG transform's), read off
the predecessor matrices of a batch (SciPy's convention: ``pred[i, j]`` is the vertex before
j on the path from i, negative for none), in one parallel Numba pass."""
from __future__ import annotations

import numpy as np
from numba import njit, prange


@njit(parallel=True, cache=True)
def edge_paths(sizes, eptr, src, dst, ids, pred, out):
    """``out[g, i, j, t]`` (filled with -1 by the caller, L = ``out.shape[3]``): the edge ID
    (``ids[e] - ids[eptr[g]]``: the graph's own numbering, its edges being consecutive) of
    the t-th edge of graph g's path i -> j, for t < L; of parallel edges the smallest ID."""
    count = sizes.size
    for g in prange(count):
        n = sizes[g]
        lo, hi = eptr[g], eptr[g + 1]
        first = ids[lo] if hi > lo else 0
        emap = np.full(n * n, -1, np.int64)
        for e in range(lo, hi):
            at = src[e] * n + dst[e]
            local = ids[e] - first
            if emap[at] < 0 or local < emap[at]:
                emap[at] = local
        for i in range(n):
            for j in range(n):
                if i == j or pred[g, i, j] < 0:
                    continue
                hops = 0                           # the path's length: walk back once to count
                v = j
                while v != i:
                    v = pred[g, i, v]
                    hops += 1
                v = j
                t = hops - 1
                while v != i:
                    u = pred[g, i, v]
                    if t < out.shape[3]:
                        out[g, i, j, t] = emap[u * n + v]
                    v = u
                    t -= 1
