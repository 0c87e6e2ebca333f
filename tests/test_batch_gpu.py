"""solve_batch on the GPU (kernels/batch.cu): every graph against SciPy and the CPU engine,
both launches (n <= 64 and 65..128), the per-graph path above 128, predecessors, device
inputs and outputs.  Skipped without CuPy or a CUDA GPU."""
from __future__ import annotations

import numpy as np
import pytest

from batch_model import KINDS, check, padded_of, pyg_of, random_batch, reference
from conftest import require_gpu

cp = require_gpu()

import floydwarp as fw  # noqa: E402
from floydwarp.batch.generate import molecules  # noqa: E402

pytestmark = pytest.mark.gpu


@pytest.mark.parametrize("kind", KINDS)
def test_random_batches_against_scipy(kind):
    rng = np.random.default_rng(sum(map(ord, kind)) + 1)
    for _ in range(200):
        mats = random_batch(rng, int(rng.integers(1, 12)), 20, kind)
        check(fw.solve_batch(mats, backend="gpu"), mats)


@pytest.mark.parametrize("dtype", ["int16", "int32", "int64", "float32", "float64"])
def test_every_dtype_every_size_class(dtype):
    """Sizes 0..140: both launches, and the per-graph path above 128."""
    rng = np.random.default_rng(1)
    sizes = list(range(0, 70)) + [95, 127, 128, 129, 140]
    from batch_model import random_graph

    mats = [random_graph(rng, n, "neg") for n in sizes]
    refs = [reference(m) for m in mats]
    r = fw.solve_batch(mats, dtype=dtype, backend="gpu")
    assert r.backend == "gpu" and r.dtype.name == dtype
    check(r, mats, refs)


def test_predecessors_match_the_cpu_engine_exactly():
    rng = np.random.default_rng(4)
    for kind in ("pos", "zero", "neg"):
        mats = random_batch(rng, 60, 100, kind)
        gpu = fw.solve_batch(mats, predecessors=True, backend="gpu")
        cpu = fw.solve_batch(mats, predecessors=True, backend="cpu")
        np.testing.assert_array_equal(gpu.dist, cpu.dist)
        np.testing.assert_array_equal(gpu.pred, cpu.pred)


def test_negative_cycle_in_the_middle_and_clip():
    rng = np.random.default_rng(8)
    mats = random_batch(rng, 30, 40, "neg")
    cycle = np.full((5, 5), np.inf)
    cycle[0, 1], cycle[1, 2], cycle[2, 0], cycle[2, 4] = 2, -5, 1, 1
    mats.insert(13, cycle)
    r = fw.solve_batch(mats, backend="gpu", predecessors=True)
    c = fw.solve_batch(mats, backend="cpu", predecessors=True)
    assert r.negative_cycle.tolist() == [g == 13 for g in range(len(mats))]
    np.testing.assert_array_equal(r.dist, c.dist)
    np.testing.assert_array_equal(r.pred, c.pred)
    hops = fw.solve_batch(mats, backend="gpu", unweighted=True, max_distance=4)
    assert hops.dtype == np.uint8
    np.testing.assert_array_equal(hops.dist, fw.solve_batch(mats, unweighted=True, max_distance=4).dist)


def test_device_pyg_batch_stays_on_the_device():
    edge_index, ptr = molecules(3000, seed=5)
    r = fw.solve_batch(fw.GraphBatch.from_pyg(cp.asarray(edge_index), ptr=cp.asarray(ptr)), unweighted=True)
    assert isinstance(r.dist, cp.ndarray) and r.backend == "gpu" and r.dtype == np.uint8
    host = fw.solve_batch(fw.GraphBatch.from_pyg(edge_index, ptr=ptr), unweighted=True)
    np.testing.assert_array_equal(r.dist.get(), host.dist)
    assert r[7].distance(0, 1) == host[7].distance(0, 1)


def test_device_inputs_every_form():
    rng = np.random.default_rng(6)
    mats = random_batch(rng, 50, 30, "pos")
    edge_index, weight, ptr = pyg_of(mats)
    batch = np.repeat(np.arange(len(mats)), np.diff(ptr))
    r = fw.solve_batch(fw.GraphBatch.from_pyg(cp.asarray(edge_index), cp.asarray(weight), batch=cp.asarray(batch),
                                              num_graphs=len(mats)))
    check(r, mats)
    padded, sizes = padded_of(mats)
    check(fw.solve_batch(cp.asarray(padded), sizes=cp.asarray(sizes)), mats)


def test_device_errors_name_graph_and_edge():
    with pytest.raises(fw.FloydwarpError, match=r"edge 2 \(1 -> 3\) is out of range for its graph"):
        fw.solve_batch(fw.GraphBatch.from_pyg(cp.asarray([[0, 1, 1], [1, 2, 3]]), ptr=cp.asarray([0, 3, 5])))
    with pytest.raises(fw.FloydwarpError, match="batch is not sorted"):
        fw.solve_batch(fw.GraphBatch.from_pyg(cp.asarray([[0], [1]]), batch=cp.asarray([0, 1, 0])))


def test_torch_cuda_tensors():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("torch without CUDA")
    edge_index, ptr = molecules(100, seed=2)
    r = fw.solve_batch(fw.GraphBatch.from_pyg(torch.from_numpy(edge_index).cuda(), ptr=torch.from_numpy(ptr).cuda()),
                       unweighted=True)
    assert isinstance(r.dist, cp.ndarray)


def test_gpu_clip_past_the_arithmetic_dtype_cuts_nothing():
    """max_distance = 10**30 reached the GPU kernel as an int16 scalar: OverflowError (hunt-s24)."""
    mats = [np.array([[0, 3.0], [np.inf, 0]]), np.array([[0, -2.0], [1, 0]])]
    for given in (mats, cp.asarray(padded_of(mats)[0])):
        r = fw.solve_batch(given, backend="gpu", max_distance=10 ** 30, output="host")
        assert r[0].to_dense().tolist() == [[0, 3], [np.inf, 0]] and r.negative_cycle.tolist() == [False, True]
    assert fw.solve_batch(mats, backend="gpu", max_distance=2, output="host")[0].to_dense().tolist() == [[0, 2],
                                                                                                     [np.inf, 0]]


def test_gpu_batch_text_sizes_are_refused():
    """Text sizes beside a device array reached CuPy as text: a raw ValueError (hunt-s24)."""
    with pytest.raises(fw.FloydwarpError, match="sizes must hold integers; got dtype <U1"):
        fw.solve_batch(cp.zeros((1, 2, 2)), sizes=np.array(["2"]))
