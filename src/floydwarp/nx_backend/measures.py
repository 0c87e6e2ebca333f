"""NetworkX's distance measures from one floydwarp APSP: ``eccentricity``, ``diameter``,
``radius``, ``center``, ``periphery``, ``barycenter``.

As in NetworkX, ``weight=None`` measures hops (breadth-first search) and a weight measures
Dijkstra's distances (a negative weight is NetworkX's to handle).  The eccentricities are
one row maximum per node on the solver's device (:func:`floydwarp.metrics.eccentricity`);
only n numbers come back.  What floydwarp leaves to NetworkX (``can_run`` says so): the
``sp``/``e`` arguments (distances already known) and ``usebounds`` on undirected graphs
(NetworkX's bounding search needs a few searches; its rules for the center and radius
assume integer distances).  Trees measured in hops are NetworkX's too: it answers them with
its tree algorithms, in their order.
"""
from __future__ import annotations

from .. import metrics
from ..arrays import to_host
from .dispatch import implements
from .edges import search
from .graph import Fallback, fallback, nx_graph, python_values
from .stages import stage


def _lengths(G, weight):
    """What ``nx.shortest_path_length(G, weight=weight)`` measures."""
    return search(G, weight, unit=weight is None)


def _given(key):
    def rule(arguments):
        if arguments[key] is not None:
            return f"{key}= given: NetworkX reduces the distances it was handed"
        return None
    return rule


def _bounds_or_given(arguments):
    if arguments["usebounds"] is True and arguments["e"] is None and not arguments["G"].is_directed():
        return ("usebounds=True on an undirected graph: NetworkX's bounding search, which needs a few "
                "searches (and whose center and radius rules assume integer distances)")
    return _given("e")(arguments)


def _one_node(arguments):
    v = arguments["v"]
    if v is not None and v in arguments["G"]:
        return "one node: one NetworkX search is faster than all pairs"
    return None


def _hop_tree(G, weight) -> bool:
    import networkx as nx

    return weight is None and not G.is_directed() and nx.is_tree(G)


@implements(cannot=_given("sp"), slower=_one_node)
def eccentricity(G, v=None, sp=None, weight=None):
    """NetworkX's ``eccentricity``: a dict for all nodes (or those of the container ``v``), a
    number for a single node ``v``; ``NetworkXError`` when a node does not reach every node."""
    nxG = nx_graph(G)
    if sp is not None:
        return fallback("eccentricity", nxG, v=v, sp=sp, weight=weight)
    try:
        edges, result = _lengths(G, weight)
    except Fallback:
        return fallback("eccentricity", nxG, v=v, sp=sp, weight=weight)
    with stage("reduce"):
        ecc = to_host(metrics.eccentricity(result))
    with stage("build"):
        complete = ecc < result.inf
        values = python_values(ecc, edges.integral)
        if v is None:
            if not complete.all():
                _not_connected(nxG)
            return dict(zip(edges.nodes, values))
        index = {node: i for i, node in enumerate(edges.nodes)}
        e = {}
        for node in nxG.nbunch_iter(v):
            i = index[node]
            if not complete[i]:
                _not_connected(nxG)
            e[node] = values[i]
    if v in nxG:
        return e[v]
    return e


def _not_connected(G):
    import networkx as nx

    if G.is_directed():
        raise nx.NetworkXError("Found infinite path length because the digraph is not strongly connected")
    raise nx.NetworkXError("Found infinite path length because the graph is not connected")


@implements(cannot=_bounds_or_given)
def diameter(G, e=None, usebounds=False, weight=None):
    """NetworkX's ``diameter``: the largest eccentricity."""
    nxG = nx_graph(G)
    if _bounds_or_given(dict(G=nxG, e=e, usebounds=usebounds)):
        return fallback("diameter", nxG, e=e, usebounds=usebounds, weight=weight)
    return max(eccentricity(G, weight=weight).values())


@implements(cannot=_bounds_or_given)
def radius(G, e=None, usebounds=False, weight=None):
    """NetworkX's ``radius``: the smallest eccentricity."""
    nxG = nx_graph(G)
    if _bounds_or_given(dict(G=nxG, e=e, usebounds=usebounds)):
        return fallback("radius", nxG, e=e, usebounds=usebounds, weight=weight)
    return min(eccentricity(G, weight=weight).values())


@implements(cannot=_bounds_or_given)
def periphery(G, e=None, usebounds=False, weight=None):
    """NetworkX's ``periphery``: the nodes whose eccentricity is the diameter, in G's order."""
    nxG = nx_graph(G)
    if _bounds_or_given(dict(G=nxG, e=e, usebounds=usebounds)):
        return fallback("periphery", nxG, e=e, usebounds=usebounds, weight=weight)
    e = eccentricity(G, weight=weight)
    diameter = max(e.values())
    return [v for v in e if e[v] == diameter]


@implements(cannot=_bounds_or_given)
def center(G, e=None, usebounds=False, weight=None):
    """NetworkX's ``center``: the nodes whose eccentricity is the radius, in G's order."""
    nxG = nx_graph(G)
    if _bounds_or_given(dict(G=nxG, e=e, usebounds=usebounds)) or _hop_tree(nxG, weight):
        return fallback("center", nxG, e=e, usebounds=usebounds, weight=weight)
    e = eccentricity(G, weight=weight)
    radius = min(e.values())
    return [v for v in e if e[v] == radius]


@implements(cannot=_given("sp"))
def barycenter(G, weight=None, attr=None, sp=None):
    """NetworkX's ``barycenter``: the nodes with the smallest sum of distances to all others;
    with ``attr``, every node's sum stored under that node attribute (up to the first node
    that does not reach all others, where ``NetworkXNoPath`` is raised, as NetworkX does)."""
    import networkx as nx

    G, graph = nx_graph(G), G
    if sp is not None or (attr is None and _hop_tree(G, weight)):
        return fallback("barycenter", G, weight=weight, attr=attr, sp=sp)
    try:
        edges, result = _lengths(graph, weight)
    except Fallback:
        return fallback("barycenter", G, weight=weight, attr=attr, sp=sp)
    with stage("reduce"):
        counts, sums = metrics.reach_sums(result.dist, result.inf, axis=1)
        counts, sums = to_host(counts), to_host(sums)
    n = len(edges.nodes)
    incomplete = counts < n
    first_bad = int(incomplete.argmax()) if incomplete.any() else n
    values = python_values(sums, edges.integral)
    if attr is not None:
        for v, value in zip(edges.nodes[:first_bad], values):
            G.nodes[v][attr] = value
    if first_bad < n:
        raise nx.NetworkXNoPath(f"Input graph {G} is disconnected, so every induced subgraph "
                                "has infinite barycentricity.")
    smallest = min(values, default=None)
    if attr is not None:
        nx._clear_cache(G)
    return [v for v, value in zip(edges.nodes, values) if value == smallest]
