"""Predecessor matrices: SciPy's convention, shared by every engine and by routes.

``pred[i, j]`` is the vertex before ``j`` on a shortest path from ``i``, or
:data:`NO_PREDECESSOR` (-9999) when there is none (``i == j`` or unreachable).
"""
from __future__ import annotations

import numpy as np

from .arrays import array_module, to_host

NO_PREDECESSOR = -9999


def initial_predecessors(matrix, inf):
    """``pred[i, j] = i`` for every edge ``i -> j`` (i != j), else NO_PREDECESSOR."""
    xp = array_module(matrix)
    n = matrix.shape[0]
    rows = xp.broadcast_to(xp.arange(n, dtype=xp.int32)[:, None], (n, n))
    pred = xp.where(matrix < inf, rows, xp.int32(NO_PREDECESSOR)).astype(xp.int32)
    idx = xp.arange(n)
    pred[idx, idx] = NO_PREDECESSOR
    return pred


def walk(pred_row, source, target, n):
    """Vertices of the path source -> target read backwards from one predecessor row.

    Raises ValueError when the row does not lead back to the source within n
    steps (an inconsistent matrix, e.g. one touched by a negative cycle).
    """
    path = [target]
    v = target
    for _ in range(n):
        if v == source:
            return path[::-1]
        v = int(pred_row[v])
        if v == NO_PREDECESSOR:
            break
        path.append(v)
    if v == source:
        return path[::-1]
    raise ValueError(f"predecessors do not lead from {target} back to {source}")


def has_loops(pred) -> bool:
    """True when some row's predecessors do not lead every reachable vertex back to its source.

    Blocked Floyd-Warshall can close such a loop around a zero-weight cycle (the
    textbook k-outer order cannot); ``solve()`` then recomputes in k order.
    """
    from .passes import pred_rows_with_cycles   # Numba, imported only when needed

    return bool(pred_rows_with_cycles(np.ascontiguousarray(to_host(pred))).any())
