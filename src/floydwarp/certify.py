"""A check of a distance matrix that shares nothing with Floyd-Warshall: Bellman's equations.

For a graph whose cycles all have positive weight, D is its shortest-path matrix exactly when

* ``D[i, i] == 0`` for every i, and
* ``D[i, j] == min over edges (u -> j) of D[i, u] + w(u, j)`` for every j != i, with
  ``D[i, j] == INF`` where j has no in-edge or no candidate is finite.

(Any D meeting these is the unique solution of the Bellman equations; with zero- or
negative-weight cycles they still hold for the true distances but no longer pin them
down, and the report says so.)  The check costs O(n m) -- one pass over the matrix
and the edges -- so it verifies runs too large for a second APSP solver, row blocks
at a time, on the GPU when the matrix lives there or fits there in blocks.

>>> import numpy as np, floydwarp as fw
>>> g = fw.Graph.from_edges([0, 1, 2], [1, 2, 0], [3, 4, 5], n=3)
>>> r = fw.solve(g)
>>> certify(g, r.dist, inf=r.inf).ok
True
>>> bad = r.dist.copy(); bad[0, 2] += 1
>>> certify(g, bad, inf=r.inf).mismatches
1
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .arrays import array_module, to_host

#: candidate sums held at once per block (rows x edges), bounding the block's memory
BLOCK_CANDIDATES = 1 << 27


@dataclass(frozen=True)
class Certificate:
    ok: bool
    #: entries that break an equation
    mismatches: int
    #: whether the equations determine D (every cycle has positive weight: all weights > 0)
    unique: bool
    #: the first broken entry (row, column), if any
    first: tuple | None = None


def certify(graph, dist, *, inf=None, on_gpu: bool | None = None) -> Certificate:
    """Check ``dist`` (n x n: NumPy, memory-mapped or CuPy; ``inf`` marks unreachable,
    default ``np.inf``) against Bellman's equations of ``graph``; see the module docstring.

    ``on_gpu`` (default: where ``dist`` lives) checks host matrices on the GPU, a block of
    rows at a time."""
    n = graph.n
    src, dst, w = graph.edges()
    wide = np.float64 if np.dtype(dist.dtype).kind == "f" or np.asarray(w).dtype.kind == "f" else np.int64
    inf = np.inf if inf is None else inf
    on_gpu = array_module(dist).__name__ == "cupy" if on_gpu is None else on_gpu
    if on_gpu:
        import cupy as xp
    else:
        xp = np
    order = np.argsort(dst, kind="stable")
    src, dst = xp.asarray(np.asarray(src)[order]), np.asarray(dst)[order]
    w = xp.asarray(np.asarray(w)[order].astype(wide))
    starts = np.flatnonzero(np.r_[True, dst[1:] != dst[:-1]]) if len(dst) else np.zeros(0, np.int64)
    targets = xp.asarray(dst[starts]) if xp is np else xp.asarray(dst)
    block_rows = max(1, min(n, BLOCK_CANDIDATES // max(len(dst), 1)))
    mismatches, first = 0, None
    for lo in range(0, n, block_rows):
        hi = min(n, lo + block_rows)
        have = xp.asarray(dist[lo:hi]).astype(wide)
        want = _bellman(have, lo, src, targets, starts, w, inf, xp)
        bad = xp.where(have >= inf, inf, have) != want
        count = int(bad.sum())
        if count and first is None:
            r, c = np.argwhere(to_host(bad))[0]
            first = (lo + int(r), int(c))
        mismatches += count
    unique = bool(len(dst) == 0 or to_host(w).min() > 0)
    return Certificate(mismatches == 0, mismatches, unique, first)


def _bellman(d, lo, src, targets, starts, w, inf, xp):
    """Right-hand sides of Bellman's equations for rows lo.. (block ``d``): the best
    in-edge candidate per column, INF where none is finite, 0 on the diagonal."""
    rows, n = d.shape
    big = xp.asarray(np.inf if d.dtype.kind == "f" else np.iinfo(np.int64).max, dtype=d.dtype)
    best = xp.full((rows, n), big, dtype=d.dtype)
    if len(src):
        via = d[:, src]
        cand = xp.where(via >= inf, big, via + w[None, :])
        if xp is np:      # edges sorted by destination: one minimum per run of equal destinations
            best[:, targets] = np.minimum.reduceat(cand, starts, axis=1)
        else:
            import cupyx

            cupyx.scatter_min(best, (slice(None), targets), cand)
    best = xp.where(best >= inf, inf, best)
    idx = xp.arange(rows)
    best[idx, lo + idx] = 0
    return best
