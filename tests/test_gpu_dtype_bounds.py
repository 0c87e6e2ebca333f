"""Issue 25 on the GPU: every gpu algorithm refuses a weight at or above its dtype's INF and
solves INF - 1 exactly (the CPU twin is tests/test_dtype_bounds.py).  Run with ``pytest -m gpu``."""
from __future__ import annotations

import numpy as np
import pytest

from conftest import require_gpu

cp = require_gpu()

import floydwarp as fw  # noqa: E402
from floydwarp import registry  # noqa: E402
from floydwarp.arrays import to_host  # noqa: E402
from floydwarp.errors import DtypeError  # noqa: E402

from dtype_bounds import BIG_LOOPS, DTYPES, POINTS, build, expected, refused, weight  # noqa: E402

pytestmark = pytest.mark.gpu

#: the algorithms for every graph (gpu/bfs takes unit weights only: tests/test_gpu_bfs.py)
IMPLS = {i.algorithm: i for i in registry.algorithms("gpu") if i.accepts is None}


@pytest.mark.parametrize("algorithm", sorted(IMPLS))
@pytest.mark.parametrize("builder", ["edges", "dense"])
@pytest.mark.parametrize("sign", [1, -1], ids=["positive", "negative"])
@pytest.mark.parametrize("point", POINTS, ids=lambda p: f"inf{p:+d}" if p != "max" else "max")
@pytest.mark.parametrize("dtype", DTYPES)
def test_gpu_weight_at_inf_boundary(dtype, point, sign, builder, algorithm):
    impl = IMPLS[algorithm]
    if dtype not in impl.dtypes:
        pytest.skip(f"{algorithm} does not run {dtype}")
    w = weight(dtype, point, sign)
    graph = build(w, builder)
    if refused(dtype, w):
        with pytest.raises(DtypeError, match=f"cannot hold edge weight {w}"):
            fw.solve(graph, dtype=dtype, backend="gpu", algorithm=algorithm)
        return
    for predecessors in (False, True) if impl.predecessors else (False,):
        r = fw.solve(graph, dtype=dtype, backend="gpu", algorithm=algorithm, predecessors=predecessors)
        assert r.dtype.name == dtype and not r.has_negative_cycle
        np.testing.assert_array_equal(to_host(r.dist), expected(dtype, w))
        if predecessors:
            assert to_host(r.pred).tolist() == [[fw.NO_PREDECESSOR, 0], [fw.NO_PREDECESSOR, fw.NO_PREDECESSOR]]


@pytest.mark.parametrize("algorithm", sorted(IMPLS))
def test_gpu_issue_examples_refused(algorithm):
    for w, dtype in ((20000, "int16"), (2 ** 30 + 5, "int32")):
        if dtype in IMPLS[algorithm].dtypes:
            with pytest.raises(DtypeError, match=f"edge weight {w}"):
                fw.solve(fw.Graph.from_edges([0], [1], [w], n=2), dtype=dtype, backend="gpu", algorithm=algorithm)


def test_gpu_cupy_matrix_at_boundary():
    """A CuPy weight matrix stays on the device: its statistics must refuse INF the same way."""
    inf = int(fw.inf_of("int16"))
    for w, ok in ((inf - 1, True), (inf, False), (-(inf - 1), True), (-inf, False)):
        m = cp.array([[0, w], [cp.inf, 0]], dtype=cp.float64)
        g = fw.Graph.from_dense(m)
        if ok:
            r = fw.solve(g, dtype="int16", backend="gpu")
            np.testing.assert_array_equal(to_host(r.dist), expected("int16", w))
        else:
            with pytest.raises(DtypeError, match="every \\|weight\\| must be below"):
                fw.solve(g, dtype="int16", backend="gpu")


#: every engine that starts from the graph's matrix on one GPU: the gpu algorithms, and the
#: multigpu ones on one GPU (their device-matrix path is Graph.matrix_rows')
ONE_GPU = [("gpu", a, {}) for a in sorted(IMPLS)] + [("multigpu", i.algorithm, {"gpus": 1})
                                                     for i in registry.algorithms("multigpu")]


@pytest.mark.parametrize("on_device", [False, True], ids=["numpy", "cupy"])
@pytest.mark.parametrize("backend, algorithm, options", ONE_GPU, ids=lambda v: v if isinstance(v, str) else "")
@pytest.mark.parametrize("source, loop", BIG_LOOPS)
def test_gpu_large_non_negative_self_loop_changes_nothing(source, loop, backend, algorithm, options, on_device):
    """The twin of the CPU test: a self-loop beyond the chosen dtype (65535 in uint16 under int16)
    is no edge, from a host matrix and from a CuPy one; it was a negative cycle before 454d8aa."""
    w = np.array([[loop, 2, 9], [3, 0, 9], [9, 9, loop]], dtype=source)
    g = fw.Graph.from_dense(cp.asarray(w) if on_device else w, missing=9)
    r = fw.solve(g, backend=backend, algorithm=algorithm, **options)
    assert not r.has_negative_cycle
    np.testing.assert_array_equal(to_host(r.to_dense()), [[0, 2, np.inf], [3, 0, np.inf], [np.inf, np.inf, 0]])



@pytest.mark.parametrize("algorithm", sorted(IMPLS))
def test_gpu_explicit_float32_refuses_real_weights_whose_paths_leave_its_range(algorithm):
    """The twin of the CPU test: 1e39 in float32 was inf, an edge lost without a word."""
    g = fw.Graph.from_edges([0, 1, 2], [1, 2, 3], np.array([2e38, 2e38, 0.5]), n=4)
    with pytest.raises(DtypeError, match="use float64"):
        fw.solve(g, backend="gpu", algorithm=algorithm, dtype="float32")
