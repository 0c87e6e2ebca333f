import re
from fractions import Fraction

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp

from floydwarp import FloydwarpError, Graph


def test_from_edges_keeps_lightest_parallel_edge_and_drops_nonnegative_self_loops():
    g = Graph.from_edges([0, 0, 1, 1, 2], [1, 1, 1, 2, 2], [5, 3, 7, 4, -2])
    m = g.to_matrix("int32")
    inf = 1073741823
    assert m.tolist() == [[0, 3, inf], [inf, 0, 4], [inf, inf, -2]]
    assert g.num_edges == 3   # 0->1, 1->2, negative self-loop 2->2


def test_from_edges_default_weight_and_n():
    g = Graph.from_edges([0], [3])
    assert g.n == 4 and g.weight_stats().max_weight == 1


@pytest.mark.parametrize("src, dst, n, msg", [
    ([0, 5], [1, 1], 3, "src vertex id 5 is out of range 0..2"),
    ([0], [-1], 3, "dst vertex id -1 is out of range"),
    ([0.5], [1], 3, "not an integer"),
])
def test_from_edges_refuses_bad_ids(src, dst, n, msg):
    with pytest.raises(FloydwarpError, match=msg):
        Graph.from_edges(src, dst, [1] * len(src), n=n)


def test_from_edges_refuses_nan_and_shape_mismatch():
    with pytest.raises(FloydwarpError, match=r"edge 1 \(1 -> 2\) has weight nan"):
        Graph.from_edges([0, 1], [1, 2], [1.0, np.nan])
    with pytest.raises(FloydwarpError, match="weight has 1 entries"):
        Graph.from_edges([0, 1], [1, 2], [1.0])


def test_from_dense_missing_and_errors():
    w = np.array([[0, 2, 0], [0, 0, 3], [1, 0, 0]], dtype=float)
    g = Graph.from_dense(w, missing=0)
    assert g.num_edges == 3
    g2 = Graph.from_dense(np.where(w == 0, np.inf, w))
    assert np.array_equal(g.to_matrix("int32"), g2.to_matrix("int32"))
    with pytest.raises(FloydwarpError, match="square"):
        Graph.from_dense(np.zeros((2, 3)))
    bad = w.copy(); bad[1, 2] = np.nan
    with pytest.raises(FloydwarpError, match=r"\[1, 2\] has weight nan"):
        Graph.from_dense(bad)


def test_from_dense_masked():
    data = np.array([[0, 4], [9, 0]], dtype=float)
    masked = np.ma.masked_array(data, mask=[[False, False], [True, False]])
    g = Graph.from_dense(masked)
    assert g.to_matrix("int32")[1, 0] == 1073741823 and g.to_matrix("int32")[0, 1] == 4


def test_from_scipy_explicit_zero_is_an_edge():
    a = sp.csr_matrix((np.array([0.0, 2.0]), (np.array([0, 1]), np.array([1, 0]))), shape=(3, 3))
    g = Graph.from_scipy(a)
    m = g.to_matrix("float64")
    assert m[0, 1] == 0 and m[1, 0] == 2 and m[0, 2] == np.inf


def test_from_networkx_labels_and_undirected():
    G = nx.Graph()
    G.add_edge("a", "b", weight=2)
    G.add_edge("b", "c")               # missing weight -> 1
    g = Graph.from_networkx(G)
    assert g.labels == ["a", "b", "c"]
    m = g.to_matrix("int32")
    assert m[0, 1] == m[1, 0] == 2 and m[1, 2] == m[2, 1] == 1


def test_edges_from_dense_round_trip():
    w = np.array([[np.inf, 1, np.inf], [np.inf, -1, 2], [3, np.inf, 5]])
    src, dst, weight = Graph.from_dense(w).edges()
    assert sorted(zip(src.tolist(), dst.tolist(), weight.tolist())) == [
        (0, 1, 1.0), (1, 1, -1.0), (1, 2, 2.0), (2, 0, 3.0)]


def test_weight_stats():
    s = Graph.from_edges([0, 1], [1, 0], [2.5, -1]).weight_stats()
    assert (s.min_weight, s.max_weight, s.integral) == (-1, 2.5, False)
    assert Graph.from_edges([], [], [], n=0).weight_stats().integral


@pytest.mark.parametrize("seed", range(12))
def test_a_matrix_and_its_edges_have_the_same_statistics(seed):
    """A dense matrix's dropped self-loops (its 0 or positive diagonal) counted as weights: a
    unit-weight matrix ran Floyd-Warshall where its edge list ran breadth-first search, and a
    large diagonal entry widened the dtype."""
    import floydwarp as fw

    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 40))
    w = np.where(rng.random((n, n)) < 0.3, rng.choice([1, 1, 1, 2.5, 7, -1] if seed % 3 else [1], (n, n)), np.inf)
    np.fill_diagonal(w, rng.choice([0, 0, 0.5, 1e12, -1] if seed % 2 else [0], n))
    dense = Graph.from_dense(w)
    listed = Graph.from_edges(*dense.edges(), n=n)
    assert dense.weight_stats() == listed.weight_stats()
    a, b = fw.solve(dense, backend="cpu"), fw.solve(listed, backend="cpu")
    assert (a.dtype, a.algorithm, a.has_negative_cycle) == (b.dtype, b.algorithm, b.has_negative_cycle)
    np.testing.assert_array_equal(a.to_dense(), b.to_dense())


def test_a_unit_weight_matrix_is_searched_breadth_first():
    import floydwarp as fw

    w = np.array([[0, 1, np.inf], [np.inf, 0, 1], [1, np.inf, 0]])
    r = fw.solve(w, backend="cpu")
    assert (r.algorithm, r.dtype, r.dist.tolist()) == ("bfs", np.uint8, [[0, 1, 2], [2, 0, 1], [1, 2, 0]])


@pytest.mark.parametrize("n", [0, 1, 7, 100])
def test_device_bands_cover_the_rows_within_the_entry_budget(monkeypatch, n):
    from floydwarp.graph import graph as graph_module

    monkeypatch.setattr(graph_module, "DEVICE_BAND_ENTRIES", 250)
    g = Graph.from_dense(np.zeros((n, n)))
    bands = g.device_bands()
    assert [r for lo, hi in bands for r in range(lo, hi)] == list(range(n))
    assert all((hi - lo) * n <= max(250, n) for lo, hi in bands)


# ---------------------------------------------------------------------- issue 35, item 3
BIG_UINT64 = np.array([2 ** 63 + 5, 3, 2 ** 64 - 1], dtype=np.uint64)


def _uint64_inputs():
    """The same three edges 0->1, 1->2, 0->2 through every input path that takes uint64 weights."""
    src, dst = np.array([0, 1, 0]), np.array([1, 2, 2])
    dense = np.zeros((3, 3), np.uint64)
    dense[src, dst] = BIG_UINT64
    G = nx.DiGraph()
    G.add_nodes_from(range(3))
    G.add_weighted_edges_from(zip(src.tolist(), dst.tolist(), [int(w) for w in BIG_UINT64]))
    coo = sp.coo_matrix((BIG_UINT64, (src, dst)), shape=(3, 3))
    return {
        "edges": Graph.from_edges(src, dst, BIG_UINT64, n=3),
        "edge lists of Python ints": Graph.from_edges(src.tolist(), dst.tolist(), [int(w) for w in BIG_UINT64], n=3),
        **{fmt: coo.asformat(fmt) for fmt in ("csr", "csc", "coo", "lil", "dok")},
        "dense": Graph.from_dense(dense, missing=0),
        "masked": np.ma.masked_array(dense, mask=dense == 0),
        "networkx": Graph.from_networkx(G),
    }


@pytest.mark.parametrize("path", list(_uint64_inputs()))
def test_uint64_weights_above_int64_never_wrap(path):
    """``fw.solve(Graph.from_edges(..., uint64))`` gave -9.22e18 for 2**63 + 5: the graph kept the
    weights as int64.  They are read as float64, as SciPy reads them."""
    import floydwarp as fw
    from scipy.sparse.csgraph import floyd_warshall

    graph = _uint64_inputs()[path]
    with pytest.warns(fw.InexactWarning):
        got = fw.solve(graph).to_dense()
    want = floyd_warshall(sp.csr_matrix((BIG_UINT64.astype(np.float64), ([0, 1, 0], [1, 2, 2])), shape=(3, 3)))
    np.testing.assert_array_equal(got, want)
    assert got[0, 1] == float(2 ** 63 + 5) > 0


@pytest.mark.parametrize("dtype", ["complex128", "timedelta64[s]", "datetime64[s]"])
def test_weights_that_are_not_real_numbers_are_refused_on_every_path(dtype):
    """Complex weights lost their imaginary part on the edge, SciPy and NetworkX paths, with only
    NumPy's ComplexWarning (a dense matrix of them was refused); durations lost their unit."""
    w = np.array([1, 2]).astype(dtype) if dtype != "complex128" else np.array([1 + 2j, 3 + 0j])
    G = nx.DiGraph()
    G.add_weighted_edges_from([(0, 1, w[0]), (1, 2, w[1])])
    makers = [lambda: Graph.from_edges([0, 1], [1, 2], w, n=3), lambda: Graph.from_networkx(G)]
    if dtype == "complex128":                  # SciPy's sparse matrices hold no durations
        makers.append(lambda: Graph.from_scipy(sp.csr_matrix((w, ([0, 1], [1, 2])), shape=(3, 3))))
    for make in makers:
        with pytest.raises(FloydwarpError, match=rf"edge weights must be real numbers; got dtype {re.escape(dtype)}"):
            make()


@pytest.mark.parametrize("value, message", [(None, "edge 1: weight None is not a real number"),
                                            ("3", "edge weights must be real numbers; got dtype <U"),
                                            (10 ** 400, "edge weights must be real numbers within float64's range"),
                                            (Fraction(1, 3), None)])
def test_networkx_weights_must_be_real_numbers(value, message):
    """A NetworkX attribute of None was read as NaN (and refused as "weight nan"), and a string
    such as "3" (NetworkX's read_edgelist keeps text) was parsed, where NetworkX itself fails."""
    G = nx.DiGraph()
    G.add_edge(0, 1, weight=2)
    G.add_edge(1, 2, weight=value)
    if message is None:
        assert Graph.from_networkx(G).to_matrix("float64")[1, 2] == float(value)
        return
    with pytest.raises(FloydwarpError, match=message):
        Graph.from_networkx(G)


def test_uint64_weights_int64_holds_stay_exact_integers():
    g = Graph.from_edges([0, 1], [1, 2], np.array([2 ** 62 - 7, 5], dtype=np.uint64))
    assert g.edges()[2].dtype == np.int64 and g.edges()[2].tolist() == [2 ** 62 - 7, 5]


def test_python_ints_above_int64_never_wrap():
    """``np.asarray([2**63 + 5])`` is uint64: the same path as a uint64 array (NetworkX graphs too)."""
    import floydwarp as fw

    G = nx.DiGraph()
    G.add_edge("a", "b", weight=2 ** 63 + 5)
    for graph in (Graph.from_edges([0], [1], [2 ** 63 + 5], n=2), Graph.from_networkx(G)):
        with pytest.warns(fw.InexactWarning):
            assert fw.solve(graph).distance(0, 1) == float(2 ** 63 + 5)


@pytest.mark.parametrize("w", [np.uint64(2 ** 63 + 5), 2 ** 63 + 5, 2 ** 70])
def test_update_edge_with_a_weight_above_int64(w):
    import floydwarp as fw

    r = fw.solve(Graph.from_edges([0, 1], [1, 2], [1, 1], n=3))
    r.update_edge(2, 0, w)           # crashed: "Python int too large to convert to C long"
    assert r.distance(2, 0) == float(w) and r.distance(1, 0) == float(w) + 1


def test_dense_is_a_read_only_view_of_the_matrix_given():
    w = np.array([[0.0, 2.0], [np.inf, 0.0]])
    g = Graph.from_dense(w)
    assert g.is_dense and np.shares_memory(g.dense, w) and np.array_equal(g.dense, w)
    with pytest.raises(ValueError, match="read-only"):
        g.dense[0, 1] = 5.0
    assert w.flags.writeable                                   # the caller's array is left alone
    assert Graph.from_edges([0], [1], [3]).dense is None


def test_from_edges_takes_a_generator_s_own_edges_with_their_stats():
    """With ``stats`` the arrays are the graph's as they are (no pass reads them); ``sorted``
    says they are in (source, target) order, else they are sorted when first needed."""
    from floydwarp.numeric import WeightStats

    src, dst, w = np.array([1, 0, 0]), np.array([0, 2, 1]), np.array([7, 5, 4])
    stats = WeightStats(3, 4, 7, True)
    g = Graph.from_edges(src, dst, w, n=3, stats=stats)
    assert g.weight_stats() is stats and g.num_edges == 3
    assert [a.tolist() for a in g.csr()] == [[0, 2, 3, 3], [1, 2, 0]]
    assert g.to_matrix("int32", 99).tolist() == [[0, 4, 5], [7, 0, 99], [99, 99, 0]]
    ordered = Graph.from_edges(src[[2, 1, 0]], dst[[2, 1, 0]], w[[2, 1, 0]], n=3, stats=stats, sorted=True)
    assert ordered.to_matrix("int32", 99).tolist() == g.to_matrix("int32", 99).tolist()
    with pytest.raises(TypeError, match="int64 src and dst"):
        Graph.from_edges(src.astype(np.int32), dst, w, n=3, stats=stats)
    with pytest.raises(TypeError, match="with n"):
        Graph.from_edges(src, dst, w, stats=stats)
    with pytest.raises(TypeError, match="sorted=True describes edges given with their stats="):
        Graph.from_edges(src, dst, w, sorted=True)
