"""The NetworkX dispatch backend: ``nx.floyd_warshall*(G, backend="floydwarp")`` gives NetworkX's answers."""
from __future__ import annotations

import math
import os
import subprocess
import sys
from collections import defaultdict

import numpy as np
import pytest

nx = pytest.importorskip("networkx")

#: NetworkX warns when it reuses a converted graph from its cache; harmless here (the
#: converted graph reads the live NetworkX graph)
pytestmark = pytest.mark.filterwarnings("ignore:Note. conversions to backend graphs:UserWarning")

from floydwarp import nx_backend  # noqa: E402

installed = pytest.mark.skipif(
    "floydwarp" not in nx.utils.backends.backends,
    reason="the networkx.backends entry point is not installed (pip install -e .)")


def random_graph(seed, *, directed=True, multigraph=False, n=10, p=0.3, floats=False, missing=0.0,
                 potential=0, attr="weight", labels="int"):
    rng = np.random.default_rng(seed)
    cls = {(True, False): nx.DiGraph, (False, False): nx.Graph,
           (True, True): nx.MultiDiGraph, (False, True): nx.MultiGraph}[directed, multigraph]
    G = cls()
    names = [f"v{i}" for i in range(n)] if labels == "str" else list(range(n))
    rng.shuffle(names)
    G.add_nodes_from(names)
    h = rng.integers(0, potential + 1, n) if directed else np.zeros(n, int)
    for u in range(n):
        for v in range(n):
            if rng.random() >= p or (not directed and v < u):
                continue
            for _ in range(1 + (multigraph and rng.random() < 0.3)):
                w = float(rng.uniform(0, 9)) if floats else int(rng.integers(0, 9) + h[u] - h[v])
                data = {} if rng.random() < missing else {attr: w}
                G.add_edge(names[u], names[v], **data)
    return G


def same_distances(a, b):
    """dict-of-dicts equality with inf == inf."""
    assert set(a) == set(b)
    for u in a:
        assert dict(a[u]) == dict(b[u]), u


def valid_predecessors(G, pred, dist, weight="weight"):
    """Every route read from pred is a shortest path (ties may pick another route than NetworkX)."""
    for u in G:
        for v in G:
            if u == v or dist[u][v] == math.inf:
                continue
            route = nx.reconstruct_path(u, v, pred)
            assert route[0] == u and route[-1] == v
            total = 0
            for a, b in zip(route, route[1:]):
                data = G.get_edge_data(a, b)
                if G.is_multigraph():
                    total += min(d.get(weight, 1) for d in data.values())
                else:
                    total += data.get(weight, 1)
            assert math.isclose(total, dist[u][v], rel_tol=1e-12, abs_tol=1e-12)


# ---------------------------------------------------------------------- entry point
@installed
def test_entry_point_is_registered():
    backend = nx.utils.backends._load_backend("floydwarp")
    for name in nx_backend.FUNCTIONS:
        assert hasattr(backend, name)
    assert backend.can_run("floyd_warshall", (nx.path_graph(3),), {}) is True
    assert not backend.can_run("dijkstra_path", (nx.path_graph(3), 0, 1), {})


# ---------------------------------------------------------------------- against NetworkX
CASES = [
    dict(directed=True), dict(directed=False), dict(directed=True, multigraph=True),
    dict(directed=False, multigraph=True), dict(directed=True, floats=True), dict(directed=True, missing=0.3),
    dict(directed=True, potential=5), dict(directed=True, labels="str"), dict(directed=False, floats=True, missing=0.2),
]


@installed
@pytest.mark.parametrize("case", CASES, ids=lambda c: ",".join(f"{k}={v}" for k, v in c.items()))
@pytest.mark.parametrize("seed", range(3))
def test_matches_networkx_on_random_graphs(case, seed):
    G = random_graph(seed, **case)
    expected = nx.floyd_warshall_numpy(G)
    got = nx.floyd_warshall_numpy(G, backend="floydwarp")
    assert isinstance(got, np.ndarray) and got.dtype == np.float64
    np.testing.assert_allclose(got, expected, rtol=1e-12)
    same_distances(nx.floyd_warshall(G, backend="floydwarp"), nx.floyd_warshall(G))
    pred, dist = nx.floyd_warshall_predecessor_and_distance(G, backend="floydwarp")
    pred_nx, dist_nx = nx.floyd_warshall_predecessor_and_distance(G)
    same_distances(dist, dist_nx)
    assert set(pred) == set(pred_nx)
    for u in pred_nx:
        assert set(pred[u]) == set(pred_nx[u])
    valid_predecessors(G, pred, dist)


@installed
@pytest.mark.parametrize("seed", range(4))
def test_predecessors_equal_networkx_on_integer_graphs_with_the_reference_engine(seed, monkeypatch):
    monkeypatch.setattr(nx_backend.graph, "SOLVER_BACKEND", "reference")
    G = random_graph(seed, n=12, potential=3)
    assert nx.floyd_warshall_predecessor_and_distance(G, backend="floydwarp") == \
        nx.floyd_warshall_predecessor_and_distance(G)


@installed
def test_result_shapes_are_networkx_shapes():
    G = nx.DiGraph()
    G.add_weighted_edges_from([("a", "b", 3), ("b", "c", 4)])
    G.add_node("z")
    pred, dist = nx.floyd_warshall_predecessor_and_distance(G, backend="floydwarp")
    assert type(dist) is dict and type(pred) is dict
    assert all(type(row) is defaultdict for row in dist.values())
    assert dist["c"]["a"] == math.inf and dist["c"]["nowhere"] == math.inf   # defaultdict(inf)
    assert dist["a"]["c"] == 7 and type(dist["a"]["c"]) is int and type(dist["a"]["a"]) is int
    assert pred == {"a": {"b": "a", "c": "b"}, "b": {"c": "b"}}
    assert list(dist) == list(G)
    for row in dist.values():
        for value in row.values():
            assert type(value) in (int, float)       # no NumPy scalars
    unweighted = nx.path_graph(3, create_using=nx.DiGraph)
    d = nx.floyd_warshall(unweighted, backend="floydwarp")
    assert d == nx.floyd_warshall(unweighted) and type(d[0][2]) is float   # NetworkX's default weight is 1.0


@installed
def test_weight_parameter_none_and_self_loops():
    G = nx.DiGraph()
    G.add_edges_from([(0, 1, {"heavy": 5, "weight": 1}), (1, 2, {"heavy": 1}), (2, 2, {"heavy": 3})])
    for weight in ("heavy", "weight", None):
        pred, dist = nx.floyd_warshall_predecessor_and_distance(G, weight=weight, backend="floydwarp")
        pred_nx, dist_nx = nx.floyd_warshall_predecessor_and_distance(G, weight=weight)
        assert pred == pred_nx and dist == dist_nx                        # pred[2][2] == 2 included
        np.testing.assert_array_equal(nx.floyd_warshall_numpy(G, weight=weight, backend="floydwarp"),
                                      nx.floyd_warshall_numpy(G, weight=weight))


@installed
def test_nodelist_order_and_errors():
    G = nx.path_graph(7)
    order = [3, 5, 4, 6, 2, 1, 0]
    np.testing.assert_array_equal(nx.floyd_warshall_numpy(G, nodelist=order, backend="floydwarp"),
                                  nx.floyd_warshall_numpy(G, nodelist=order))
    for bad in ([1, 3], list(range(9)), [0, 1, 2, 3, 4, 5, 5], [0, 1, 2, 3, 4, 5, 99]):
        with pytest.raises(nx.NetworkXError):
            nx.floyd_warshall_numpy(G, nodelist=bad)
        with pytest.raises(nx.NetworkXError):
            nx.floyd_warshall_numpy(G, nodelist=bad, backend="floydwarp")
    assert nx.floyd_warshall_numpy(nx.Graph(), backend="floydwarp").shape == (0, 0)
    assert nx.floyd_warshall(nx.Graph(), backend="floydwarp") == {}


@installed
@pytest.mark.parametrize("graph", ["directed", "undirected", "self-loop"])
def test_negative_cycles_are_reported_as_networkx_reports_them(graph):
    if graph == "directed":
        G = nx.DiGraph([(0, 1, {"weight": 1}), (1, 2, {"weight": -3}), (2, 0, {"weight": 1}), (2, 3, {"weight": 2})])
    elif graph == "undirected":
        G = nx.Graph([(0, 1, {"weight": -1}), (1, 2, {"weight": 4})])
    else:
        G = nx.DiGraph([(0, 0, {"weight": -1}), (0, 1, {"weight": 2})])
    assert nx.floyd_warshall_predecessor_and_distance(G, backend="floydwarp") == \
        nx.floyd_warshall_predecessor_and_distance(G)
    assert nx.floyd_warshall(G, backend="floydwarp") == nx.floyd_warshall(G)
    np.testing.assert_array_equal(nx.floyd_warshall_numpy(G, backend="floydwarp"), nx.floyd_warshall_numpy(G))
    dist = nx.floyd_warshall(G, backend="floydwarp")
    assert any(dist[u][u] < 0 for u in G) or graph == "self-loop" and dist[0][0] == -1


def test_backend_functions_take_plain_networkx_graphs_too():
    G = nx.cycle_graph(5)
    np.testing.assert_array_equal(nx_backend.floyd_warshall_numpy(G), nx.floyd_warshall_numpy(G))
    wrapped = nx_backend.BackendInterface.convert_from_nx(G)
    assert wrapped.__networkx_backend__ == "floydwarp" and nx_backend.BackendInterface.convert_to_nx(wrapped) is G
    assert nx_backend.floyd_warshall(wrapped) == nx.floyd_warshall(G)


@installed
@pytest.mark.slow
def test_networkx_shortest_path_suite_runs_on_the_backend():
    """NetworkX's own shortest-path tests, dispatched to floydwarp where it implements a function."""
    env = {**os.environ, "NETWORKX_TEST_BACKEND": "floydwarp", "NETWORKX_FALLBACK_TO_NX": "1"}
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "--pyargs", "networkx.algorithms.shortest_paths.tests.test_dense",
         "networkx.algorithms.shortest_paths.tests.test_dense_numpy", "-q", "-p", "no:cacheprovider"],
        env=env, capture_output=True, text=True, cwd=os.path.dirname(nx.__file__), timeout=300)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert " passed" in proc.stdout and "failed" not in proc.stdout


@pytest.mark.parametrize("top", [2 ** 40, 2 ** 60, 2 ** 62])
def test_integer_weights_stay_bit_identical_beyond_int64_paths(top):
    """Issue 35: docs/networkx.md's bit-identical closeness / average path length held only while
    int64 holds every path: beyond it floydwarp solved in float64 and its answers agreed with
    NetworkX's exact Python ints only within rounding.  Those graphs are NetworkX's to answer."""
    rng = np.random.default_rng(top % 997)
    G = nx.gnp_random_graph(60, 0.1, seed=5, directed=True)
    for u, v in G.edges:
        G.edges[u, v]["weight"] = int(rng.integers(1, top))
    B = nx_backend.BackendInterface
    assert B.closeness_centrality(G, distance="weight") == nx.closeness_centrality(G, distance="weight")
    assert dict(B.all_pairs_dijkstra_path_length(G)) == dict(nx.all_pairs_dijkstra_path_length(G))
    H = nx.complete_graph(50, create_using=nx.DiGraph)
    for u, v in H.edges:
        H.edges[u, v]["weight"] = int(rng.integers(1, top))
    assert B.average_shortest_path_length(H, weight="weight") == nx.average_shortest_path_length(H, weight="weight")
