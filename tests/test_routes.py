"""Routes and queries: Result.paths_from / distances_from / update_edge and the path / query commands."""
from __future__ import annotations

import json
import math
import re

import networkx as nx
import numpy as np
import pytest

import floydwarp as fw
import floydwarp.cli.path  # noqa: F401  (registers the command)
import floydwarp.cli.query  # noqa: F401
import floydwarp.io as fio
from floydwarp.cli.app import app

from cli_runner import cli_runner

runner = cli_runner()


def random_digraph(seed, n=14, p=0.25, low=0, high=9, potential=0):
    """A NetworkX digraph with integer weights; ``potential`` adds h(u) - h(v) (negative
    weights, never a negative cycle)."""
    rng = np.random.default_rng(seed)
    h = rng.integers(0, potential + 1, n)
    G = nx.DiGraph()
    G.add_nodes_from(f"n{i}" for i in range(n))
    for u in range(n):
        for v in range(n):
            if u != v and rng.random() < p:
                G.add_edge(f"n{u}", f"n{v}", weight=int(rng.integers(low, high + 1) + h[u] - h[v]))
    return G


def route_weight(G, route):
    return sum(G[a][b]["weight"] for a, b in zip(route, route[1:]))


# ---------------------------------------------------------------------- routes vs NetworkX
@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("potential", [0, 6])
def test_paths_from_match_networkx_reconstruct_path(seed, potential):
    G = random_digraph(seed, potential=potential)
    pred, dist = nx.floyd_warshall_predecessor_and_distance(G)
    r = fw.solve(G, predecessors=True, backend="reference")
    for u in G:
        routes = r.paths_from(u)
        reachable = {v for v in G if dist[u][v] < math.inf}
        assert set(routes) == reachable
        assert routes[u] == [u]
        for v, route in routes.items():
            assert route[0] == u and route[-1] == v
            assert route_weight(G, route) == dist[u][v] == r.distance(u, v)
            if v != u:
                # same Floyd-Warshall order, same strict-improvement rule: the very same route
                assert route == nx.reconstruct_path(u, v, pred)
                assert route == r.path(u, v)


@pytest.mark.parametrize("seed", range(3))
def test_routes_are_shortest_on_the_default_backend(seed):
    G = random_digraph(seed + 10, n=30, p=0.2, potential=4)
    dist = dict(nx.all_pairs_bellman_ford_path_length(G))
    r = fw.solve(G, predecessors=True)
    for u in list(G)[:10]:
        for v, route in r.paths_from(u).items():
            assert route_weight(G, route) == dist[u][v]


def test_distances_from_and_paths_from_skip_what_has_no_shortest_path():
    # 0 -> 1 <-> 2 (negative cycle) -> 3; 4 isolated; 0 -> 5 fine
    edges = [(0, 1, 1), (1, 2, -2), (2, 1, 1), (2, 3, 1), (0, 5, 7)]
    s, d, w = zip(*edges)
    r = fw.solve(fw.Graph.from_edges(s, d, w, n=6), predecessors=True, backend="reference")
    assert r.has_negative_cycle
    assert r.paths_from(0) == {0: [0], 5: [0, 5]}
    assert r.distances_from(0) == {0: 0, 1: -math.inf, 2: -math.inf, 3: -math.inf, 4: math.inf, 5: 7}
    assert r.paths_from(4) == {4: [4]}
    with pytest.raises(fw.NoPathError, match="negative cycle"):
        r.path(0, 3)
    no_pred = fw.solve(fw.Graph.from_edges([0], [1], [1]), backend="reference")
    with pytest.raises(fw.FloydwarpError, match="predecessors"):
        no_pred.paths_from(0)


def test_integer_labels_are_not_mistaken_for_indices():
    # DIMACS-style labels 1..n: label 4 is index 3, label 3 is index 2
    g = fw.Graph.from_edges([3, 0, 1], [0, 1, 2], [2, 5, 1], labels=[1, 2, 3, 4])
    r = fw.solve(g, predecessors=True, backend="reference")
    assert r.reachable(4, 3) and r.distance(4, 3) == 8 and r.path(4, 3) == [4, 1, 2, 3]
    assert r.distance(3, 4) == math.inf and not r.reachable(3, 4)
    assert r.paths_from(4)[3] == [4, 1, 2, 3] and r.distances_from(4)[3] == 8


def test_find_vertex_reads_labels_from_command_line_words():
    r = fw.solve(fw.Graph.from_edges([0], [1], [1], labels=[7, "x"]), backend="reference")
    assert r.find_vertex("7") == 7 and r.find_vertex("x") == "x"
    with pytest.raises(fw.FloydwarpError, match="labelled"):
        r.find_vertex("0")
    plain = fw.solve(fw.Graph.from_edges([0], [1], [1]), backend="reference")
    assert plain.find_vertex("1") == 1
    with pytest.raises(fw.FloydwarpError, match="out of range"):
        plain.find_vertex("5")


# ---------------------------------------------------------------------- dynamic edge costs
def check_against_fresh_solve(r, W, labels=None):
    """Every query of the updated result agrees with a full re-solve of weight matrix W."""
    fresh = fw.solve(fw.Graph.from_dense(W, labels=labels), predecessors=True, backend="reference")
    n = W.shape[0]
    assert sorted(r.negative_cycle_vertices.tolist()) == sorted(fresh.negative_cycle_vertices.tolist())
    lab = (lambda i: i) if labels is None else (lambda i: labels[i])
    for i in range(n):
        assert r.distances_from(lab(i)) == fresh.distances_from(lab(i))
        for j, route in r.paths_from(lab(i)).items():
            idx = [r.index(x) for x in route]
            total = sum(W[a, b] for a, b in zip(idx, idx[1:]))
            assert total == r.distance(lab(i), j), (i, j, route)


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("form", ["dense", "edges", "labelled"])
def test_update_edge_sequences_match_full_re_solves(seed, form):
    rng = np.random.default_rng(seed)
    n = 9
    W = np.where(rng.random((n, n)) < 0.3, rng.integers(0, 12, (n, n)).astype(float), np.inf)
    np.fill_diagonal(W, np.inf)
    labels = [f"v{i}" for i in range(n)] if form == "labelled" else None
    if form == "dense":
        g = fw.Graph.from_dense(W)
    else:
        s, d = np.nonzero(np.isfinite(W))
        g = fw.Graph.from_edges(s, d, W[s, d].astype(np.int64), n=n, labels=labels)
    r = fw.solve(g, predecessors=True, backend="reference")
    assert r.graph is not None
    for step in range(25):
        a, b = (int(x) for x in rng.integers(0, n, 2))
        kind = rng.random()
        if kind < 0.15:
            w = None                                    # remove
        elif kind < 0.25:
            w = int(rng.integers(-6, 0))                # negative: may close a negative cycle
        else:
            w = int(rng.integers(0, 15))
        if a == b and w is not None and w >= 0:
            w = None if rng.random() < 0.5 else w
        u, v = (a, b) if labels is None else (labels[a], labels[b])
        r.update_edge(u, v, w)
        W[a, b] = np.inf if w is None else w
        if a == b and w is not None and w >= 0:
            W[a, b] = np.inf                            # a non-negative self-loop is no edge
        check_against_fresh_solve(r, W, labels)
        if r.has_negative_cycle and rng.random() < 0.7:
            # undo the damage so the sequence keeps testing finite distances
            W[a, b] = np.inf
            r.update_edge(u, v, None)
            check_against_fresh_solve(r, W, labels)


def test_decrease_keeps_predecessors_right_and_is_o_n2():
    g = fw.Graph.from_edges([0, 1, 2, 3], [1, 2, 3, 4], [1, 1, 1, 1], n=5)
    r = fw.solve(g, predecessors=True, backend="reference")
    calls = []
    import floydwarp.dynamic as dyn
    original = dyn._resolve
    dyn._resolve = lambda *a: calls.append(a) or original(*a)
    try:
        r.update_edge(0, 3, 1)                          # shortcut: a decrease (new edge)
        assert r.path(0, 4) == [0, 3, 4] and r.distance(0, 4) == 2
        assert r.path(0, 2) == [0, 1, 2]
        assert calls == []                              # no re-solve
        r.update_edge(0, 2, 10)                         # a new edge that helps nobody
        r.update_edge(0, 2, 12)                         # increase of an edge no shortest path uses
        assert calls == [] and r.distance(0, 2) == 2
        r.update_edge(0, 3, 4)                          # increase of a used edge: re-solve
        assert len(calls) == 1 and r.distance(0, 4) == 4 and r.path(0, 4) == [0, 1, 2, 3, 4]
    finally:
        dyn._resolve = original


def test_update_widens_the_dtype_when_a_new_distance_needs_it():
    g = fw.Graph.from_edges([0, 2], [1, 3], [5400, 5400], n=4)
    r = fw.solve(g, predecessors=True, backend="reference")
    assert r.dtype.name == "int16"
    r.update_edge(1, 2, 10000)                          # 0 -> 3 becomes 20800 > int16's INF
    assert r.dtype.name == "int32" and r.distance(0, 3) == 20800 and r.distance(3, 0) == math.inf
    assert r.path(0, 3) == [0, 1, 2, 3]
    r.update_edge(0, 1, 2.5)                            # a fractional weight: float64
    assert r.dtype.name == "float64" and r.distance(0, 3) == 15402.5 and r.distance(3, 0) == math.inf


def test_a_decrease_that_closes_a_negative_cycle_is_reported():
    g = fw.Graph.from_edges([0, 1, 2], [1, 2, 3], [2, 2, 2], n=5)
    r = fw.solve(g, predecessors=True, backend="reference")
    r.update_edge(2, 0, -5)
    assert r.has_negative_cycle and sorted(r.negative_cycle_vertices.tolist()) == [0, 1, 2]
    assert r.distance(0, 3) == -math.inf and r.distance(3, 0) == math.inf and r.distance(4, 4) == 0
    r.update_edge(2, 0, None)
    assert not r.has_negative_cycle and r.distance(0, 3) == 6
    r.update_edge(4, 4, -1)                             # a negative self-loop is a negative cycle
    assert r.negative_cycle_vertices.tolist() == [4]


def test_update_edge_needs_the_graph_and_sane_weights(tmp_path):
    r = fw.solve(fw.Graph.from_edges([0], [1], [3]), predecessors=True, backend="reference")
    loaded = fio.read_result(fio.write_result(r, tmp_path / "r.npz"))
    with pytest.raises(fw.FloydwarpError, match="graph"):
        loaded.update_edge(0, 1, 1)
    for bad in (float("nan"), -math.inf, "3", True):
        with pytest.raises(fw.FloydwarpError):
            r.update_edge(0, 1, bad)
    with pytest.raises(fw.FloydwarpError, match="unknown vertex"):
        r.update_edge(0, 7, 1)
    before = r.graph
    r.update_edge(0, 1, 1)
    assert before.to_matrix("int64")[0, 1] == 3          # the original graph is not modified
    assert r.distance(0, 1) == 1 and r.num_edges == 1


# ---------------------------------------------------------------------- command line
@pytest.fixture
def saved(tmp_path):
    path = tmp_path / "g.gr"
    path.write_bytes(b"p sp 5 5\na 1 2 5\na 2 3 1\na 1 3 9\na 4 1 2\na 5 5 -1\n")
    r = fw.solve(fio.read_graph(path), predecessors=True, backend="reference")
    fio.write_result(r, tmp_path / "g.npz")
    fio.write_result(r, tmp_path / "layout.npy")
    return tmp_path


def invoke(*args):
    return runner.invoke(app, [str(a) for a in args])


@pytest.mark.parametrize("result_name", ["g.npz", "layout.npy"])
def test_path_command(saved, result_name):
    out = invoke("path", saved / result_name, 1, 3)
    assert out.exit_code == 0, out.output
    assert out.stdout.splitlines() == ["from: 1", "to: 3", "distance: 6", "route: 1 -> 2 -> 3"]
    out = invoke("path", saved / result_name, 3, 1)
    assert out.exit_code == 0 and "distance: unreachable" in out.stdout
    out = invoke("path", saved / result_name, 5, 5)
    assert out.exit_code == 0 and "distance: through a negative cycle" in out.stdout


def test_vertices_named_like_negative_numbers(tmp_path):
    """An edge list's label "-3" is a vertex on the command line, not an unknown option (a
    random hunt of the CLI, session 17: 'No such option: -3')."""
    (tmp_path / "g.csv").write_text("-3,a,2\na,-1,5\n")
    r = fw.solve(fio.read_graph(tmp_path / "g.csv"), predecessors=True, backend="reference")
    fio.write_result(r, tmp_path / "g.npz")
    out = invoke("path", tmp_path / "g.npz", "-3", "-1", "--json")
    assert out.exit_code == 0, out.output
    assert json.loads(out.stdout) == {"from": "-3", "to": "-1", "status": "ok", "distance": 7,
                                      "route": ["-3", "a", "-1"]}
    out = invoke("path", tmp_path / "g.npz", "--json", "--", "-1", "-3")
    assert out.exit_code == 0 and json.loads(out.stdout)["status"] == "unreachable"
    out = invoke("query", tmp_path / "g.npz", "--from", "-3", "--to", "-1")
    assert out.exit_code == 0 and "distance: 7" in out.stdout


def test_query_command(saved):
    out = invoke("query", saved / "g.npz", "--from", 4, "--to", 3, "--json")
    assert out.exit_code == 0
    assert json.loads(out.stdout) == {"from": 4, "to": 3, "status": "ok", "distance": 8, "route": [4, 1, 2, 3]}
    out = invoke("query", saved / "g.npz", "--all-from", 4)
    assert out.exit_code == 0
    lines = out.stdout.splitlines()
    assert lines[0] == "from: 4" and lines[1].split() == ["target", "distance", "route"]
    rows = {line.split()[0]: line.split(None, 2)[1:] for line in lines[2:]}
    assert rows["3"] == ["8", "4 -> 1 -> 2 -> 3"] and rows["4"] == ["0", "4"] and rows["5"] == ["unreachable"]
    table = json.loads(invoke("query", saved / "g.npz", "--from", 1, "--json").stdout)
    assert [t["status"] for t in table["targets"]] == ["ok", "ok", "ok", "unreachable", "unreachable"]


@pytest.mark.parametrize("args, fragment", [
    (("path", "g.npz", 0, 1), "unknown vertex '0'"),
    (("path", "missing.npz", 1, 2), "no such file"),
    (("query", "g.npz"), "--from"),
    (("query", "g.npz", "--to", 1), "--to needs --from"),
    (("query", "g.npz", "--all-from", 1, "--from", 2), "not both"),
])
def test_route_commands_report_user_errors_in_one_line(saved, args, fragment):
    out = invoke(*[saved / a if str(a).endswith(".npz") else a for a in args])
    assert out.exit_code == 2, out.output
    assert "Traceback" not in out.output
    err = out.stderr.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: ") and fragment in err[0], err


def broken_npz_files(saved):
    """An empty file, a foreign one and a cut .npz (its directory lost): what an interrupted copy leaves."""
    whole = (saved / "g.npz").read_bytes()
    files = {"empty.npz": b"", "foreign.npz": b"PK\x03\x04 not a zip archive", "cut.npz": whole[: len(whole) // 2]}
    for name, data in files.items():
        (saved / name).write_bytes(data)
    return [saved / name for name in files]


def test_a_broken_result_file_is_one_error_line_naming_it(saved):
    for path in broken_npz_files(saved):
        out = invoke("path", path, 1, 3)
        assert out.exit_code == 2, out.output
        err = out.stderr.strip().splitlines()
        assert err == [f"error: {path}: not a floydwarp result file ({err[0].rsplit('(', 1)[1]}"], err


def test_every_npz_reader_names_a_broken_file(saved):
    for path in broken_npz_files(saved):
        for read, what in ((fw.Result.load, "not a floydwarp result file"),
                           (fw.BatchResult.load, "not a floydwarp batch result file"),
                           (fw.GraphBatch.load, "not a .npz file")):
            with pytest.raises(fw.FloydwarpError, match=f"^{re.escape(str(path))}: {what} "):
                read(path)


def test_a_result_without_vertices_says_so():
    empty = fw.solve(np.zeros((0, 0)), backend="reference")
    for word, fragment in (("0", "vertex 0 is out of range: this result has no vertices"),
                           ("a", "unknown vertex 'a': this result has no vertices")):
        with pytest.raises(fw.FloydwarpError, match=fragment):
            empty.find_vertex(word)
