"""NetworkX dispatch backend: ``nx.closeness_centrality(G, backend="floydwarp")`` and the rest
of NetworkX's all-pairs family run on one floydwarp APSP.

Installed as the ``floydwarp`` entry point of the ``networkx.backends`` group::

    >>> import networkx as nx
    >>> G = nx.path_graph(4)
    >>> nx.floyd_warshall_numpy(G, backend="floydwarp")[0].tolist()
    [0.0, 1.0, 2.0, 3.0]
    >>> nx.closeness_centrality(G, backend="floydwarp")[1]
    0.75

Implemented, each with NetworkX's semantics (arguments, weights by attribute name or
callable, ``None`` weights, errors, return types):

* :mod:`.dense`: ``floyd_warshall``, ``floyd_warshall_numpy``,
  ``floyd_warshall_predecessor_and_distance``;
* :mod:`.lengths`: ``all_pairs_shortest_path_length``, ``all_pairs_dijkstra_path_length``,
  ``all_pairs_bellman_ford_path_length``, ``johnson``;
* :mod:`.measures`: ``eccentricity``, ``diameter``, ``radius``, ``center``, ``periphery``,
  ``barycenter``;
* :mod:`.aggregates`: ``closeness_centrality``, ``average_shortest_path_length``,
  ``wiener_index``, ``global_efficiency``.

``can_run`` declines what floydwarp cannot answer as NetworkX does and ``should_run`` what
NetworkX answers faster (:mod:`.dispatch`), each with the reason; a call that only turns
out to be NetworkX's once its weights are read (a negative weight for Dijkstra, a negative
cycle for Floyd-Warshall, weights that are not numbers) is handed to NetworkX's own
implementation inside the call.
"""
from . import aggregates, dense, lengths, measures  # noqa: F401  (each registers its functions)
from .dense import floyd_warshall, floyd_warshall_numpy, floyd_warshall_predecessor_and_distance
from .dispatch import IMPLEMENTATIONS, can_run, should_run
from .graph import FloydwarpGraph

#: Functions this backend implements (NetworkX dispatch names).
FUNCTIONS = tuple(IMPLEMENTATIONS)


class BackendInterface:
    """What NetworkX's dispatcher loads from the ``networkx.backends`` entry point."""

    @staticmethod
    def convert_from_nx(G, edge_attrs=None, node_attrs=None, preserve_edge_attrs=False,
                        preserve_node_attrs=False, preserve_graph_attrs=False, name=None, graph_name=None):
        return G if isinstance(G, FloydwarpGraph) else FloydwarpGraph(G)

    @staticmethod
    def convert_to_nx(obj, *, name=None):
        return obj.G if isinstance(obj, FloydwarpGraph) else obj

    can_run = staticmethod(can_run)
    should_run = staticmethod(should_run)


for _name, _func in IMPLEMENTATIONS.items():
    setattr(BackendInterface, _name, staticmethod(_func))


def get_info():
    """``networkx.backend_info`` entry point: what the backend offers (for NetworkX's docs)."""
    return {
        "backend_name": "floydwarp",
        "project": "floydwarp",
        "package": "floydwarp",
        "short_summary": "All-pairs shortest paths and the measures built on them, by Floyd-Warshall on "
                         "floydwarp's CPU/GPU engines.",
        "functions": {name: {} for name in FUNCTIONS},
    }


__all__ = ["BackendInterface", "FUNCTIONS", "FloydwarpGraph", "can_run", "floyd_warshall", "floyd_warshall_numpy",
           "floyd_warshall_predecessor_and_distance", "get_info", "should_run"]
