"""All-pairs shortest path lengths as NetworkX's searches give them, from one floydwarp APSP:
``all_pairs_shortest_path_length`` (breadth-first), ``all_pairs_dijkstra_path_length``,
``all_pairs_bellman_ford_path_length``, and ``johnson``'s paths.

The ``all_pairs_*`` functions are generators like NetworkX's: nothing runs before the first
``next()``, errors arise there, and each source's dict is built when it is reached.  A dict
holds the reachable targets (within ``cutoff``) nearest first; NetworkX's searches order
equally near targets by their visiting order instead.
"""
from __future__ import annotations

import numpy as np

from .dispatch import implements
from .edges import search
from .graph import Fallback, fallback, nx_graph, row_dict
from .stages import stage


def _rows(edges, result, within=None, stop_at=None):
    """``(source, {target: distance})`` for every source; ``within(row)`` masks the targets
    kept besides the source itself; ``stop_at(i)`` raises before source i's row."""
    with stage("build"):
        host = result.to_host()
    dist, inf, nodes = host.dist, host.inf, edges.nodes
    for i, u in enumerate(nodes):
        if stop_at is not None:
            stop_at(i)
        with stage("build"):
            row = dist[i]
            keep = row < inf
            if within is not None:
                keep &= within(row)
                keep[i] = True
            out = row_dict(row, i, nodes, edges.integral, keep)
        yield u, out


def _unbounded_from(result):
    """A ``stop_at`` raising NetworkX's error at the first source that reaches a negative cycle."""
    import networkx as nx

    reaches = np.any(result.negative_cycles.reach_to, axis=0)

    def stop_at(i):
        if reaches[i]:
            raise nx.NetworkXUnbounded("Negative cycle detected.")
    return stop_at


@implements()
def all_pairs_shortest_path_length(G, cutoff=None):
    """NetworkX's ``all_pairs_shortest_path_length``: breadth-first levels, up to ``cutoff``."""
    try:
        edges, result = search(G, None, unit=True)
    except Fallback:
        yield from fallback("all_pairs_shortest_path_length", nx_graph(G), cutoff=cutoff)
        return
    # NetworkX's search finds level L while cutoff > L - 1
    within = None if cutoff is None else (lambda row: row - 1 < cutoff)
    yield from _rows(edges, result, within)


@implements()
def all_pairs_dijkstra_path_length(G, cutoff=None, weight="weight"):
    """NetworkX's ``all_pairs_dijkstra_path_length``: targets within ``cutoff``."""
    try:
        edges, result = search(G, weight)
    except Fallback:
        yield from fallback("all_pairs_dijkstra_path_length", nx_graph(G), cutoff=cutoff, weight=weight)
        return
    within = None if cutoff is None else (lambda row: row <= cutoff)
    yield from _rows(edges, result, within)


@implements()
def all_pairs_bellman_ford_path_length(G, weight="weight"):
    """NetworkX's ``all_pairs_bellman_ford_path_length``: negative weights allowed;
    ``NetworkXUnbounded`` at the first source from which a negative cycle is reachable."""
    try:
        edges, result = search(G, weight, negative=True)
    except Fallback:
        yield from fallback("all_pairs_bellman_ford_path_length", nx_graph(G), weight=weight)
        return
    yield from _rows(edges, result, stop_at=_unbounded_from(result) if result.has_negative_cycle else None)


@implements()
def johnson(G, weight="weight"):
    """NetworkX's ``johnson``: ``{source: {target: path}}`` for every reachable pair;
    ``NetworkXUnbounded`` when the graph has a negative cycle.  Where several shortest paths
    tie, the one given may differ from NetworkX's (both are shortest)."""
    import networkx as nx

    try:
        edges, result = search(G, weight, negative=True, predecessors=True, labels=True)
    except Fallback:
        return fallback("johnson", nx_graph(G), weight=weight)
    if result.has_negative_cycle:
        raise nx.NetworkXUnbounded("Negative cycle detected.")
    with stage("build"):
        host = result.to_host()
        return {v: host.paths_from(v) for v in edges.nodes}
