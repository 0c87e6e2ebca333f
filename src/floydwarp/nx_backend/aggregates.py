"""NetworkX's sums over all pairs from one floydwarp APSP: ``closeness_centrality``,
``average_shortest_path_length``, ``wiener_index``, ``global_efficiency``.

The sums are reductions on the solver's device (:mod:`floydwarp.metrics`), exact for
integer weights, so closeness and the average path length of integer-weighted graphs are
bit-identical to NetworkX's (the same float operations on the same exact totals; integer
weights whose paths int64 cannot hold are NetworkX's to answer, :func:`.graph.solve_edges`).  Float
weights are summed in float64 in another order than NetworkX's Python loops: equal within
rounding.
"""
from __future__ import annotations

from .. import metrics
from ..arrays import to_host
from .dispatch import implements
from .edges import floyd_warshall_edges, inward_edges, search
from .graph import Fallback, fallback, nx_graph, solve_edges
from .stages import stage

_SINGLE_SOURCE = ("unweighted", "dijkstra", "bellman-ford")
_ALL_PAIRS = ("floyd-warshall", "floyd-warshall-numpy")


def _connected(G, edges, counts) -> bool:
    """NetworkX's (strong) connectivity of G; read off the reach counts unless a weight of
    None hid edges (NetworkX's check sees every edge, its Dijkstra does not)."""
    import networkx as nx

    if edges.hidden:
        return nx.is_strongly_connected(G) if G.is_directed() else nx.is_connected(G)
    return bool((to_host(counts) == len(G)).all())


def _one_node(arguments):
    if arguments["u"] is not None:
        return "one node: one NetworkX search is faster than all pairs"
    return None


@implements(slower=_one_node)
def closeness_centrality(G, u=None, distance=None, wf_improved=True):
    """NetworkX's ``closeness_centrality``: inward distances (outward ones: pass G.reverse())."""
    nxG = nx_graph(G)
    if u is not None and u not in nxG:
        return fallback("closeness_centrality", nxG, u=u, distance=distance, wf_improved=wf_improved)
    try:
        edges = inward_edges(G, distance)
        result = solve_edges(edges)
    except Fallback:
        return fallback("closeness_centrality", nxG, u=u, distance=distance, wf_improved=wf_improved)
    with stage("reduce"):
        values = to_host(metrics.closeness(result, wf_improved))
    with stage("build"):
        if u is not None:
            return float(values[edges.nodes.index(u)])
        return dict(zip(edges.nodes, values.tolist()))


@implements(cannot=lambda a: None if a["method"] in (None, *_SINGLE_SOURCE, *_ALL_PAIRS)
            else f"method={a['method']!r}: NetworkX's ValueError")
def average_shortest_path_length(G, weight=None, method=None):
    """NetworkX's ``average_shortest_path_length`` for every ``method``."""
    import networkx as nx

    nxG = nx_graph(G)
    if method is None:
        method = "unweighted" if weight is None else "dijkstra"
    if method not in _SINGLE_SOURCE + _ALL_PAIRS:
        raise ValueError(f"method not supported: {method}")
    n = len(nxG)
    if n == 0:
        raise nx.NetworkXPointlessConcept(
            "the null graph has no paths, thus there is no average shortest path length")
    if n == 1:
        return 0
    try:
        if method in _ALL_PAIRS:
            edges = floyd_warshall_edges(G, weight)[0]
            result = solve_edges(edges)
            if result.has_negative_cycle:
                raise Fallback("negative cycle: NetworkX's Floyd-Warshall answers what its loop order leaves")
        else:
            edges, result = search(G, weight, unit=method == "unweighted", negative=method == "bellman-ford")
    except Fallback:
        return fallback("average_shortest_path_length", nxG, weight=weight, method=method)
    with stage("reduce"):
        counts, sums = metrics.reach_sums(result.dist, result.inf, axis=1)
        connected = _connected(nxG, edges, counts)
        total = metrics.total(sums) if connected else None
    if not connected:
        raise nx.NetworkXError("Graph is not strongly connected." if nxG.is_directed() else "Graph is not connected.")
    if result.has_negative_cycle:
        raise nx.NetworkXUnbounded("Negative cycle detected.")
    return total / (n * (n - 1))


@implements()
def wiener_index(G, weight=None):
    """NetworkX's ``wiener_index``: ``inf`` for a graph that is not (strongly) connected; the
    sum over unordered pairs (a float) of an undirected graph."""
    nxG = nx_graph(G)
    if len(nxG) == 0:
        return fallback("wiener_index", nxG, weight=weight)     # NetworkX's error for the null graph
    try:
        edges, result = search(G, weight, unit=weight is None)
    except Fallback:
        return fallback("wiener_index", nxG, weight=weight)
    with stage("reduce"):
        counts, sums = metrics.reach_sums(result.dist, result.inf, axis=1)
        if not _connected(nxG, edges, counts):
            return float("inf")
        value = metrics.total(sums)
    return value if nxG.is_directed() else value / 2


@implements()
def global_efficiency(G):
    """NetworkX's ``global_efficiency`` (undirected graphs: NetworkX refuses directed ones
    before dispatching): the mean of 1 / hops over ordered pairs."""
    n = len(G)
    denom = n * (n - 1)
    if denom == 0:
        return 0
    try:
        _, result = search(G, None, unit=True)
    except Fallback:
        return fallback("global_efficiency", nx_graph(G))
    with stage("reduce"):
        return metrics.inverse_distance_sum(result.dist, result.inf) / denom
