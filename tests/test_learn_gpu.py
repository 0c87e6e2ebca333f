"""The graph-learning drop-ins on the GPU, against their CPU results (which the CPU tests
check against Graphormer's model, DGL's reference and SciPy): Graphormer's shortest paths
and collate from device edges (batch.cu's last-pivot mode, edge_input.cu), graphs above the
batch kernel's 128 vertices, the PyG transform on CUDA tensors.  Skipped without a GPU."""
from __future__ import annotations

import numpy as np
import pytest

import graphormer_model as model
from conftest import require_gpu

cp = require_gpu()

from floydwarp.learn import graphormer  # noqa: E402

pytestmark = pytest.mark.gpu


def _graphs(rng, count, lo, hi):
    out = []
    for _ in range(count):
        n = int(rng.integers(lo, hi + 1))
        ei, attr = model.molecule(rng, n)
        out.append(model.Data(n, ei, attr))
    return out


def _device(graphs):
    """The graphs as one PyG-style batch of CuPy arrays."""
    counts = [d.num_nodes for d in graphs]
    ptr = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    ei = np.concatenate([d.edge_index + ptr[g] for g, d in enumerate(graphs)], axis=1)

    class Batch:
        edge_index = cp.asarray(ei)
        edge_attr = cp.asarray(np.concatenate([d.edge_attr for d in graphs]))

    Batch.ptr = cp.asarray(ptr)
    return Batch


@pytest.mark.parametrize("hi", [20, 70, 128])
def test_shortest_paths_and_collate_on_the_device_equal_the_cpu(hi):
    rng = np.random.default_rng(hi)
    graphs = _graphs(rng, 300, 1, hi)
    batch = _device(graphs)
    M, path, sizes = graphormer.shortest_paths(batch)
    assert isinstance(M, cp.ndarray)
    want = graphormer.shortest_paths(graphs, backend="cpu")
    assert np.array_equal(M.get(), want[0]) and np.array_equal(path.get(), want[1])
    for hops in (20, 2, 0):
        got = graphormer.collate(batch, multi_hop_max_dist=hops)
        ref = graphormer.collate(graphs, multi_hop_max_dist=hops, backend="cpu")
        for name in ref:
            assert isinstance(got[name], cp.ndarray) and np.array_equal(got[name].get(), ref[name]), (hi, hops, name)


def test_graphs_above_the_batch_kernel_size_and_host_input_on_the_gpu():
    rng = np.random.default_rng(5)
    graphs = _graphs(rng, 20, 100, 200)
    got = graphormer.collate(graphs, backend="gpu")
    ref = graphormer.collate(graphs, backend="cpu")
    for name in ref:
        assert np.array_equal(cp.asnumpy(got[name]), ref[name]), name
    adjs = [np.random.default_rng(g).integers(0, 600, (n, n)) * (np.random.default_rng(g).random((n, n)) < 0.2)
            for g, n in enumerate([3, 40, 150])]
    M, path, _ = graphormer.shortest_paths(adjs, backend="gpu")
    for g, a in enumerate(adjs):
        n = a.shape[0]
        want = graphormer.floyd_warshall(a)
        assert np.array_equal(cp.asnumpy(M[g, :n, :n]), want[0]) and np.array_equal(cp.asnumpy(path[g, :n, :n]),
                                                                                     want[1])


def test_pyg_transform_on_cuda_tensors():
    torch = pytest.importorskip("torch")
    pyg_data = pytest.importorskip("torch_geometric.data")
    from floydwarp.pyg import ShortestPathDistance

    rng = np.random.default_rng(6)
    datas = [pyg_data.Data(edge_index=torch.as_tensor(rng.integers(0, n, (2, 2 * n))), num_nodes=n)
             for n in rng.integers(1, 30, 50).tolist()]
    batch = pyg_data.Batch.from_data_list(datas)
    for kwargs in ({}, {"layout": "dense"}, {"paths": 4}):
        t = ShortestPathDistance(**kwargs)
        on_gpu = t(batch.clone().to("cuda"))          # Batch.to moves the batch itself
        on_cpu = t(batch)
        assert on_gpu.spd.device.type == "cuda"
        for key in ("spd", "spd_index", "spd_path"):
            if key in on_cpu:
                assert torch.equal(on_gpu[key].cpu(), on_cpu[key]), (kwargs, key)


def test_graphormer_collate_of_torch_cuda_tensors():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(7)
    graphs = _graphs(rng, 64, 5, 40)
    batch = _device(graphs)

    class TorchBatch:
        edge_index = torch.from_dlpack(batch.edge_index)
        edge_attr = torch.from_dlpack(batch.edge_attr)
        ptr = torch.from_dlpack(batch.ptr)

    got = graphormer.collate(TorchBatch)
    ref = graphormer.collate(graphs, backend="cpu")
    for name in ref:
        assert got[name].device.type == "cuda" and np.array_equal(got[name].cpu().numpy(), ref[name])
