"""SciPy's own shortest-path tests, with method='FW' routed to floydwarp.

The tests are imported from the installed SciPy (never copied); the
module-level ``shortest_path`` they call is swapped for one that sends
Floyd-Warshall to :func:`floydwarp.floyd_warshall`.
"""
import pytest

import floydwarp

suite = pytest.importorskip("scipy.sparse.csgraph.tests.test_shortest_path")
_scipy_shortest_path = suite.shortest_path
ROUTED = {"calls": 0}


def _routed_shortest_path(csgraph, method="auto", directed=True, return_predecessors=False,
                          unweighted=False, overwrite=False, indices=None):
    if method != "FW":
        return _scipy_shortest_path(csgraph, method=method, directed=directed,
                                    return_predecessors=return_predecessors, unweighted=unweighted,
                                    overwrite=overwrite, indices=indices)
    if indices is not None:
        raise ValueError("Cannot specify indices with method == 'FW'.")
    ROUTED["calls"] += 1
    return floydwarp.floyd_warshall(csgraph, directed=directed, return_predecessors=return_predecessors,
                                    unweighted=unweighted, overwrite=overwrite)


suite.shortest_path = _routed_shortest_path

# Collect SciPy's tests here; they run against the routed function.
globals().update({name: getattr(suite, name) for name in dir(suite) if name.startswith("test_")})


def test_zz_floyd_warshall_was_routed():
    assert ROUTED["calls"] > 0
