"""NetworkX's Floyd-Warshall functions on floydwarp: ``floyd_warshall_numpy``,
``floyd_warshall_predecessor_and_distance`` and ``floyd_warshall``.

* ``floyd_warshall_numpy(G, nodelist=None, weight="weight")``: a float64 array in
  ``nodelist`` (or ``G``) order; self-loops are ignored as NetworkX ignores them; the same
  ``NetworkXError`` for a bad ``nodelist``.
* ``floyd_warshall_predecessor_and_distance(G, weight="weight")``: ``(pred, dist)``
  with ``dist`` a dict of ``defaultdict(lambda: inf)`` over every node, ``pred`` a dict
  of dicts holding the nodes that have a predecessor (plus NetworkX's ``pred[u][u] = u``
  for a self-loop).
* ``floyd_warshall(G, weight="weight")``: the ``dist`` part.

NetworkX's Floyd-Warshall reads ``d.get(weight, 1.0)``: a missing weight attribute weighs
1.0, ``weight=None`` makes every edge weigh 1.0, undirected edges go both ways, multigraphs
use the lightest parallel edge.  Distances are Python ints when every weight is an integer,
else floats.

On ties between equally short routes, predecessors may name a different (equally
short) route than NetworkX's triple loop.  A graph with a negative cycle has no
well-defined answer: NetworkX returns whatever its loop order leaves, so such graphs
(and graphs whose weights are not plain numbers) are handed to NetworkX's own
implementation, which gives exactly NetworkX's output.
"""
from __future__ import annotations

from collections import defaultdict

import numpy as np

from ..arrays import to_host
from .dispatch import implements
from .edges import floyd_warshall_edges
from .graph import Fallback, nx_graph, solve_edges
from .stages import stage


def _inf():
    return float("inf")


# ---------------------------------------------------------------------- algorithms
@implements()
def floyd_warshall_numpy(G, nodelist=None, weight="weight"):
    """NetworkX's ``floyd_warshall_numpy`` on floydwarp (same array, same errors)."""
    import networkx as nx

    nxG = nx_graph(G)
    if nodelist is not None:
        if not (len(nodelist) == len(nxG) == len(set(nodelist))):
            raise nx.NetworkXError(
                "nodelist must contain every node in G with no repeats."
                "If you wanted a subgraph of G use G.subgraph(nodelist)")
        missing = set(nodelist) - set(nxG)
        if missing:
            raise nx.NetworkXError(f"Nodes {missing} in nodelist is not in G")
    if len(nxG) == 0:
        return np.zeros((0, 0), dtype=np.float64)
    try:
        edges, _ = floyd_warshall_edges(G, weight, nodes=nodelist, default=1, keep_self_loops=False)
        result = _bounded(solve_edges(edges))
    except Fallback:
        return nx.floyd_warshall_numpy(nxG, nodelist=nodelist, weight=weight, backend="networkx")
    with stage("build"):
        return np.asarray(to_host(result.to_dense()), dtype=np.float64)


@implements()
def floyd_warshall_predecessor_and_distance(G, weight="weight"):
    """NetworkX's ``floyd_warshall_predecessor_and_distance`` on floydwarp."""
    import networkx as nx

    try:
        return _pred_and_dist(G, weight, predecessors=True)
    except Fallback:
        return nx.floyd_warshall_predecessor_and_distance(nx_graph(G), weight=weight, backend="networkx")


@implements()
def floyd_warshall(G, weight="weight"):
    """NetworkX's ``floyd_warshall`` on floydwarp: ``{u: defaultdict(v -> distance)}``."""
    import networkx as nx

    try:
        return _pred_and_dist(G, weight, predecessors=False)[1]
    except Fallback:
        return nx.floyd_warshall(nx_graph(G), weight=weight, backend="networkx")


def _pred_and_dist(G, weight, predecessors):
    edges, loops = floyd_warshall_edges(G, weight)
    if any(not isinstance(wt, (int, float, np.integer, np.floating)) or wt < 0 for _, wt in loops):
        raise Fallback("negative self-loop")
    if not edges.nodes:
        return {}, {}
    result = _bounded(solve_edges(edges, predecessors=predecessors))
    with stage("build"):
        return _dicts(result.to_host(), edges.nodes, edges.integral, loops, predecessors)


def _dicts(result, nodes, integral, loops, predecessors):
    """NetworkX's ``(pred, dist)`` of a host result."""
    dist = {}
    pred = {}
    d = result.dist
    unreachable = d >= result.inf
    rows = d.tolist() if integral and d.dtype.kind in "iu" else d.astype(np.float64).tolist()
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


def _bounded(result):
    if result.has_negative_cycle:
        raise Fallback("negative cycle")
    return result
