"""Issue 25: an explicit int16/int32/int64 with a weight at or above its INF is refused on
every CPU backend and algorithm, never solved into overflowed garbage (the GPU twin is
tests/test_gpu_dtype_bounds.py)."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import floydwarp as fw
from floydwarp import numeric, registry
from floydwarp.errors import DtypeError, InexactWarning

from conftest import triple_loop
from dtype_bounds import BIG_LOOPS, DTYPES, POINTS, build, expected, refused, weight

#: the algorithms for every graph (bfs takes unit weights only; its dtypes: tests/test_bfs.py)
CPU = [(i.backend, i.algorithm) for b in ("reference", "cpu") for i in registry.algorithms(b) if i.accepts is None]


@pytest.mark.parametrize("backend, algorithm", CPU)
@pytest.mark.parametrize("builder", ["edges", "dense"])
@pytest.mark.parametrize("sign", [1, -1], ids=["positive", "negative"])
@pytest.mark.parametrize("point", POINTS, ids=lambda p: f"inf{p:+d}" if p != "max" else "max")
@pytest.mark.parametrize("dtype", DTYPES)
def test_weight_at_inf_boundary(dtype, point, sign, builder, backend, algorithm):
    w = weight(dtype, point, sign)
    graph = build(w, builder)
    if refused(dtype, w):
        with pytest.raises(DtypeError, match=f"cannot hold edge weight {w}: every \\|weight\\| must be below"):
            fw.solve(graph, dtype=dtype, backend=backend, algorithm=algorithm)
        return
    r = fw.solve(graph, dtype=dtype, backend=backend, algorithm=algorithm, predecessors=True)
    assert r.dtype.name == dtype and not r.has_negative_cycle
    np.testing.assert_array_equal(r.dist, expected(dtype, w))
    assert r.pred.tolist() == [[fw.NO_PREDECESSOR, 0], [fw.NO_PREDECESSOR, fw.NO_PREDECESSOR]]


@pytest.mark.parametrize("backend, algorithm", CPU)
@pytest.mark.parametrize("dtype", DTYPES)
def test_negative_self_loop_at_inf_boundary(dtype, backend, algorithm):
    """One vertex has a span of 0, so only the weight rule keeps -INF off its diagonal."""
    inf = int(numeric.inf_of(dtype))
    r = fw.solve(fw.Graph.from_edges([0], [0], [-(inf - 1)], n=1), dtype=dtype, backend=backend, algorithm=algorithm)
    assert r.has_negative_cycle and r.dist[0, 0] < 0
    for w in (-inf, -(inf + 1)):
        with pytest.raises(DtypeError, match="every \\|weight\\| must be below"):
            fw.solve(fw.Graph.from_edges([0], [0], [w], n=1), dtype=dtype, backend=backend, algorithm=algorithm)


@pytest.mark.parametrize("backend, algorithm", CPU)
def test_issue_examples_refused(backend, algorithm):
    """The two graphs of the report: garbage and a false negative cycle before the fix."""
    for w, dtype in ((20000, "int16"), (2 ** 30 + 5, "int32")):
        with pytest.raises(DtypeError, match=f"edge weight {w}"):
            fw.solve(fw.Graph.from_edges([0], [1], [w], n=2), dtype=dtype, backend=backend, algorithm=algorithm)


@pytest.mark.parametrize("sign", [1, -1])
@pytest.mark.parametrize("point", POINTS)
@pytest.mark.parametrize("dtype", ["int16", "int32"])
def test_auto_takes_a_dtype_above_every_weight(dtype, point, sign):
    w = weight(dtype, point, sign)
    r = fw.solve(build(w, "edges"))
    assert abs(w) < int(numeric.inf_of(r.dtype))
    np.testing.assert_array_equal(r.to_dense(), triple_loop([[0, w], [np.inf, 0]]))


def test_mixed_signs_near_inf_are_refused_or_exact():
    """A weight just below INF beside a negative one: the span rule refuses int16, int32 is exact."""
    inf = int(numeric.inf_of("int16"))
    g = fw.Graph.from_edges([0, 1, 2], [1, 2, 0], [inf - 1, -1, 3])
    with pytest.raises(DtypeError):
        fw.solve(g, dtype="int16")
    w = np.full((3, 3), np.inf)
    w[0, 1], w[1, 2], w[2, 0] = inf - 1, -1, 3
    np.testing.assert_array_equal(fw.solve(g, dtype="int32").to_dense(), triple_loop(w))


# ------------------------------------------------------------------ integers float64 cannot add exactly
@pytest.mark.parametrize("w", [10 ** 26, 1e26, 2 ** 70])
def test_auto_warns_when_integer_weights_go_to_float64(w):
    g = fw.Graph.from_edges([0, 1], [1, 2], [w, 5])
    with pytest.warns(InexactWarning, match="float64, whose sums may round"):
        r = fw.solve(g)
    assert r.dtype.name == "float64"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert fw.solve(g, dtype="float64").dtype.name == "float64"     # asked for: no warning


def test_no_warning_while_an_integer_dtype_or_real_weights_hold():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert fw.solve(fw.Graph.from_edges([0], [1], [2 ** 61])).dtype.name == "int64"
        # float64 weights above 2**52 are integral; one fraction makes them real weights
        assert fw.solve(fw.Graph.from_edges([0, 1], [1, 2], [1.5e300, 0.5])).dtype.name == "float64"


@pytest.mark.parametrize("backend, algorithm", CPU)
@pytest.mark.parametrize("source, loop", BIG_LOOPS)
def test_a_large_non_negative_self_loop_changes_nothing(source, loop, backend, algorithm):
    """The dtype choice skips a non-negative self-loop (it is no edge), so the start matrix must
    not cast it into the chosen dtype first: 65535 in a uint16 matrix read into int16 was -1, a
    negative cycle where there is none."""
    w = np.array([[loop, 2, 9], [3, 0, 9], [9, 9, loop]], dtype=source)
    r = fw.solve(fw.Graph.from_dense(w, missing=9), backend=backend, algorithm=algorithm, predecessors=True)
    assert not r.has_negative_cycle
    np.testing.assert_array_equal(r.to_dense(), [[0, 2, np.inf], [3, 0, np.inf], [np.inf, np.inf, 0]])


@pytest.mark.parametrize("source, loop", BIG_LOOPS)
def test_a_device_matrix_diagonal_is_told_from_its_entries(monkeypatch, source, loop):
    """Graph.matrix_rows of a device matrix (its GPU engines' path; NumPy plays the device here):
    a non-negative self-loop leaves 0, a negative one stays, a missing entry leaves 0."""
    from floydwarp.graph import start

    monkeypatch.setattr(start, "is_device_array", lambda a: True)
    low = -4 if np.dtype(source).kind in "if" else 0
    w = np.array([[loop, 2, 9, 1], [3, low, 9, 9], [9, 9, 9, 9], [9, 9, 9, 0]], dtype=source)
    rows = fw.Graph.from_dense(w, missing=9).matrix_rows(0, 4, np.int16, 99)
    assert rows.tolist() == [[0, 2, 99, 1], [3, low, 99, 99], [99, 99, 0, 99], [99, 99, 99, 0]]


@pytest.mark.parametrize("backend, algorithm", CPU)
@pytest.mark.parametrize("weights", [[1e39, 0.5, 1], [-1e39, 0.5, 1], [2e38, 2e38, 0.5]],
                         ids=["a weight beyond float32", "a negative one", "a sum beyond float32"])
def test_explicit_float32_refuses_real_weights_whose_paths_leave_its_range(weights, backend, algorithm):
    """float32 holds |d| up to 3.4e38: a weight cast beyond it was inf (an edge lost, a pair
    unreachable) and a longer sum overflowed the same way, silently.  Refused now, as an integer
    dtype that cannot hold the answer is; float64 solves it."""
    g = fw.Graph.from_edges([0, 1, 2], [1, 2, 3], np.array(weights), n=4)
    with pytest.raises(DtypeError, match=r"float32 holds \|d\| <= 3.40282e\+38\); use float64"):
        fw.solve(g, backend=backend, algorithm=algorithm, dtype="float32")
    with pytest.raises(DtypeError, match="use float64"):
        fw.solve_batch([g], backend="cpu", dtype="float32")
    r = fw.solve(g, backend=backend, algorithm=algorithm, dtype="float64")
    assert r.reachable(0, 3) and r.dist[0, 3] == sum(weights)


def test_explicit_float32_still_solves_real_weights_it_holds():
    g = fw.Graph.from_edges([0, 1], [1, 2], np.array([1e38, 0.5]), n=3)
    r = fw.solve(g, dtype="float32")
    assert r.dtype.name == "float32" and r.dist[0, 2] == np.float32(1e38) + np.float32(0.5)
