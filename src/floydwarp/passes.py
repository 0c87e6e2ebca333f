"""Numba passes over whole host matrices that the base layer runs.

* :func:`to_float_rows`: the host casts of :func:`floydwarp.casts.cast_distances` that one
  pass does where NumPy makes three (a mask, a cast, a masked copy): distances to a float
  type, unreachable entries to its sentinel -- 0.6 us instead of 2.4 us for the 8 x 8 result
  of a SciPy-style call, and one pass over the rows of a large one, on every core (team.py);
* :func:`pred_rows_with_cycles`: the predecessor loop check of
  :func:`floydwarp.predecessors.has_loops` (and of the mpi ranks' bands of rows).

Imported only when such a pass runs (it imports Numba).
"""
from __future__ import annotations

import numpy as np
from numba import njit, prange

from .jit import PRANGE_ONLY


@njit(cache=True, nogil=True)
def to_float_rows(dist, inf, sentinel, out, first, stop):
    """Rows ``first .. stop - 1`` of ``out``: ``dist`` cast to ``out``'s float type (rounded to
    nearest, as NumPy's cast), ``sentinel`` where ``dist >= inf`` (NaN stays NaN)."""
    for i in range(first, stop):
        for j in range(dist.shape[1]):
            x = dist[i, j]
            out[i, j] = sentinel if x >= inf else x


# --------------------------------------------------------------------------- predecessor check
@njit(cache=True, parallel=PRANGE_ONLY)
def pred_rows_with_cycles(p, first=0):
    """Rows i whose predecessors do not lead every reachable j back to i.

    O(n^2): each vertex of a row is walked once.  The blocked schedule can
    close a predecessor loop around a zero-weight cycle (unlike the k-outer
    order of ``rows``/``serial``, where a strict improvement through k never
    revisits a vertex); the engine checks and falls back when this finds one.
    """
    n = p.shape[1]
    bad = np.zeros(p.shape[0], np.bool_)
    for i in prange(p.shape[0]):
        src = first + i
        mark = np.zeros(n, np.int32)          # 0 unseen, -1 leads to i, w > 0 on walk w
        for j in range(n):
            if j == src or p[i, j] < 0 or mark[j] == -1:
                continue
            walk_id = j + 1
            v = j
            ok = True
            while v != src and mark[v] != -1:
                if mark[v] == walk_id:
                    ok = False
                    break
                mark[v] = walk_id
                v = p[i, v]
                if v < 0:
                    ok = False
                    break
            if not ok:
                bad[i] = True
                break
            v = j
            while v != src and mark[v] == walk_id:
                mark[v] = -1
                v = p[i, v]
    return bad
