"""``fast`` with witness predecessors (gpu/predecessors/witness.py) on a real device: the kernel against
its NumPy model, whole runs against the reference, and the fallbacks."""
from __future__ import annotations

import numpy as np
import pytest

from conftest import require_gpu

cp = require_gpu()

import witness_model as model  # noqa: E402
import floydwarp as fw  # noqa: E402
from floydwarp import numeric  # noqa: E402
from floydwarp.errors import FloydwarpError  # noqa: E402
from floydwarp.generate import erdos_renyi  # noqa: E402
from floydwarp.gpu import checks  # noqa: E402
from floydwarp.gpu.predecessors import witness  # noqa: E402
from floydwarp.predecessors import NO_PREDECESSOR, has_loops, walk  # noqa: E402

from test_gpu import _solve, check_predecessors, graph, reference  # noqa: E402

pytestmark = pytest.mark.gpu


def _fast(g, dtype, **kw):
    return _solve(g, "fast", dtype, predecessors=True, **kw)


def _real_graph(n, seed, low=0.01, high=1.0, percent=30):
    """Fractional positive weights: no keys; float runs round."""
    rng = np.random.default_rng(seed)
    hit = rng.random((n, n)) < percent / 100
    np.fill_diagonal(hit, False)
    src, dst = np.nonzero(hit)
    return fw.Graph.from_edges(src, dst, rng.uniform(low, high, src.size), n=n)


def _check_rounded(res, g, rtol):
    """Predecessor routes of a float run: no loops, each within ``rtol`` of its distance."""
    d = res.to_dense()
    pred = cp.asnumpy(res.pred) if isinstance(res.pred, cp.ndarray) else res.pred
    w = g.to_matrix("float64", np.inf)
    n = d.shape[0]
    assert not has_loops(pred)
    reach = np.isfinite(d)
    np.fill_diagonal(reach, False)
    i, j = np.nonzero(reach)
    p = pred[i, j]
    assert ((p >= 0) & (p < n)).all()
    np.testing.assert_allclose(d[i, p] + w[p, j], d[i, j], rtol=rtol)
    assert (pred[~reach] == NO_PREDECESSOR).all()
    rng = np.random.default_rng(n)
    for s in rng.choice(i.size, size=min(100, i.size), replace=False) if i.size else ():
        a, b = int(i[s]), int(j[s])
        path = walk(pred[a], a, b, n)
        np.testing.assert_allclose(sum(w[u, v] for u, v in zip(path, path[1:])), d[a, b], rtol=rtol)


def _pitched(a):
    """A device copy of ``a`` in a matrix with a wider row pitch."""
    out = cp.zeros((a.shape[0], a.shape[1] + 3), a.dtype)[:, :a.shape[1]]
    out[...] = cp.asarray(a)
    return out


def _entry_fields(entries, dtype, keyed):
    """(first word, the weight or key) of packed candidates: the bytes the kernels read
    (a WitnessEntry's padding is left as it falls)."""
    if keyed:
        return entries[:, 0], entries[:, 1]
    at = (8 if entries.shape[1] == 4 else 4) // np.dtype(dtype).itemsize
    return entries[:, 0], np.ascontiguousarray(entries).view(dtype)[:, at]


def _case(dtype, n):
    """(distances of a real run, start matrix, slack) on a host."""
    real = dtype.startswith("float")
    g = _real_graph(n, n) if real else erdos_renyi(n, 20, seed=n)
    start = g.to_matrix(dtype, numeric.inf_of(np.dtype(dtype)))
    np.fill_diagonal(start, 0)
    d = fw.solve(g, backend="gpu", algorithm="fast", dtype=dtype).dist
    return d, start, (n * float(np.finfo(dtype).eps) if real else 0.0)


@pytest.mark.parametrize("dtype", ["int16", "int32", "float32", "float64"])
@pytest.mark.parametrize("n", [1, 2, 37, 300, 1100])
def test_kernel_matches_the_model(dtype, n):
    """Distances of a real run, candidates from the start matrix: the kernel's predecessors
    and misses are the model's, entry for entry (chunks and column groups that do not divide n)."""
    d, start, slack = _case(dtype, n)
    cand = model.candidates(d, start, slack)
    want, want_misses = model.recover(d, cand, slack)
    pad = cp.full((n, n + 5), 7, cp.int32)[:, :n]                # a pitched output view
    dev = witness.Candidates(cp.asarray(cand.seg), cp.asarray(model.pack(cand)), cand.shape, cand.chunks,
                             int((cand.k >= 0).sum()))
    misses = witness.recover(cp.asarray(d), pad, slack, dev)
    assert misses == want_misses == 0
    np.testing.assert_array_equal(pad.get(), want)


@pytest.mark.parametrize("dtype", ["int16", "int32", "float32", "float64"])
@pytest.mark.parametrize("n", [1, 2, 37, 300, 1100, 2100])
def test_device_candidates_are_the_models(dtype, n):
    """witness.candidates (fw_witness_count, fw_witness_fill) on pitched views writes the
    model's segments and entries, for the slack of the run and wider ones (the float
    rounding of d + slack * w), and refuses more candidates than its limit."""
    d, start, slack = _case(dtype, n)
    slacks = [slack, 0.05] if slack else [0.0]
    for s in slacks:
        want = model.candidates(d, start, s)
        built = witness.candidates(_pitched(d), _pitched(start), s, limit=n * n)
        assert built.shape == want.shape and built.chunks == want.chunks
        assert built.count == model.count(d, start, s)
        np.testing.assert_array_equal(built.seg.get(), want.seg)
        for a, b in zip(_entry_fields(built.entries.get(), dtype, want.shape.keyed),
                        _entry_fields(model.pack(want), dtype, want.shape.keyed)):
            np.testing.assert_array_equal(a, b)
        tight = built.count
        assert witness.candidates(cp.asarray(d), cp.asarray(start), s, limit=tight) is not None
        if tight:
            assert witness.candidates(cp.asarray(d), cp.asarray(start), s, limit=tight - 1) is None


@pytest.mark.parametrize("dtype", ["int16", "int32", "float32", "float64"])
@pytest.mark.parametrize("n", [1, 2, 300, 2100])
def test_device_zero_count_matches_numpy(dtype, n):
    rng = np.random.default_rng(n)
    w = rng.integers(1, 9, (n, n)).astype(dtype)
    w[rng.random((n, n)) < 0.01] = 0
    want = int((w == 0).sum() - (np.diagonal(w) == 0).sum())
    assert checks.count_zeros_off_diagonal(_pitched(w)) == want


def test_a_missing_witness_is_counted():
    g = erdos_renyi(300, 20, seed=4)
    start = g.to_matrix("int16", numeric.inf_of(np.dtype("int16")))
    np.fill_diagonal(start, 0)
    d = fw.solve(g, backend="gpu", algorithm="fast", dtype="int16").dist
    cand = model.candidates(d, start, 0.0)
    empty = witness.Candidates(cp.zeros(cand.seg.size, cp.int32), cp.asarray(model.pack(cand)), cand.shape,
                               cand.chunks, 0)
    pred = cp.zeros((300, 300), cp.int32)
    reachable = int((d < numeric.inf_of(d.dtype)).sum()) - 300
    assert witness.recover(cp.asarray(d), pred, 0.0, empty) == reachable
    assert (pred == NO_PREDECESSOR).all()


@pytest.mark.parametrize("n", [1, 2, 63, 65, 700, 2100])
@pytest.mark.parametrize("width", [None, 128])
def test_int16_takes_witnesses(n, width):
    g = graph(n, "pos")
    r = _fast(g, "int16", **({"wide_width": width} if width else {}))
    assert r.metadata["predecessors"] == "witness"
    np.testing.assert_array_equal(r.to_dense(), reference(n, "pos")[0])
    check_predecessors(r, g)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("n", [2, 65, 700, 1500])
def test_fractional_floats_take_witnesses(dtype, n):
    g = _real_graph(n, 10 + n)
    r = _fast(g, dtype)
    assert r.metadata["predecessors"] == "witness"
    ref = fw.solve(g, backend="reference", dtype="float64").to_dense()
    np.testing.assert_allclose(r.to_dense(), ref, rtol=1e-5)
    np.testing.assert_array_equal(r.dist, _solve(g, "fast", dtype).dist)      # the run without predecessors
    _check_rounded(r, g, 1e-5)


def test_half_weights_are_exact():
    g = graph(300, "pos")
    src, dst, w = g.edges()
    half = fw.Graph.from_edges(src, dst, w + 0.5, n=300)
    r = _fast(half, "float32")
    assert r.metadata["predecessors"] == "witness"
    check_predecessors(r, half)


def test_witnesses_and_keys_agree_on_distances():
    g = erdos_renyi(2100, 5, seed=11)
    wit, keys = _fast(g, "int16"), _fast(g, "int16", predecessor_method="keyed")
    assert wit.metadata["predecessors"] == "witness" and keys.metadata["predecessors"] == "keyed"
    np.testing.assert_array_equal(wit.dist, keys.dist)
    check_predecessors(wit, g)


def test_zero_or_negative_weights_take_keys():
    g = graph(300, "pos")
    src, dst, w = g.edges()
    zero = fw.Graph.from_edges(src, dst, w - 1, n=300)         # zero-weight edges: witnesses could loop
    r = _fast(zero, "int16")
    # keys; their loops around zero-weight cycles send solve() to the k-order kernels
    assert r.metadata.get("predecessors") != "witness"
    check_predecessors(r, zero)
    r = _fast(graph(300, "neg"), "int16")
    assert r.metadata["predecessors"] == "keyed"
    check_predecessors(r, graph(300, "neg"))


def test_many_tight_edges_fall_back_to_keys():
    # a complete graph of equal weights: every edge is tight, keys are cheaper
    n = 300
    src, dst = np.nonzero(~np.eye(n, dtype=bool))
    g = fw.Graph.from_edges(src, dst, np.ones(src.size), n=n)
    r = _fast(g, "int16")
    assert r.metadata["predecessors"] == "keyed"
    check_predecessors(r, g)
    # without keys to fall back on, witnesses do it anyway
    r = _fast(g, "float32", predecessor_method="witness")
    assert r.metadata["predecessors"] == "witness"
    check_predecessors(r, g)


def test_predecessor_method_option():
    g = graph(300, "pos")
    for method in ("keyed", "witness", "blocked"):
        r = _fast(g, "int16", predecessor_method=method)
        assert r.metadata["predecessors"] == method
        check_predecessors(r, g)
    # witnesses need positive weights: blocked takes over
    r = _fast(graph(300, "neg"), "int16", predecessor_method="witness")
    assert r.metadata["predecessors"] == "blocked"
    with pytest.raises(FloydwarpError, match="predecessor_method"):
        _fast(g, "int16", predecessor_method="fastest")


def test_witness_phase_is_timed_and_solve_skips_the_loop_check(monkeypatch):
    import sys

    solve_mod = sys.modules["floydwarp.solver"]

    def no_loop_check(out):
        raise AssertionError("witness predecessors cannot loop: no check expected")

    g = _real_graph(1000, 3)
    monkeypatch.setattr(solve_mod, "has_loops", no_loop_check)
    r = _fast(g, "float32", phases=True, wide_width=256)
    assert {"witness", "phase1", "phase2", "phase3"} <= set(r.timings)


def test_device_input_keeps_witness_result_on_device():
    m = cp.asarray(graph(257, "pos").to_matrix("float64", np.inf))
    r = fw.solve(m, backend="gpu", algorithm="fast", dtype="int16", predecessors=True)
    assert isinstance(r.pred, cp.ndarray) and r.metadata["predecessors"] == "witness"
    np.testing.assert_array_equal(r.to_host().to_dense(), reference(257, "pos")[0])
    check_predecessors(r, graph(257, "pos"))
