"""Results that live on the GPU: queries, edge updates and DLPack input (run with pytest -m gpu)."""
import numpy as np
import pytest

import floydwarp as fw

cupy = pytest.importorskip("cupy")
pytestmark = pytest.mark.gpu


def test_cupy_input_result_stays_on_device_and_answers_queries():
    g = fw.generate.erdos_renyi(300, 5, seed=3)
    w = cupy.asarray(g.to_matrix("float64"))
    r = fw.solve(w, backend="gpu", predecessors=True)
    ref = fw.solve(g, backend="reference", predecessors=True)
    assert isinstance(r.dist, cupy.ndarray)
    assert np.array_equal(cupy.asnumpy(r.to_dense()), ref.to_dense())
    for j in (1, 17, 250):
        if ref.reachable(0, j):
            assert r.distance(0, j) == ref.distance(0, j)
            assert r.path(0, j)[0] == 0 and r.path(0, j)[-1] == j


def test_update_edge_on_device_matches_a_full_resolve():
    rng = np.random.default_rng(5)
    g = fw.generate.erdos_renyi(200, 4, seed=9)
    r = fw.solve(cupy.asarray(g.to_matrix("float64")), backend="gpu", predecessors=True)
    src, dst, w = (np.array(a) for a in g.edges())
    for _ in range(10):
        u, v = (int(x) for x in rng.integers(0, 200, 2))
        if u == v:
            continue
        new = int(rng.integers(1, 6))
        r.update_edge(u, v, new)
        keep = ~((src == u) & (dst == v))
        src, dst, w = np.r_[src[keep], u], np.r_[dst[keep], v], np.r_[w[keep], new]
        ref = fw.solve(fw.Graph.from_edges(src, dst, w, n=200), backend="reference")
        assert isinstance(r.dist, cupy.ndarray)
        assert np.array_equal(cupy.asnumpy(r.to_dense()), ref.to_dense())


def test_dlpack_device_tensor_is_accepted():
    g = fw.generate.erdos_renyi(64, 10, seed=1)
    dense = cupy.asarray(g.to_matrix("float64"))

    class Tensor:                      # a foreign device tensor speaking only DLPack
        def __dlpack__(self, **kw):
            return dense.__dlpack__(**kw)

        def __dlpack_device__(self):
            return dense.__dlpack_device__()

    r = fw.solve(Tensor(), backend="gpu")
    assert np.array_equal(cupy.asnumpy(r.to_dense()), fw.solve(g, backend="reference").to_dense())


@pytest.mark.parametrize("algorithm", ["fast", "blocked"])
def test_zero_weight_cycles_give_valid_routes(algorithm):
    # zero weights make zero-weight cycles, around which a blocked order can close a
    # predecessor loop; solve() must then return k-order predecessors
    g = fw.generate.erdos_renyi(150, 6, seed=2, weights=(0, 2))
    r = fw.solve(g, backend="gpu", algorithm=algorithm, predecessors=True, output="host")
    ref = fw.solve(g, backend="reference")
    assert np.array_equal(r.dist, ref.dist)
    w = g.to_matrix("float64")
    for i in range(0, 150, 7):
        for j in range(150):
            if i != j and ref.reachable(i, j):
                p = r.path(i, j)
                assert sum(w[a, b] for a, b in zip(p, p[1:])) == ref.distance(i, j)
