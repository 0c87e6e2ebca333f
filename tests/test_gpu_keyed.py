"""``fast`` with predecessors on a real device: keyed (gpu/predecessors/keyed.py) against the reference
and against the blocked kernels it replaces."""
from __future__ import annotations

import numpy as np
import pytest

from conftest import require_gpu

cp = require_gpu()

import keyed_model as model  # noqa: E402
import floydwarp as fw  # noqa: E402
from floydwarp.generate import erdos_renyi  # noqa: E402
from floydwarp.gpu.predecessors import keyed  # noqa: E402

from conftest import random_weight_matrix  # noqa: E402
from test_gpu import _solve, check_predecessors, graph, reference  # noqa: E402
from test_keyed import _plan, _start_matrix  # noqa: E402

pytestmark = pytest.mark.gpu


def _fast(g, dtype, **kw):
    """``fast`` with predecessors by keys where they apply (int16 would take witnesses first)."""
    kw.setdefault("predecessor_method", "keyed")
    return _solve(g, "fast", dtype, predecessors=True, **kw)


def _pitched(a, extra=7):
    """``a`` on the device as a view with a longer row pitch."""
    out = cp.zeros((a.shape[0], a.shape[1] + extra), a.dtype)
    out[:, :a.shape[1]] = cp.asarray(a)
    return out[:, :a.shape[1]]


@pytest.mark.parametrize("dtype", ["int16", "int32", "float32", "float64"])
@pytest.mark.parametrize("n", [1, 5, 300, 4100])
def test_pack_and_unpack_kernels_match_the_model(dtype, n):
    rng = np.random.default_rng(n)
    low = 0 if dtype.startswith("float") else -3      # floats take keys for weights >= 0 only
    d = _start_matrix(random_weight_matrix(rng, n, low=low, high=20), dtype)
    kp = keyed.plan_keys(_plan(dtype, n, low, 20), n)
    keys = _pitched(np.zeros((n, n), np.int32))
    keyed.pack(_pitched(d), keys, kp)
    np.testing.assert_array_equal(keys.get(), model.pack(d, kp))
    # keys as a run leaves them: any distance between -INF and INF, any predecessor
    lo, hi = -kp.inf << kp.bits, (kp.inf << kp.bits) + kp.none
    some = rng.integers(lo, hi + 1, size=(n, n)).astype(np.int32)
    out_d, out_p = _pitched(np.zeros((n, n), dtype)), _pitched(np.zeros((n, n), np.int32))
    keyed.unpack(_pitched(some), kp, out_d, out_p)
    want_d, want_p = model.unpack(some, kp, dtype)
    np.testing.assert_array_equal(out_d.get(), want_d)
    np.testing.assert_array_equal(out_p.get(), want_p)


@pytest.mark.parametrize("n", [1, 2, 63, 64, 65, 200, 700])
@pytest.mark.parametrize("dtype", ["int16", "int32"])
@pytest.mark.parametrize("kind", ["pos", "neg"])
@pytest.mark.parametrize("width", [None, 128])
def test_keyed_matches_reference(n, dtype, kind, width):
    """Several wide rounds (width 128) and one round of pivot sub-rounds (default)."""
    g = graph(n, kind)
    ref, _ = reference(n, kind)
    r = _fast(g, dtype, **({"wide_width": width} if width else {}))
    assert r.metadata["predecessors"] == "keyed"
    np.testing.assert_array_equal(r.to_dense(), ref)
    check_predecessors(r, g)


@pytest.mark.parametrize("n", [1, 63, 65, 700])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("width", [None, 128])
def test_float_keys_for_integer_weights(n, dtype, width):
    """Non-negative integer weights: keys, the float run's distances bit for bit; negative
    or fractional weights: the blocked kernels."""
    g = graph(n, "pos")
    r = _fast(g, dtype, **({"wide_width": width} if width else {}))
    assert r.metadata["predecessors"] == "keyed"
    np.testing.assert_array_equal(r.dist, _solve(g, "fast", dtype).dist)
    check_predecessors(r, g)
    if n > 1:
        r = _fast(graph(n, "neg"), dtype)
        assert r.metadata["predecessors"] == "blocked"
        np.testing.assert_array_equal(r.to_dense(), reference(n, "neg")[0])
        check_predecessors(r, graph(n, "neg"))
        src, dst, w = g.edges()
        half = fw.Graph.from_edges(src, dst, w + 0.5, n=n)
        r = _fast(half, dtype)
        assert r.metadata["predecessors"] == "blocked"
        ref = fw.solve(half, backend="reference", dtype="float64").to_dense()
        np.testing.assert_allclose(r.to_dense(), ref, rtol=1e-6)
        check_predecessors(r, half)


@pytest.mark.parametrize("dtype", ["int16", "int32", "float32"])
def test_keyed_and_blocked_agree_on_distances(dtype):
    g = erdos_renyi(2100, 5, seed=11)
    keyed = _fast(g, dtype, wide_width=1024)
    blocked = _fast(g, dtype, predecessor_method="blocked")
    assert keyed.metadata["predecessors"] == "keyed" and blocked.metadata["predecessors"] == "blocked"
    np.testing.assert_array_equal(keyed.dist, blocked.dist)
    check_predecessors(keyed, g)


def test_int32_keys_too_narrow_fall_back_to_blocked():
    # a path of heavy edges: distances reach 299 * 100000, far above the key INF of
    # 2**21 - 1 for 300 vertices, though int32 holds them
    n = 300
    g = fw.Graph.from_edges(np.arange(n - 1), np.arange(1, n), np.full(n - 1, 100000), n=n)
    r = _fast(g, "int32")
    assert r.metadata["predecessors"] == "blocked"
    assert r.dist[0, n - 1] == 100000 * (n - 1)
    assert r.path(0, n - 1) == list(range(n))


def test_zero_weight_cycles_give_routes_that_end():
    # undirected zero-weight edges are zero-weight cycles: a loop of predecessors is
    # possible there, and solve() recomputes in k order when one appears
    rng = np.random.default_rng(5)
    n = 300
    src, dst = rng.integers(0, n, 4000), rng.integers(0, n, 4000)
    w = rng.integers(0, 3, 4000)
    g = fw.Graph.from_edges(np.r_[src, dst], np.r_[dst, src], np.r_[w, w], n=n)
    r = _fast(g, "int32")
    ref = fw.solve(g, backend="reference", dtype="float64")
    np.testing.assert_array_equal(r.to_dense(), ref.to_dense())
    check_predecessors(r, g)


@pytest.mark.parametrize("method", ["keyed", "blocked"])     # witnesses leave zero weights to blocked
def test_a_zero_weight_cycle_leaves_the_diagonal_without_predecessor(method):
    """0 -> 1 -> 0 weighs 0: the keys' tie at d[0][0] = 0 went to the cycle's vertex 1 (the
    start key's predecessor, none, is the largest), so pred[0][0] was 1 where SciPy, the CPU
    and the blocked kernels give none.  Found by a random hunt of fw.floyd_warshall (session 17)."""
    g = fw.Graph.from_edges([0, 1, 1, 2, 3], [1, 0, 2, 3, 2], [0, 0, 3, 1, 0], n=5)
    r = _fast(g, "int32", predecessor_method=method)
    assert r.metadata["predecessors"] == method
    check_predecessors(r, g)
    np.testing.assert_array_equal(np.diag(cp.asnumpy(cp.asarray(r.pred))), fw.NO_PREDECESSOR)


def test_scipy_drop_in_on_the_gpu_gives_scipys_diagonal():
    sparse = pytest.importorskip("scipy.sparse")
    from scipy.sparse.csgraph import floyd_warshall as scipy_fw

    rng = np.random.default_rng(17)
    for n in (3, 10, 33, 70):
        m = sparse.random(n, n, density=0.3, random_state=rng, format="csr")
        m.data = rng.integers(0, 3, m.nnz).astype(float)      # explicit zeros: zero-weight cycles
        want_d, want_p = scipy_fw(m, return_predecessors=True)
        got_d, got_p = fw.floyd_warshall(m, return_predecessors=True, backend="gpu")
        np.testing.assert_array_equal(got_d, want_d)
        np.testing.assert_array_equal(np.diag(got_p), np.diag(want_p))


def test_negative_cycle_is_found_with_predecessors():
    g = graph(257, "cycle")
    ref = fw.solve(g, backend="reference", dtype="float64")
    for dtype in ("int16", "int32"):
        r = fw.solve(g, backend="gpu", algorithm="fast", dtype=dtype, predecessors=True)
        assert r.has_negative_cycle == ref.has_negative_cycle
        np.testing.assert_array_equal(r.negative_cycle_vertices, ref.negative_cycle_vertices)


def test_keys_phase_is_timed():
    r = _fast(graph(1000, "pos"), "int32", phases=True, wide_width=256)
    assert {"keys", "phase1", "phase2", "phase3"} <= set(r.timings)
    # each phase lies inside the run; their sum may exceed it, as the lookahead's side stream
    # runs the next round's pivot phases beside phase 3 (seen under -n 12 on one GPU)
    assert all(r.timings[p] <= r.timings["compute"] * 1.01 for p in ("keys", "phase1", "phase2", "phase3"))


def test_device_input_keeps_keyed_result_on_device():
    m = cp.asarray(graph(257, "neg").to_matrix("float64", np.inf))
    r = fw.solve(m, backend="gpu", algorithm="fast", dtype="int16", predecessors=True)
    assert isinstance(r.pred, cp.ndarray) and r.metadata["predecessors"] == "keyed"
    np.testing.assert_array_equal(r.to_host().to_dense(), reference(257, "neg")[0])
    check_predecessors(r, graph(257, "neg"))
