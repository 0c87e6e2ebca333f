"""solve() end to end on the reference backend, against independent references."""
import math

import time

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from scipy.sparse.csgraph import floyd_warshall as scipy_fw

import floydwarp as fw
from conftest import path_length, random_weight_matrix, triple_loop


def scipy_reference(w):
    """SciPy on a dense matrix with inf = no edge (explicit zeros kept as edges via sparse input)."""
    import scipy.sparse as sp
    n = w.shape[0]
    finite = np.isfinite(w)
    np.fill_diagonal(finite, False)
    i, j = np.nonzero(finite)
    return scipy_fw(sp.csr_matrix((w[i, j], (i, j)), shape=(n, n)))


def expected_cycle_vertices(w, expected):
    """Vertices of strongly connected components holding a negative-diagonal vertex."""
    from scipy.sparse.csgraph import connected_components
    adj = np.isfinite(w)
    _, comp = connected_components(adj, directed=True, connection="strong")
    bad = set(comp[np.diagonal(expected) < 0])
    return {v for v in range(len(comp)) if comp[v] in bad}


@settings(max_examples=60, deadline=None)
@given(n=st.integers(0, 40), seed=st.integers(0, 2**32 - 1), density=st.floats(0.0, 1.0),
       low=st.integers(-3, 5), dtype=st.sampled_from(["auto", "int32", "int64", "float32", "float64"]))
def test_reference_backend_matches_triple_loop(n, seed, density, low, dtype):
    rng = np.random.default_rng(seed)
    w = random_weight_matrix(rng, n, density=density, low=low, high=low + 9)
    expected = triple_loop(w)
    negative_cycle = bool(np.any(np.diagonal(expected) < 0)) if n else False
    r = fw.solve(w, backend="reference", dtype=dtype, predecessors=True)
    assert r.has_negative_cycle == negative_cycle
    if negative_cycle:
        assert set(r.negative_cycle_vertices) == expected_cycle_vertices(w, expected)
        return
    assert np.array_equal(r.to_dense(), expected)
    if n:
        assert np.array_equal(r.to_dense(), scipy_reference(w))
    for i in range(n):
        for j in range(n):
            if i != j and math.isfinite(expected[i, j]):
                p = r.path(i, j)
                assert p[0] == i and p[-1] == j
                assert path_length(w, p) == expected[i, j]


@settings(max_examples=20, deadline=None)
@given(n=st.integers(1, 25), seed=st.integers(0, 2**32 - 1))
def test_float_weights_within_rounding(n, seed):
    rng = np.random.default_rng(seed)
    w = random_weight_matrix(rng, n, density=0.4, low=0, high=10, integer=False)
    r = fw.solve(w, backend="reference")
    # fractional weights give float64, unless no edge is kept (a non-negative self-loop is dropped)
    assert r.dtype == np.float64 or not np.isfinite(w[~np.eye(n, dtype=bool)]).any()
    np.testing.assert_allclose(r.to_dense(), triple_loop(w), rtol=1e-12)


@pytest.mark.parametrize("n", [0, 1, 2])
def test_tiny_graphs(n):
    w = np.full((n, n), np.inf)
    if n == 2:
        w[0, 1] = 4
    r = fw.solve(w, backend="reference")
    assert r.n == n and not r.has_negative_cycle
    if n == 2:
        assert r.distance(0, 1) == 4 and r.distance(1, 0) == math.inf


def test_negative_self_loop_is_a_negative_cycle():
    r = fw.solve(fw.Graph.from_edges([0, 1], [0, 2], [-1, 3]), backend="reference")
    assert r.has_negative_cycle and list(r.negative_cycle_vertices) == [0]


def test_int16_never_overflows_with_negative_cycles():
    # A dense negative cycle makes Floyd-Warshall's entries grow exponentially;
    # clamping at -INF keeps int16 arithmetic exact enough to detect it.
    g = fw.generate.erdos_renyi(60, 90, seed=3, weights=(-16, 16))
    r16 = fw.solve(g, backend="reference", dtype="int16")
    r64 = fw.solve(g, backend="reference", dtype="float64")
    assert r16.has_negative_cycle and r64.has_negative_cycle
    assert set(r16.negative_cycle_vertices) == set(r64.negative_cycle_vertices)


def test_explicit_int16_checked_after_run():
    # (n-1) * 16 > 16383, so int16 is not provable up front, but the diameter is small:
    # the run is verified afterwards and accepted.
    g = fw.generate.erdos_renyi(1100, 5, seed=1)
    r = fw.solve(g, backend="reference", dtype="int16")
    assert r.metadata["dtype_verified_after_run"]
    assert np.array_equal(r.dist.astype(np.int64), fw.solve(g, backend="reference", dtype="int32").dist)


def test_explicit_int16_refused_when_answer_does_not_fit():
    # a path of 1100 vertices with weight 16: the distance 17584 does not fit int16
    n = 1100
    g = fw.Graph.from_edges(np.arange(n - 1), np.arange(1, n), np.full(n - 1, 16))
    with pytest.raises(fw.DtypeError, match="int16 was too narrow.*use int32"):
        fw.solve(g, backend="reference", dtype="int16")


def test_explicit_dtype_refused_before_run_with_negative_weights():
    g = fw.Graph.from_edges(np.arange(2000), np.arange(1, 2001), np.full(2000, -9))
    with pytest.raises(fw.DtypeError, match="use int32"):
        fw.solve(g, backend="reference", dtype="int16")


def test_result_queries_and_errors():
    g = fw.Graph.from_edges([0, 1, 3], [1, 2, 3], [2, 3, -1], n=5)
    r = fw.solve(g, backend="reference", predecessors=True)
    assert r.distance(0, 2) == 5 and r.path(0, 2) == [0, 1, 2]
    assert not r.reachable(2, 0)
    with pytest.raises(fw.NoPathError, match="unreachable"):
        r.path(2, 0)
    with pytest.raises(fw.NoPathError, match="negative cycle"):
        r.path(3, 3)
    assert r.distance(3, 3) == -math.inf
    with pytest.raises(fw.FloydwarpError, match="unknown vertex"):
        r.distance(0, 7)
    no_pred = fw.solve(g, backend="reference")
    with pytest.raises(fw.FloydwarpError, match="predecessors=True"):
        no_pred.path(0, 2)


def test_labels_are_queries():
    import networkx as nx
    G = nx.DiGraph()
    G.add_weighted_edges_from([("x", "y", 1.5), ("y", "z", 2.0)])
    r = fw.solve(G, backend="reference", predecessors=True)
    assert r.distance("x", "z") == 3.5 and r.path("x", "z") == ["x", "y", "z"]


def test_save_load_round_trip(tmp_path):
    g = fw.generate.erdos_renyi(50, 10, seed=2)
    r = fw.solve(g, backend="reference", predecessors=True)
    path = r.save(tmp_path / "r.npz")
    back = fw.Result.load(path)
    assert np.array_equal(back.dist, r.dist) and np.array_equal(back.pred, r.pred)
    assert back.dtype == r.dtype and back.inf == r.inf and back.backend == "reference"
    assert [p.name for p in tmp_path.iterdir()] == ["r.npz"]     # no temporary left behind


def test_load_refuses_other_files(tmp_path):
    p = tmp_path / "x.npz"
    np.savez(p, a=np.zeros(3))
    with pytest.raises(fw.FloydwarpError, match="not a floydwarp result"):
        fw.Result.load(p)
    np.save(tmp_path / "bare.npy", np.zeros(3))        # was a TypeError from np.load's array
    with pytest.raises(fw.FloydwarpError, match="bare.npy: not a floydwarp result file .a single NumPy array, "
                                                "not an archive; a .npy result .* floydwarp.io.read_result"):
        fw.Result.load(tmp_path / "bare.npy")


def test_load_points_a_npy_result_to_read_result(tmp_path):
    """`floydwarp solve -o r.npy` writes the .npy layout: Result.load says which reader takes it."""
    from floydwarp.io import read_result, write_result

    r = fw.solve(fw.Graph.from_edges([0, 1], [1, 2], [1, 2], labels=["a", "b", "c"]), backend="reference",
                 dtype="int32", predecessors=True)
    write_result(r, tmp_path / "r.npy")
    with pytest.raises(fw.FloydwarpError, match="floydwarp.io.read_result"):
        fw.Result.load(tmp_path / "r.npy")
    assert read_result(tmp_path / "r.npy").path("a", "c") == ["a", "b", "c"]


def test_unknown_backend_and_algorithm():
    with pytest.raises(fw.FloydwarpError, match="unknown backend 'nope'"):
        fw.solve(np.zeros((2, 2)), backend="nope")
    with pytest.raises(fw.FloydwarpError, match="has no algorithm 'nope'"):
        fw.solve(np.zeros((2, 2)), backend="reference", algorithm="nope")


def test_rate_and_timings():
    r = fw.solve(fw.generate.erdos_renyi(64, 20, seed=0), backend="reference")
    assert r.timings["compute"] > 0 and r.relaxations_per_second > 0


@pytest.mark.parametrize("backend", ["cpu", "reference"])
def test_every_result_carries_its_stage_breakdown(backend):
    """prepare, the engine's stages (start matrix, compilation, compute), finish -- in order,
    adding up to the whole call."""
    w = fw.generate.erdos_renyi(100, 10, seed=2).to_matrix("float64", np.inf)
    t0 = time.perf_counter()
    r = fw.solve(w, backend=backend)
    wall = time.perf_counter() - t0
    stages = list(r.timings)
    assert stages[0] == "prepare" and stages[-1] == "finish"
    assert "start" in stages and stages.index("start") < stages.index("compute")
    assert all(v >= 0 for v in r.timings.values())
    assert r.time == pytest.approx(sum(r.timings.values())) and r.time <= wall


def test_progress_callback_reaches_the_end():
    seen = []
    fw.solve(fw.generate.erdos_renyi(100, 20, seed=0), backend="reference", progress=lambda d, t: seen.append((d, t)))
    assert seen and seen[-1] == (100, 100)


def test_erdos_renyi_real_weights():
    g = fw.generate.erdos_renyi(200, 30, seed=5, weights=(1, 16), real=True)
    _, _, w = g.edges()
    assert w.dtype == np.float64 and (w >= 1).all() and (w < 16).all()
    assert not np.array_equal(w, np.round(w)) and not g.weight_stats().integral
