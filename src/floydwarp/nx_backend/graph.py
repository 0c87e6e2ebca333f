"""What every function of the backend shares: the graph wrapper, reading a NetworkX graph's
edges the way NetworkX's own algorithms weigh them, one floydwarp solve, and rows of the
distance matrix turned into NetworkX's dicts."""
from __future__ import annotations

import logging
from dataclasses import dataclass
from itertools import chain

import numpy as np

_log = logging.getLogger(__name__)

#: floydwarp backend used for the computation (``auto``: the GPU when there is one).
SOLVER_BACKEND = "auto"


class FloydwarpGraph:
    """A NetworkX graph handed to floydwarp (what ``convert_from_nx`` returns).

    It keeps the NetworkX graph itself (the weights are read when an algorithm runs, for the
    ``weight`` it is given) and answers every other attribute from it, so NetworkX's test
    harness can compare it with a NetworkX graph.
    """

    __networkx_backend__ = "floydwarp"

    def __init__(self, G):
        self.G = G

    def __getattr__(self, name):
        return getattr(self.G, name)

    def __len__(self):
        return len(self.G)

    def __iter__(self):
        return iter(self.G)

    def __contains__(self, node):
        return node in self.G

    def __repr__(self):
        return f"FloydwarpGraph({self.G!r})"


def nx_graph(G):
    return G.G if isinstance(G, FloydwarpGraph) else G


class Fallback(Exception):
    """Internal: this call is NetworkX's to answer (the message says why, in the debug log)."""

    def __init__(self, reason: str):
        super().__init__(reason)
        _log.debug("floydwarp hands the call to NetworkX: %s", reason)


def fallback(name, G, *args, **kwargs):
    """Run NetworkX's own implementation of ``name``."""
    import networkx as nx

    return getattr(nx, name)(G, *args, backend="networkx", **kwargs)


# ---------------------------------------------------------------------- edges
@dataclass
class Edges:
    nodes: list
    src: np.ndarray
    dst: np.ndarray
    weights: np.ndarray
    #: edges a weight of None hid (Dijkstra skips them; NetworkX's connectivity checks do not)
    hidden: int = 0

    @property
    def integral(self) -> bool:
        """Integer weights: NetworkX's sums of them are Python ints."""
        return self.weights.dtype.kind in "iu"


def as_numbers(values) -> np.ndarray:
    weights = np.asarray(values) if len(values) else np.zeros(0, dtype=np.int64)
    if weights.dtype.kind not in "iuf" or weights.dtype == np.float16:
        raise Fallback("weights are not plain numbers")
    if weights.dtype.kind == "f" and not np.all(np.isfinite(weights)):
        raise Fallback("non-finite weights")
    return weights


def _indexer(nodes):
    """Node -> index, or None when the nodes are already 0..n-1 in order (no lookups needed)."""
    if all(type(v) is int for v in nodes) and nodes == list(range(len(nodes))):
        return None
    return {v: i for i, v in enumerate(nodes)}


def search_edges(G, weight, *, negative: bool = False, unit: bool = False) -> Edges:
    """G's directed edges as NetworkX's searches see them.

    ``unit``: every edge weighs 1 (breadth-first search).  Otherwise ``weight`` is read as
    NetworkX's ``_weight_function`` reads it: a callable ``weight(u, v, data)`` (``data`` the
    key dict of a multigraph) asked once per direction, an attribute name with 1 for a
    missing attribute (the lightest of parallel edges), ``None`` for 1.

    Without ``negative`` (Dijkstra, breadth-first search) a weight of ``None`` hides the edge,
    and a negative weight is NetworkX's to handle (its Dijkstra raises or returns what its
    visiting order leaves).  With ``negative`` (Bellman-Ford) negative weights are fine and a
    weight of ``None`` is NetworkX's (it fails adding it).
    """
    nodes = list(G)
    index = _indexer(nodes)
    adj = G._adj
    if unit or weight is None:
        # one C-level pass over the adjacency: the hot path of the unweighted functions
        heads = chain.from_iterable(adj.values())
        dst = np.fromiter(heads if index is None else map(index.__getitem__, heads), dtype=np.int64)
        degrees = np.fromiter(map(len, adj.values()), dtype=np.int64, count=len(nodes))
        src = np.repeat(np.arange(len(nodes), dtype=np.int64), degrees)
        return Edges(nodes, src, dst, np.ones(dst.size, dtype=np.int64))
    if callable(weight):
        triples = ((u, v, weight(u, v, e)) for u, nbrs in adj.items() for v, e in nbrs.items())
    elif G.is_multigraph():
        triples = ((u, v, min(d.get(weight, 1) for d in keys.values()))
                   for u, nbrs in adj.items() for v, keys in nbrs.items())
    else:
        triples = ((u, v, d.get(weight, 1)) for u, nbrs in adj.items() for v, d in nbrs.items())
    src, dst, w = [], [], []
    hidden = 0
    for u, v, wt in triples:
        if wt is None:
            if negative:
                raise Fallback("an edge weighs None")
            hidden += 1
            continue
        src.append(u)
        dst.append(v)
        w.append(wt)
    weights = as_numbers(w)
    if not negative and weights.size and weights.min() < 0:
        raise Fallback("negative weights")
    if index is not None:
        src = [index[u] for u in src]
        dst = [index[v] for v in dst]
    return Edges(nodes, np.asarray(src, dtype=np.int64), np.asarray(dst, dtype=np.int64), weights, hidden)


# ---------------------------------------------------------------------- solving
def solve_edges(edges: Edges, *, predecessors=False, labels=False):
    """floydwarp's APSP of the edges (on the solver's device); Fallback where floydwarp refuses."""
    from ..errors import FloydwarpError
    from ..graph import Graph
    from ..solve import solve

    try:
        graph = Graph.from_edges(edges.src, edges.dst, edges.weights, n=len(edges.nodes),
                                 labels=edges.nodes if labels else None)
        return solve(graph, backend=SOLVER_BACKEND, predecessors=predecessors)
    except FloydwarpError as exc:
        raise Fallback(str(exc)) from None


def search(G, weight, *, negative=False, unit=False, predecessors=False, labels=False):
    """``(edges, result)``: the APSP NetworkX's searches compute one source at a time
    (:func:`search_edges` says how the edges are read)."""
    edges = search_edges(G, weight, negative=negative, unit=unit)
    return edges, solve_edges(edges, predecessors=predecessors, labels=labels)


# ---------------------------------------------------------------------- rows as dicts
def python_values(row, integral: bool) -> list:
    """A host row as Python numbers: ints for integer weights (exact sums of int64 distances
    come as Python ints already), floats otherwise."""
    if row.dtype == object or (integral and row.dtype.kind == "i"):
        return row.tolist()
    return row.astype(np.float64).tolist()


def row_dict(row, i, nodes, integral, keep) -> dict:
    """``{target: distance}`` of source ``i`` over the targets ``keep`` selects, nearest first
    (the order NetworkX's searches find them in, up to ties); the source maps to int 0 as in
    NetworkX's searches."""
    targets = np.flatnonzero(keep)
    targets = targets[np.argsort(row[targets], kind="stable")]
    values = python_values(row[targets], integral)
    out = dict(zip(map(nodes.__getitem__, targets.tolist()), values))
    out[nodes[i]] = 0
    return out
