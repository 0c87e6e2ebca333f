"""NetworkX dispatch backend: ``nx.floyd_warshall*(G, backend="floydwarp")`` runs on floydwarp.

Installed as the ``floydwarp`` entry point of the ``networkx.backends`` group::

    >>> import networkx as nx
    >>> G = nx.path_graph(4)
    >>> nx.floyd_warshall_numpy(G, backend="floydwarp")[0].tolist()
    [0.0, 1.0, 2.0, 3.0]

Three functions are implemented, each giving NetworkX's answer in NetworkX's shape:

* ``floyd_warshall_numpy(G, nodelist=None, weight="weight")``: a float64 array in
  ``nodelist`` (or ``G``) order; self-loops are ignored as NetworkX ignores them; the same
  ``NetworkXError`` for a bad ``nodelist``.
* ``floyd_warshall_predecessor_and_distance(G, weight="weight")``: ``(pred, dist)``
  with ``dist`` a dict of ``defaultdict(lambda: inf)`` over every node, ``pred`` a dict
  of dicts holding the nodes that have a predecessor (plus NetworkX's ``pred[u][u] = u``
  for a self-loop).
* ``floyd_warshall(G, weight="weight")``: the ``dist`` part.

NetworkX conventions: a missing weight attribute weighs 1, ``weight=None`` makes every
edge weigh 1, undirected edges go both ways, multigraphs use the lightest parallel edge.
Distances are Python ints when every weight is an integer, else floats.

On ties between equally short routes, predecessors may name a different (equally
short) route than NetworkX's triple loop.  A graph with a negative cycle has no
well-defined answer: NetworkX returns whatever its loop order leaves, so such graphs
(and graphs whose weights are not plain numbers) are handed to NetworkX's own
implementation, which gives exactly NetworkX's output.
"""
from __future__ import annotations

from collections import defaultdict

import numpy as np

#: Functions this backend implements (NetworkX dispatch names).
FUNCTIONS = ("floyd_warshall", "floyd_warshall_numpy", "floyd_warshall_predecessor_and_distance")
#: floydwarp backend used for the computation.
SOLVER_BACKEND = "auto"


class FloydwarpGraph:
    """A NetworkX graph handed to floydwarp (what ``convert_from_nx`` returns).

    It keeps the NetworkX graph itself; the weights are read when an algorithm
    runs, for the ``weight`` it is given.
    """

    __networkx_backend__ = "floydwarp"

    def __init__(self, G):
        self.G = G

    def is_directed(self):
        return self.G.is_directed()

    def is_multigraph(self):
        return self.G.is_multigraph()

    def __len__(self):
        return len(self.G)

    def __iter__(self):
        return iter(self.G)

    def __contains__(self, node):
        return node in self.G

    def __repr__(self):
        return f"FloydwarpGraph({self.G!r})"


def _nx_graph(G):
    return G.G if isinstance(G, FloydwarpGraph) else G


def _inf():
    return float("inf")


class _Fallback(Exception):
    """Internal: let NetworkX's own implementation answer."""


def _extract(G, nodes, weight, *, default, keep_self_loops):
    """Edge arrays of G (nodes indexed by ``nodes``): src, dst, weights, self-loop nodes."""
    index = {v: i for i, v in enumerate(nodes)}
    if weight is None:
        triples = ((u, v, default) for u, v in G.edges())
    else:
        triples = G.edges(data=weight, default=default)
    src, dst, w, loops = [], [], [], []
    for u, v, wt in triples:
        if u == v:
            loops.append((u, wt))
            if not keep_self_loops:
                continue
        src.append(index[u])
        dst.append(index[v])
        w.append(wt)
    weights = np.asarray(w) if w else np.zeros(0, dtype=np.int64)
    if weights.dtype.kind not in "iuf" or weights.dtype == np.float16:
        raise _Fallback("weights are not plain numbers")
    if weights.dtype.kind == "f" and not np.all(np.isfinite(weights)):
        raise _Fallback("non-finite weights")
    src = np.asarray(src, dtype=np.int64)
    dst = np.asarray(dst, dtype=np.int64)
    if not G.is_directed():
        src, dst = np.concatenate([src, dst]), np.concatenate([dst, src])
        weights = np.concatenate([weights, weights])
    return src, dst, weights, loops


def _solve(nodes, src, dst, weights, predecessors):
    from .errors import FloydwarpError
    from .graph import Graph
    from .solve import solve

    try:
        graph = Graph.from_edges(src, dst, weights, n=len(nodes))
        result = solve(graph, backend=SOLVER_BACKEND, predecessors=predecessors)
    except FloydwarpError as exc:
        raise _Fallback(str(exc)) from None
    if result.has_negative_cycle:
        raise _Fallback("negative cycle")
    return result.to_host()


# ---------------------------------------------------------------------- algorithms
def floyd_warshall_numpy(G, nodelist=None, weight="weight"):
    """NetworkX's ``floyd_warshall_numpy`` on floydwarp (same array, same errors)."""
    import networkx as nx

    G = _nx_graph(G)
    if nodelist is not None:
        if not (len(nodelist) == len(G) == len(set(nodelist))):
            raise nx.NetworkXError(
                "nodelist must contain every node in G with no repeats."
                "If you wanted a subgraph of G use G.subgraph(nodelist)")
        missing = set(nodelist) - set(G)
        if missing:
            raise nx.NetworkXError(f"Nodes {missing} in nodelist is not in G")
    nodes = list(G) if nodelist is None else list(nodelist)
    if not nodes:
        return np.zeros((0, 0), dtype=np.float64)
    try:
        src, dst, w, _ = _extract(G, nodes, weight, default=1, keep_self_loops=False)
        result = _solve(nodes, src, dst, w, predecessors=False)
    except _Fallback:
        return nx.floyd_warshall_numpy(G, nodelist=nodelist, weight=weight, backend="networkx")
    return np.asarray(result.to_dense(), dtype=np.float64)


def floyd_warshall_predecessor_and_distance(G, weight="weight"):
    """NetworkX's ``floyd_warshall_predecessor_and_distance`` on floydwarp."""
    import networkx as nx

    G = _nx_graph(G)
    try:
        return _pred_and_dist(G, weight, predecessors=True)
    except _Fallback:
        return nx.floyd_warshall_predecessor_and_distance(G, weight=weight, backend="networkx")


def floyd_warshall(G, weight="weight"):
    """NetworkX's ``floyd_warshall`` on floydwarp: ``{u: defaultdict(v -> distance)}``."""
    import networkx as nx

    G = _nx_graph(G)
    try:
        return _pred_and_dist(G, weight, predecessors=False)[1]
    except _Fallback:
        return nx.floyd_warshall(G, weight=weight, backend="networkx")


def _pred_and_dist(G, weight, predecessors):
    nodes = list(G)
    src, dst, w, loops = _extract(G, nodes, weight, default=1.0, keep_self_loops=True)
    if any(not isinstance(wt, (int, float, np.integer, np.floating)) or wt < 0 for _, wt in loops):
        raise _Fallback("negative self-loop")
    result = _solve(nodes, src, dst, w, predecessors=predecessors) if nodes else None
    integral = w.dtype.kind in "iu"
    dist = {}
    pred = {}
    if result is None:
        return pred, dist
    d = result.dist
    unreachable = d >= result.inf
    rows = d.tolist() if integral and d.dtype.kind == "i" else d.astype(np.float64).tolist()
    inf = float("inf")
    for i, u in enumerate(nodes):
        row = rows[i]
        for j in np.flatnonzero(unreachable[i]).tolist():
            row[j] = inf
        row[i] = 0
        dist[u] = defaultdict(_inf, zip(nodes, row))
    if predecessors:
        p = result.pred
        loop_nodes = {u for u, _ in loops}
        for i, u in enumerate(nodes):
            targets = np.flatnonzero((p[i] >= 0) & ~unreachable[i])
            if targets.size == 0 and u not in loop_nodes:
                continue
            entry = {nodes[j]: nodes[k] for j, k in zip(targets.tolist(), p[i, targets].tolist())}
            if u in loop_nodes:
                entry[u] = u           # NetworkX's pred[u][u] = u for a self-loop
            pred[u] = entry
    return pred, dist


# ---------------------------------------------------------------------- dispatch interface
class BackendInterface:
    """What NetworkX's dispatcher loads from the ``networkx.backends`` entry point."""

    floyd_warshall = staticmethod(floyd_warshall)
    floyd_warshall_numpy = staticmethod(floyd_warshall_numpy)
    floyd_warshall_predecessor_and_distance = staticmethod(floyd_warshall_predecessor_and_distance)

    @staticmethod
    def convert_from_nx(G, edge_attrs=None, node_attrs=None, preserve_edge_attrs=False,
                        preserve_node_attrs=False, preserve_graph_attrs=False, name=None, graph_name=None):
        return G if isinstance(G, FloydwarpGraph) else FloydwarpGraph(G)

    @staticmethod
    def convert_to_nx(obj, *, name=None):
        return obj.G if isinstance(obj, FloydwarpGraph) else obj

    @staticmethod
    def can_run(name, args, kwargs):
        return name in FUNCTIONS

    @staticmethod
    def should_run(name, args, kwargs):
        return name in FUNCTIONS


def get_info():
    """``networkx.backend_info`` entry point: what the backend offers (for NetworkX's docs)."""
    return {
        "backend_name": "floydwarp",
        "project": "floydwarp",
        "package": "floydwarp",
        "short_summary": "All-pairs shortest paths by Floyd-Warshall on floydwarp's CPU/GPU engines.",
        "functions": {name: {} for name in FUNCTIONS},
    }
