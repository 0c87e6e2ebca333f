"""Negative cycles: which vertices lie on them and which pairs they make unbounded.

Floyd-Warshall marks a vertex on a negative simple cycle with a negative
diagonal entry, but which *other* vertices also end negative depends on the
order of the updates, so it differs between algorithms.  The answer given
here does not: a vertex is on a negative cycle when its strongly connected
component contains a vertex with a negative diagonal (every vertex of such a
component lies on a negative closed walk), and a pair (u, v) has no shortest
path when u reaches such a component and the component reaches v.  Both are
read off the graph's structure, so they are exact whatever the dtype.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class NegativeCycles:
    #: vertices of strongly connected components that contain a negative cycle
    vertices: np.ndarray
    #: reach_to[c, u]: u reaches component c; reach_from[c, v]: component c reaches v
    reach_to: np.ndarray
    reach_from: np.ndarray

    @classmethod
    def from_graph(cls, graph, negative_diagonal) -> "NegativeCycles":
        from scipy.sparse.csgraph import breadth_first_order, connected_components

        adj = graph.adjacency()
        _, comp = connected_components(adj, directed=True, connection="strong")
        bad = np.unique(comp[np.asarray(negative_diagonal)])
        vertices = np.flatnonzero(np.isin(comp, bad))
        reach_to = np.zeros((bad.size, graph.n), dtype=bool)
        reach_from = np.zeros((bad.size, graph.n), dtype=bool)
        rev = adj.T.tocsr()
        for c, component in enumerate(bad):
            start = int(np.flatnonzero(comp == component)[0])
            reach_from[c, breadth_first_order(adj, start, return_predecessors=False)] = True
            reach_to[c, breadth_first_order(rev, start, return_predecessors=False)] = True
        return cls(vertices, reach_to, reach_from)

    @classmethod
    def none(cls, n) -> "NegativeCycles":
        return _no_cycles(cls, n)

    def __bool__(self):
        return self.vertices.size > 0

    def affects(self, u: int, v: int) -> bool:
        """True when a negative cycle lies on some walk from u to v."""
        return bool(np.any(self.reach_to[:, u] & self.reach_from[:, v]))


@functools.lru_cache(maxsize=64)
def _no_cycles(cls, n) -> NegativeCycles:
    """"No negative cycle" on n vertices: empty arrays, immutable, shared by every result."""
    arrays = np.zeros(0, dtype=np.int64), np.zeros((0, n), bool), np.zeros((0, n), bool)
    for a in arrays:
        a.flags.writeable = False
    return cls(*arrays)
