"""Reading a NetworkX graph's edges into arrays, weighed the way each NetworkX algorithm
weighs them, and keeping what was read with the converted graph.

The adjacency is walked at C level (``itertools.chain`` over ``G._adj``, ``np.fromiter``);
only the weights, which are Python objects under any attribute name, go through one list
comprehension.  (``nx.to_scipy_sparse_array`` is 7-12x slower here: it walks
``G.edges(data=...)`` and maps nodes in Python.)

NetworkX keeps a backend's converted graph (:class:`~.graph.FloydwarpGraph`) in
``G.__networkx_cache__`` and drops it when G changes through its methods; the arrays read
from G live on that converted graph, so a second call on the same graph skips the reading
and the building of floydwarp's graph.  As for every cached conversion, changing an edge's
data dict by hand (``G[u][v]["weight"] = 5``) needs ``G.__networkx_cache__.clear()``.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from itertools import chain

import numpy as np

from . import stages
from .graph import Fallback, FloydwarpGraph, nx_graph, solve_edges


@dataclass
class Edges:
    nodes: list
    src: np.ndarray
    dst: np.ndarray
    weights: np.ndarray
    #: edges a weight of None hid (Dijkstra skips them; NetworkX's connectivity checks do not)
    hidden: int = 0
    #: floydwarp's graph of these edges, by whether it carries the nodes as labels
    graphs: dict = field(default_factory=dict, repr=False, compare=False)

    @property
    def integral(self) -> bool:
        """Integer weights: NetworkX's sums of them are Python ints."""
        return self.weights.dtype.kind in "iu"

    def solver_graph(self, labels: bool = False):
        """floydwarp's :class:`~floydwarp.Graph` of the edges, built once per Edges."""
        from ..graph import Graph

        if labels not in self.graphs:
            self.graphs[labels] = Graph.from_edges(self.src, self.dst, self.weights, n=len(self.nodes),
                                                   labels=self.nodes if labels else None)
        return self.graphs[labels]

    def turned_around(self) -> "Edges":
        return Edges(self.nodes, self.dst, self.src, self.weights, self.hidden)


def as_numbers(values) -> np.ndarray:
    try:
        weights = np.asarray(values) if len(values) else np.zeros(0, dtype=np.int64)
    except (TypeError, ValueError):          # ragged sequences as weights
        raise Fallback("weights are not plain numbers") from None
    if weights.ndim != 1 or weights.dtype.kind not in "iuf" or weights.dtype == np.float16:
        raise Fallback("weights are not plain numbers")
    if weights.dtype.kind == "f" and not np.all(np.isfinite(weights)):
        raise Fallback("non-finite weights")
    return weights


def _indexer(nodes):
    """Node -> index, or None when the nodes are 0..n-1 in order (each node is its index)."""
    if all(type(v) is int for v in nodes) and nodes == list(range(len(nodes))):
        return None
    return {v: i for i, v in enumerate(nodes)}


def _heads(G, nodes, *, per_key: bool = False):
    """``(src, dst)``: index arrays of G's adjacency in ``G._adj`` order, one entry per
    neighbour (per parallel edge with ``per_key``), indices into ``nodes``."""
    adj = G._adj
    index = _indexer(nodes)
    tails = np.fromiter(adj if index is None else map(index.__getitem__, adj), dtype=np.int64, count=len(adj))
    heads = chain.from_iterable(adj.values())
    dst = np.fromiter(heads if index is None else map(index.__getitem__, heads), dtype=np.int64)
    src = np.repeat(tails, np.fromiter(map(len, adj.values()), dtype=np.int64, count=len(adj)))
    if per_key:
        keys = np.fromiter((len(keys) for nbrs in adj.values() for keys in nbrs.values()), dtype=np.int64,
                           count=dst.size)
        src, dst = np.repeat(src, keys), np.repeat(dst, keys)
    return src, dst


def cached(G, key, read):
    """``read(nx_graph)``, kept on a :class:`FloydwarpGraph` under ``key`` (None: not kept,
    e.g. for a weight function, whose answers may change)."""
    with stages.stage("convert"):
        if key is None or not isinstance(G, FloydwarpGraph):
            return read(nx_graph(G))
        reads = G.edge_reads
        if key not in reads:
            reads[key] = read(G.G)
        return reads[key]


# ---------------------------------------------------------------------- NetworkX's searches
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
    unit = unit or weight is None
    key = None if callable(weight) else ("search", None if unit else weight, negative and not unit)
    return cached(G, key, lambda H: _search_edges(H, weight, negative, unit))


def inward_edges(G, weight) -> Edges:
    """Edges whose distances *to* a node are the distances NetworkX's closeness searches find
    *from* it.

    NetworkX searches outward from each node of H = G.reverse() (G when undirected), asking
    a weight function about each edge in the direction it walks it.  Reading H's edges that
    way and turning every one around gives those distances, weighed as NetworkX weighs them
    (which matters for a weight function that depends on the direction)."""
    def read(G):
        H = G.reverse(copy=False) if G.is_directed() else G
        return _search_edges(H, weight, False, weight is None).turned_around()
    return cached(G, None if callable(weight) else ("inward", weight), read)


def _search_edges(G, weight, negative, unit) -> Edges:
    nodes = list(G)
    src, dst = _heads(G, nodes)
    if unit:
        return Edges(nodes, src, dst, np.ones(dst.size, dtype=np.int64))
    adj = G._adj
    if callable(weight):
        w = [weight(u, v, e) for u, nbrs in adj.items() for v, e in nbrs.items()]
    elif G.is_multigraph():
        w = [min(d.get(weight, 1) for d in keys.values()) for nbrs in adj.values() for keys in nbrs.values()]
    else:
        w = [d.get(weight, 1) for nbrs in adj.values() for d in nbrs.values()]
    src, dst, weights, hidden = _without_none(src, dst, w, negative)
    if not negative and weights.size and weights.min() < 0:
        raise Fallback("negative weights")
    return Edges(nodes, src, dst, weights, hidden)


def _without_none(src, dst, w, negative):
    """The edges whose weight is not None, their weights as numbers, how many were hidden."""
    try:
        return src, dst, as_numbers(w), 0
    except Fallback:
        shown = np.fromiter((x is not None for x in w), dtype=bool, count=len(w))
        hidden = int(shown.size - shown.sum())
        if not hidden:
            raise
    if negative:
        raise Fallback("an edge weighs None")
    return src[shown], dst[shown], as_numbers([x for x in w if x is not None]), hidden


# ---------------------------------------------------------------------- NetworkX's Floyd-Warshall
def floyd_warshall_edges(G, weight, *, nodes=None, default=1.0, keep_self_loops=True):
    """``(edges, loops)``: the edges as NetworkX's Floyd-Warshall reads them (``d.get(weight,
    default)``, every parallel edge, undirected edges both ways; self-loops only with
    ``keep_self_loops``), and the self-loops' ``(node, weight)``.  ``nodes`` orders the
    matrix (G's order by default)."""
    def read(G):
        order = list(G) if nodes is None else list(nodes)
        multi = G.is_multigraph()
        src, dst = _heads(G, order, per_key=multi)
        adj = G._adj
        if weight is None:
            w = [default] * src.size
        elif multi:
            w = [d.get(weight, default) for nbrs in adj.values() for keys in nbrs.values() for d in keys.values()]
        else:
            w = [d.get(weight, default) for nbrs in adj.values() for d in nbrs.values()]
        at_loop = src == dst
        loops = [(order[i], w[j]) for j, i in zip(np.flatnonzero(at_loop).tolist(), src[at_loop].tolist())]
        if loops and not keep_self_loops:
            keep = ~at_loop
            src, dst, w = src[keep], dst[keep], [x for x, k in zip(w, keep.tolist()) if k]
        return Edges(order, src, dst, as_numbers(w)), loops
    key = None if nodes is not None else ("floyd-warshall", weight, default, keep_self_loops)
    return cached(G, key, read)


def search(G, weight, *, negative=False, unit=False, predecessors=False, labels=False):
    """``(edges, result)``: the APSP NetworkX's searches compute one source at a time
    (:func:`search_edges` says how the edges are read)."""
    edges = search_edges(G, weight, negative=negative, unit=unit)
    return edges, solve_edges(edges, predecessors=predecessors, labels=labels)
