"""What every function of the backend shares: the graph wrapper, one floydwarp solve, and
rows of the distance matrix turned into NetworkX's dicts (:mod:`.edges` reads the edges)."""
from __future__ import annotations

import logging

import numpy as np

from . import stages

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
        #: arrays already read from G, by how they were read (:func:`.edges.cached`)
        self.edge_reads = {}

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


# ---------------------------------------------------------------------- solving
def solve_edges(edges, *, predecessors=False, labels=False):
    """floydwarp's APSP of the edges (:class:`.edges.Edges`); Fallback where floydwarp refuses.

    The result stays on the solver's device (a GPU's result is not copied to the host): the
    measures reduce it there and bring back n values; what needs every distance as a Python
    object copies it to the host itself."""
    from .. import numeric
    from ..errors import DeviceError, FloydwarpError
    from ..solver import solve

    try:
        with stages.stage("convert"):
            graph = edges.solver_graph(labels)
        stats = graph.weight_stats()
        if edges.integral and not numeric.exact(numeric.smallest_fitting(stats), stats):
            # NetworkX adds Python ints exactly; floydwarp would solve in float64 and round (issue 35)
            raise Fallback("integer weights whose path lengths no integer dtype holds")
        with stages.stage("solve"):
            result = solve(graph, backend=SOLVER_BACKEND, predecessors=predecessors, output="device")
    except (FloydwarpError, DeviceError) as exc:      # bad for the solver, or its GPU out of memory
        raise Fallback(str(exc)) from None
    stages.solver_timings(result.timings)
    return result


# ---------------------------------------------------------------------- rows as dicts
def python_values(row, integral: bool) -> list:
    """A host row as Python numbers: ints for integer weights (exact sums of int64 distances
    come as Python ints already), floats otherwise."""
    if row.dtype == object or (integral and row.dtype.kind in "iu"):
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
