"""floydwarp.floyd_warshall against scipy.sparse.csgraph.floyd_warshall on SciPy's conventions."""
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings, strategies as st
from scipy.sparse.csgraph import NegativeCycleError as ScipyNegativeCycleError
from scipy.sparse.csgraph import floyd_warshall as scipy_fw

import floydwarp as fw
from conftest import path_length
from floydwarp.scipy_compat import TEXTBOOK_MAX_N

#: "auto" runs SciPy's loop on small graphs (scipy_compat.TEXTBOOK_MAX_N), "cpu" the engine
BACKENDS = ["reference", "auto", "cpu"]


def random_dense(rng, n, density, low, integer):
    w = rng.integers(low, low + 10, size=(n, n)).astype(float) if integer else rng.uniform(low, low + 10, (n, n))
    w[rng.random((n, n)) >= density] = 0
    return w


def assert_same(graph, backend, **kw):
    try:
        expected = scipy_fw(graph, **kw)
    except ScipyNegativeCycleError:
        with pytest.raises(ScipyNegativeCycleError):
            fw.floyd_warshall(graph, backend=backend, **kw)
        return
    got = fw.floyd_warshall(graph, backend=backend, **kw)
    if kw.get("return_predecessors"):
        np.testing.assert_allclose(got[0], expected[0], rtol=1e-12)
        assert got[1].dtype == np.int32
        return got
    assert got.dtype == np.float64
    np.testing.assert_allclose(got, expected, rtol=1e-12)
    return got


@settings(max_examples=60, deadline=None)
@given(n=st.integers(1, 30), seed=st.integers(0, 2**32 - 1), density=st.floats(0, 1),
       low=st.integers(-2, 3), integer=st.booleans(), directed=st.booleans(), unweighted=st.booleans(),
       kind=st.sampled_from(["dense", "csr", "csc", "masked", "list"]), backend=st.sampled_from(BACKENDS))
def test_matches_scipy(n, seed, density, low, integer, directed, unweighted, kind, backend):
    rng = np.random.default_rng(seed)
    w = random_dense(rng, n, density, low, integer)
    if kind == "dense":
        graph = w
    elif kind == "list":
        graph = w.tolist()
    elif kind == "masked":
        graph = np.ma.masked_array(w, mask=rng.random((n, n)) < 0.2)
    else:
        # explicit zeros in sparse input are zero-weight edges
        mask = rng.random((n, n)) < density
        i, j = np.nonzero(mask)
        data = np.where(rng.random(i.size) < 0.2, 0.0, w[i, j])
        graph = (sp.csr_matrix if kind == "csr" else sp.csc_matrix)((data, (i, j)), shape=(n, n))
    assert_same(graph, backend, directed=directed, unweighted=unweighted)


@settings(max_examples=30, deadline=None)
@given(n=st.integers(1, 25), seed=st.integers(0, 2**32 - 1), directed=st.booleans())
def test_predecessors_give_shortest_paths(n, seed, directed):
    rng = np.random.default_rng(seed)
    w = rng.uniform(0.5, 10, size=(n, n))
    w[rng.random((n, n)) < 0.6] = 0
    dist, pred = fw.floyd_warshall(w, directed=directed, return_predecessors=True)
    sdist, spred = scipy_fw(w, directed=directed, return_predecessors=True)
    np.testing.assert_allclose(dist, sdist)
    # random float weights have no ties: the predecessor matrix is unique
    assert np.array_equal(pred, spred)
    wd = np.where(w == 0, np.inf, w)
    if not directed:
        wd = np.minimum(wd, wd.T)
    for i in range(n):
        for j in range(n):
            if i != j and np.isfinite(dist[i, j]):
                path = [j]
                while path[-1] != i:
                    path.append(pred[i, path[-1]])
                assert np.isclose(path_length(wd, path[::-1]), dist[i, j])


def test_negative_cycle_error_is_scipys():
    g = np.array([[0, 1, 0], [0, 0, -3], [1, 0, 0]], dtype=float)
    with pytest.raises(ScipyNegativeCycleError, match=r"Negative cycle in nodes \[0 1 2\]"):
        fw.floyd_warshall(g)
    with pytest.raises(fw.NegativeCycleError) as info:
        fw.floyd_warshall(g)
    assert info.value.vertices == [0, 1, 2]


def test_self_loops_ignored_as_in_scipy():
    g = np.array([[-5.0, 1], [0, 7]])
    np.testing.assert_array_equal(fw.floyd_warshall(g), scipy_fw(g))


def test_overwrite_writes_into_input():
    g = np.array([[0, 1, 0], [0, 0, 2], [0, 0, 0]], dtype=np.float64)
    out = fw.floyd_warshall(g, overwrite=True)
    assert out is g and g[0, 2] == 3


def test_docstring_example():
    graph = sp.csr_matrix([[0, 1, 2, 0], [0, 0, 0, 1], [2, 0, 0, 3], [0, 0, 0, 0]])
    dist, pred = fw.floyd_warshall(graph, directed=False, return_predecessors=True)
    sd, spd = scipy_fw(graph, directed=False, return_predecessors=True)
    assert np.array_equal(dist, sd) and np.array_equal(pred, spd)


def test_bad_shapes_raise_like_scipy():
    with pytest.raises(ValueError):
        fw.floyd_warshall(np.zeros((2, 3)))


@settings(max_examples=80, deadline=None)
@given(n=st.integers(1, 12), seed=st.integers(0, 2**32 - 1), kind=st.sampled_from(["csr", "csc"]),
       index=st.sampled_from([np.int32, np.int64]), directed=st.booleans(), unweighted=st.booleans())
def test_compressed_input_as_stored_matches_scipy(n, seed, kind, index, directed, unweighted):
    """CSR and CSC matrices as they are stored -- duplicates, unsorted indices, explicit zeros,
    self-loops, inf and NaN entries -- read in one pass as SciPy reads them."""
    rng = np.random.default_rng(seed)
    counts = rng.integers(0, 4, n)
    indptr = np.r_[0, np.cumsum(counts)].astype(index)
    indices = rng.integers(0, n, int(indptr[-1])).astype(index)
    data = rng.choice([0.0, 1.0, 2.5, 7.0, 3.0, np.inf, np.nan, -0.5], indices.size)
    graph = (sp.csr_matrix if kind == "csr" else sp.csc_matrix)((data, indices, indptr), shape=(n, n))
    assert_same(graph, "auto", directed=directed, unweighted=unweighted)
    assert_same(graph, "auto", directed=directed, unweighted=unweighted, return_predecessors=True)


@pytest.mark.parametrize("dtype", [np.int8, np.int64, np.float32, bool])
def test_compressed_input_of_other_number_types(dtype):
    w = np.array([[0, 3, 0], [1, 0, 2], [0, 5, 0]]).astype(dtype)
    for graph in (sp.csr_matrix(w), sp.csc_matrix(w)):
        assert_same(graph, "auto")
        assert_same(graph, "auto", directed=False)


@settings(max_examples=60, deadline=None)
@given(n=st.integers(0, TEXTBOOK_MAX_N + 2), seed=st.integers(0, 2**32 - 1), density=st.floats(0, 1),
       low=st.integers(-3, 2), integer=st.booleans(), directed=st.booleans(), kind=st.sampled_from(["dense", "csr"]))
def test_small_graphs_are_scipys_to_the_bit(n, seed, density, low, integer, directed, kind):
    """Up to TEXTBOOK_MAX_N vertices floyd_warshall runs SciPy's own loop: distances and
    predecessors equal SciPy's exactly, ties included; a negative cycle raises the engine's
    error (same vertices); one vertex past the limit the engine answers."""
    rng = np.random.default_rng(seed)
    w = random_dense(rng, n, density, low, integer)
    graph = sp.csr_matrix(w) if kind == "csr" else w
    try:
        expected = scipy_fw(graph, directed=directed, return_predecessors=True)
    except ScipyNegativeCycleError:
        with pytest.raises(fw.NegativeCycleError) as small:
            fw.floyd_warshall(graph, directed=directed, return_predecessors=True)
        with pytest.raises(fw.NegativeCycleError) as engine:
            fw.floyd_warshall(graph, directed=directed, backend="cpu")
        assert small.value.vertices == engine.value.vertices and str(small.value) == str(engine.value)
        return
    dist, pred = fw.floyd_warshall(graph, directed=directed, return_predecessors=True)
    if n <= TEXTBOOK_MAX_N:
        assert np.array_equal(dist, expected[0]) and np.array_equal(pred, expected[1])
    else:
        np.testing.assert_allclose(dist, expected[0], rtol=1e-12)
    assert np.array_equal(fw.floyd_warshall(graph, directed=directed), dist)


def test_small_graph_weights_survive_a_negative_cycle():
    """The loop runs on a copy when weights are negative, so the engine, which names the
    cycle's vertices, reads the weights as given; the input is never written."""
    g = np.array([[0, 1, 0, 0], [0, 0, -3, 0], [1, 0, 0, 0], [0, 0, 0, 0]], dtype=float)
    before = g.copy()
    with pytest.raises(fw.NegativeCycleError, match=r"Negative cycle in nodes \[0 1 2\]"):
        fw.floyd_warshall(g, overwrite=True)
    assert np.array_equal(g, before)
