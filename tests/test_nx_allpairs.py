"""NetworkX's all-pairs family on the floydwarp backend gives NetworkX's answers.

Hundreds of random graphs (directed and not, multigraphs, string labels, self-loops, zero and
missing weights, disconnected ones, n = 1..14) run through ``backend="floydwarp"`` and
through NetworkX itself: integer weights give equal answers (closeness and the average path
length bit-identical floats), float weights equal within rounding, and where NetworkX
raises, the same exception with the same message.
"""
from __future__ import annotations

import math

import numpy as np
import pytest

nx = pytest.importorskip("networkx")

from floydwarp import nx_backend  # noqa: E402

pytestmark = [
    pytest.mark.filterwarnings("ignore:Note. conversions to backend graphs:UserWarning"),
    pytest.mark.skipif("floydwarp" not in nx.utils.backends.backends,
                       reason="the networkx.backends entry point is not installed (pip install -e .)"),
]

SEEDS = range(24)
KINDS = ["graph", "digraph", "multigraph", "multidigraph"]


def random_graph(seed, kind, *, floats=False, negative=False):
    """n in 1..14, density from sparse (often disconnected) to dense; weights in 0..8 (some
    missing, so NetworkX's default 1 counts), floats in [0, 8), string labels on odd seeds,
    a few self-loops."""
    rng = np.random.default_rng(seed)
    G = {"graph": nx.Graph, "digraph": nx.DiGraph, "multigraph": nx.MultiGraph,
         "multidigraph": nx.MultiDiGraph}[kind]()
    n = int(rng.integers(1, 15))
    names = [f"v{i}" for i in range(n)] if seed % 2 else list(range(n))
    rng.shuffle(names)
    G.add_nodes_from(names)
    p = rng.choice([0.12, 0.3, 0.6])
    h = rng.integers(0, 4, n)           # a potential: negative weights without negative cycles
    for u in range(n):
        for v in range(n):
            if rng.random() >= p or (u == v and rng.random() < 0.7):
                continue
            w = float(rng.uniform(0, 8)) if floats else int(rng.integers(0, 9))
            if negative and G.is_directed():
                w += h[v] - h[u] - 3
            data = {} if rng.random() < 0.15 else {"weight": w, "cost": abs(w) + 1}
            G.add_edge(names[u], names[v], **data)
    return G


def outcome(call):
    """What a call gives: ("value", v) or ("raises", type, message); generators are drained."""
    try:
        value = call()
        if hasattr(value, "__next__"):
            value = list(value)
        return ("value", value)
    except Exception as exc:  # noqa: BLE001 -- the comparison is the point
        return ("raises", type(exc), str(exc))


def close(a, b, exact):
    """Equal (exact) or equal within rounding, through dicts, lists and tuples."""
    if isinstance(a, dict):
        return isinstance(b, dict) and set(a) == set(b) and all(close(a[k], b[k], exact) for k in a)
    if isinstance(a, (list, tuple)):
        return type(a) is type(b) and len(a) == len(b) and all(close(x, y, exact) for x, y in zip(a, b))
    if isinstance(a, float) or isinstance(b, float):
        return a == b if exact else math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-12)
    return a == b


def same(fw_call, nx_call, exact=True):
    got, want = outcome(fw_call), outcome(nx_call)
    assert got[0] == want[0], (got, want)
    if got[0] == "raises":
        assert got[1:] == want[1:]
    else:
        assert close(got[1], want[1], exact), (got[1], want[1])
    return got


def both(name, G, exact=True, **kwargs):
    func = getattr(nx, name)
    return same(lambda: func(G, backend="floydwarp", **kwargs), lambda: func(G, backend="networkx", **kwargs), exact)


def weight_function(u, v, d):
    """Asymmetric (the direction matters), reads the data (a key dict on multigraphs), and
    hides the edges whose cost is 5 by returning None."""
    if d and all(isinstance(x, dict) for x in d.values()):
        cost = min(x.get("cost", 2) for x in d.values())
    else:
        cost = d.get("cost", 2)
    return None if cost == 5 else cost + (1 if str(u) < str(v) else 2)


# ---------------------------------------------------------------------- per family
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("weights", ["int", "float"])
def test_closeness_and_sums(kind, weights):
    for seed in SEEDS:
        G = random_graph(seed, kind, floats=weights == "float")
        exact = weights == "int"
        for distance in (None, "weight", "cost", weight_function):
            for wf in (True, False):
                both("closeness_centrality", G, exact, distance=distance, wf_improved=wf)
        both("closeness_centrality", G, exact, u=next(iter(G)), distance="weight")
        for method in (None, "unweighted", "dijkstra", "bellman-ford", "floyd-warshall", "floyd-warshall-numpy"):
            both("average_shortest_path_length", G, exact, weight="weight", method=method)
        both("average_shortest_path_length", G, exact)
        for weight in (None, "weight", weight_function):
            both("wiener_index", G, exact, weight=weight)
        if not G.is_directed():
            both("global_efficiency", G, exact=False)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("weights", ["int", "float"])
def test_distance_measures(kind, weights):
    for seed in SEEDS:
        G = random_graph(seed, kind, floats=weights == "float")
        exact = weights == "int"
        for weight in (None, "weight", "cost", weight_function):
            ecc = both("eccentricity", G, exact, weight=weight)
            both("diameter", G, exact, weight=weight)
            both("radius", G, exact, weight=weight)
            if exact or ecc[0] == "raises":
                for name in ("center", "periphery", "barycenter"):
                    both(name, G, exact, weight=weight)
                continue
            # float distances: nodes whose values tie up to rounding may fall either way
            e = ecc[1]
            sums = {v: sum(d.values()) for v, d in nx.shortest_path_length(G, weight=weight, backend="networkx")}
            for name, values, best in (("center", e, min), ("periphery", e, max), ("barycenter", sums, min)):
                target = best(values.values())
                got = getattr(nx, name)(G, weight=weight, backend="floydwarp")
                want = getattr(nx, name)(G, weight=weight, backend="networkx")
                for v in {*got, *want}:
                    assert math.isclose(values[v], target, rel_tol=1e-12, abs_tol=1e-12), (name, v)
        node = next(iter(G))
        both("eccentricity", G, exact, v=node, weight="weight")
        both("eccentricity", G, exact, v=[node, "not a node"], weight="weight")


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("weights", ["int", "float"])
def test_all_pairs_lengths(kind, weights):
    for seed in SEEDS:
        G = random_graph(seed, kind, floats=weights == "float")
        exact = weights == "int"
        for cutoff in (None, 0, 1, 2.5, -1):
            both("all_pairs_shortest_path_length", G, cutoff=cutoff)
        for cutoff in (None, 0, 3, 7.5):
            for weight in ("weight", weight_function):
                both("all_pairs_dijkstra_path_length", G, exact, cutoff=cutoff, weight=weight)
        both("all_pairs_bellman_ford_path_length", G, exact, weight="cost")


@pytest.mark.parametrize("kind", ["digraph", "multidigraph", "graph"])
def test_negative_weights_bellman_ford_and_johnson(kind):
    """Negative weights without negative cycles (directed) and with them (undirected: every
    negative edge is one): the same lengths, the same NetworkXUnbounded at the same source."""
    for seed in SEEDS:
        G = random_graph(seed, kind, negative=True)
        bf = both("all_pairs_bellman_ford_path_length", G)
        jo = outcome(lambda: nx.johnson(G, backend="floydwarp"))
        want = outcome(lambda: nx.johnson(G, backend="networkx"))
        assert jo[0] == want[0] and (jo[0] == "value" or jo[1:] == want[1:])
        if jo[0] == "value":
            lengths = dict(bf[1])
            for s, paths in jo[1].items():
                assert set(paths) == set(want[1][s])
                for t, path in paths.items():
                    assert path[0] == s and path[-1] == t
                    assert _path_length(G, path) == lengths[s][t]
        for weight in ("weight", None):
            both("average_shortest_path_length", G, weight=weight, method="bellman-ford")
        # Dijkstra with negative weights: whatever NetworkX does (it raises or not), the same
        both("all_pairs_dijkstra_path_length", G)
        both("closeness_centrality", G, distance="weight")


def _path_length(G, path):
    total = 0
    for a, b in zip(path, path[1:]):
        data = G.get_edge_data(a, b)
        total += min(d.get("weight", 1) for d in data.values()) if G.is_multigraph() else data.get("weight", 1)
    return total


def test_johnson_gives_networkx_paths_where_shortest_paths_are_unique():
    for seed in SEEDS:
        G = random_graph(seed, "digraph", floats=True)      # real weights: no ties
        both("johnson", G, exact=False)


def test_barycenter_attr_is_written_as_networkx_writes_it():
    for seed in SEEDS:
        for kind in ("graph", "digraph"):
            G, H = random_graph(seed, kind), random_graph(seed, kind)
            same(lambda: nx.barycenter(G, weight="weight", attr="bary", backend="floydwarp"),
                 lambda: nx.barycenter(H, weight="weight", attr="bary", backend="networkx"))
            assert dict(G.nodes(data="bary")) == dict(H.nodes(data="bary"))


def test_values_are_python_numbers_of_networkx_types():
    G = nx.path_graph(5)
    ecc = nx.eccentricity(G, backend="floydwarp")
    assert ecc == {0: 4, 1: 3, 2: 2, 3: 3, 4: 4} and all(type(v) is int for v in ecc.values())
    assert type(nx.wiener_index(G, backend="floydwarp")) is float                 # undirected: total / 2
    assert type(nx.wiener_index(G.to_directed(), backend="floydwarp")) is int
    assert nx.average_shortest_path_length(nx.Graph([(0, 0)]), backend="floydwarp") == 0
    lengths = dict(nx.all_pairs_dijkstra_path_length(nx.Graph([(0, 1, {"weight": 0.5})]), backend="floydwarp"))
    assert lengths == {0: {0: 0, 1: 0.5}, 1: {1: 0, 0: 0.5}} and type(lengths[0][0]) is int
    assert nx.wiener_index(nx.Graph([(0, 1)], backend="networkx"), backend="floydwarp") == 1.0
    gen = nx.all_pairs_shortest_path_length(G, backend="floydwarp")
    assert hasattr(gen, "__next__") and next(gen) == (0, {0: 0, 1: 1, 2: 2, 3: 3, 4: 4})


def test_null_and_single_node_graphs():
    for G in (nx.Graph(), nx.DiGraph(), nx.Graph([(0, 0)])):
        for name in ("eccentricity", "diameter", "radius", "center", "periphery", "barycenter",
                     "closeness_centrality", "average_shortest_path_length", "wiener_index"):
            both(name, G)
        for name in ("all_pairs_shortest_path_length", "all_pairs_dijkstra_path_length",
                     "all_pairs_bellman_ford_path_length", "johnson"):
            both(name, G)
        if not G.is_directed():
            both("global_efficiency", G)


# ---------------------------------------------------------------------- dispatch
def test_can_run_and_should_run_give_reasons():
    B = nx_backend.BackendInterface
    G = nx.gnm_random_graph(100, 400, seed=1)
    tiny = nx.path_graph(5)
    assert B.can_run("closeness_centrality", (G,), {}) is True
    assert B.should_run("closeness_centrality", (G,), {}) is True
    assert "faster" in B.should_run("closeness_centrality", (G,), {"u": 3})
    assert "small" in B.should_run("diameter", (tiny,), {})
    assert "usebounds" in B.can_run("diameter", (G,), {"usebounds": True})
    assert B.can_run("diameter", (G.to_directed(),), {"usebounds": True}) is True    # NetworkX ignores it
    assert "sp=" in B.can_run("eccentricity", (G,), {"sp": {}})
    assert "e=" in B.can_run("center", (G, {0: 1}), {})
    assert "method" in B.can_run("average_shortest_path_length", (G,), {"method": "magic"})
    with pytest.raises(TypeError, match=r"diameter\(\) got an unexpected keyword argument 'bogus'.* takes G, e, "):
        B.can_run("diameter", (G,), {"bogus": 1})
    assert "signature" in B.can_run("diameter", (G, 1, 2, 3, 4), {})             # too many positional arguments
    assert B.can_run("dijkstra_path", (G, 0, 1), {}) is False
    for name in nx_backend.FUNCTIONS:
        assert hasattr(B, name)


def test_memory_budget_declines_with_a_reason(monkeypatch):
    from floydwarp.cpu import storage

    monkeypatch.setattr(storage, "available_memory", lambda: 10_000)
    reason = nx_backend.BackendInterface.can_run("closeness_centrality", (nx.path_graph(100),), {})
    assert isinstance(reason, str) and "GB" in reason
    # and NetworkX, asked for floydwarp first with fallback, answers the call itself
    with nx.config(backend_priority=["floydwarp"], fallback_to_nx=True):
        assert nx.closeness_centrality(nx.path_graph(100)) == nx.closeness_centrality(nx.path_graph(100),
                                                                                     backend="networkx")


def test_calls_floydwarp_cannot_answer_are_networkx_answers():
    """Weights that are not numbers, None on Bellman-Ford, a negative cycle under Floyd-Warshall."""
    G = nx.DiGraph([(0, 1, {"weight": "heavy"}), (1, 2, {"weight": 1})])
    both("eccentricity", nx.Graph([(0, 1, {"weight": "x"})]), weight="weight")
    both("all_pairs_bellman_ford_path_length", G)
    H = nx.DiGraph([(0, 1, {"weight": None}), (1, 0, {"weight": 1})])
    both("all_pairs_bellman_ford_path_length", H)
    both("all_pairs_dijkstra_path_length", H)                  # Dijkstra: None hides the edge
    both("wiener_index", H, weight=lambda u, v, d: d["weight"])
    C = nx.DiGraph([(0, 1, {"weight": 1}), (1, 0, {"weight": -3})])
    both("average_shortest_path_length", C, weight="weight", method="floyd-warshall")
    both("average_shortest_path_length", C, weight="weight", method="bellman-ford")


# ---------------------------------------------------------------------- the converted graph
def test_edges_read_once_are_kept_until_the_graph_changes():
    """The edges read for a call live on the converted graph NetworkX caches in
    ``G.__networkx_cache__``; a change through G's methods drops them (NetworkX clears the
    cache), so the next call reads the changed graph."""
    from floydwarp.nx_backend.stages import recording

    G = nx.path_graph(60)
    first = nx.closeness_centrality(G, backend="floydwarp")
    converted = list(G.__networkx_cache__["backends"]["floydwarp"].values())
    assert any(g.edge_reads for g in converted)
    with recording() as seconds:
        assert nx.closeness_centrality(G, backend="floydwarp") == first
    assert seconds["convert"] < 0.01                       # a dict lookup: nothing read again
    G.add_edge(0, 59, weight=7)
    assert G.__networkx_cache__ == {}
    changed = nx.closeness_centrality(G, backend="floydwarp")
    assert changed != first and changed == nx.closeness_centrality(G, backend="networkx")
    for weight in ("weight", None):
        for name in ("average_shortest_path_length", "wiener_index"):
            assert (getattr(nx, name)(G, weight=weight, backend="floydwarp")
                    == getattr(nx, name)(G, weight=weight, backend="networkx"))
    G.add_edge(0, 59, weight=2)                            # new data on an edge that exists
    assert nx.wiener_index(G, weight="weight", backend="floydwarp") == nx.wiener_index(G, weight="weight")


@pytest.mark.parametrize("kind", KINDS)
def test_unweighted_graphs_run_breadth_first_and_give_networkx_answers(kind, monkeypatch):
    """Graphs past the BFS's word (64) and batch (256 targets) boundaries, connected or not: the
    solver's ``algorithm="auto"`` takes all-pairs BFS, and every answer is NetworkX's."""
    import sys

    solve_module = sys.modules["floydwarp.solver"]          # the package's ``solve`` is the function
    used = []
    real = solve_module.solve

    def recording_solve(*args, **kwargs):
        result = real(*args, **kwargs)
        used.append(result.algorithm)
        return result

    monkeypatch.setattr(solve_module, "solve", recording_solve)
    directed = "di" in kind
    for n, m in ((70, 150), (130, 700), (300, 2400)):
        G = {"graph": nx.Graph, "digraph": nx.DiGraph, "multigraph": nx.MultiGraph,
             "multidigraph": nx.MultiDiGraph}[kind](nx.gnm_random_graph(n, m, seed=n, directed=directed))
        G.add_edge(3, 3)                                    # a self-loop
        G.add_edge(5, 6)                                    # a parallel edge on multigraphs
        for wf in (True, False):
            both("closeness_centrality", G, wf_improved=wf)
        for name in ("average_shortest_path_length", "wiener_index", "eccentricity", "diameter", "radius",
                     "center", "periphery", "barycenter"):
            both(name, G)
        both("all_pairs_shortest_path_length", G)
        if not directed:
            both("global_efficiency", G, exact=False)
        path = nx.path_graph(n, create_using=G.__class__)   # connected, diameter n - 1
        for name in ("closeness_centrality", "average_shortest_path_length", "eccentricity", "wiener_index"):
            both(name, path)
    assert used and set(used) == {"bfs"}


def test_stages_say_where_a_call_spends_its_time():
    from floydwarp.nx_backend.stages import recording

    G = nx.gnm_random_graph(80, 300, seed=1)
    with recording() as seconds:
        nx.closeness_centrality(G, backend="floydwarp")
    assert {"convert", "solve", "solve.compute", "reduce", "build"} <= set(seconds)
    assert 0 < seconds["solve.compute"] <= seconds["solve"]
    with recording() as seconds:
        dict(nx.all_pairs_shortest_path_length(G, backend="floydwarp"))
    assert seconds["build"] > 0 and "reduce" not in seconds


@pytest.mark.gpu
@pytest.mark.parametrize("kind", KINDS)
def test_the_gpu_solver_gives_networkx_answers(kind, monkeypatch):
    """On the GPU the solver's result stays there (``output="device"``): the measures reduce
    it on the device and bring back n values, the n^2 answers copy it to the host."""
    from floydwarp.nx_backend import graph

    pytest.importorskip("cupy")
    monkeypatch.setattr(graph, "SOLVER_BACKEND", "gpu")
    weighted = ("average_shortest_path_length", "wiener_index", "eccentricity", "diameter", "radius", "center",
                "periphery", "barycenter", "all_pairs_dijkstra_path_length", "all_pairs_bellman_ford_path_length",
                "floyd_warshall")
    for G in [random_graph(seed, kind) for seed in range(6)]:
        both("closeness_centrality", G, distance="weight")
        both("all_pairs_shortest_path_length", G)
        for name in weighted:
            both(name, G, weight="weight")
            both(name, G, weight=None)
        if not G.is_directed():
            both("global_efficiency", G, exact=False)       # sums of 1/d in another order
    big = nx.gnm_random_graph(400, 2400, seed=3, directed="di" in kind)      # the size auto solves on the GPU
    for name in ("closeness_centrality", "wiener_index", "eccentricity", "all_pairs_shortest_path_length"):
        both(name, big)
    np.testing.assert_array_equal(nx.floyd_warshall_numpy(big, backend="floydwarp"), nx.floyd_warshall_numpy(big))
