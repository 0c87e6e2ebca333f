"""floydwarp.pyg.ShortestPathDistance with real torch and torch_geometric (skipped without
them; CI's [pyg] leg installs both): Data and Batch, both layouts, batching a transformed
list equals transforming the batch, weights, hop counts, paths, clipping, markers, errors."""
from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pyg_data = pytest.importorskip("torch_geometric.data")
from torch_geometric.transforms import BaseTransform  # noqa: E402
from torch_geometric.utils import to_dense_adj  # noqa: E402

from batch_model import reference  # noqa: E402
from floydwarp.errors import FloydwarpError  # noqa: E402
from floydwarp.pyg import ShortestPathDistance  # noqa: E402

Data, Batch = pyg_data.Data, pyg_data.Batch


def random_data(rng, n, weighted=False):
    m = int(rng.integers(0, 2 * n + 1))
    ei = torch.as_tensor(rng.integers(0, max(n, 1), size=(2, m)))
    data = Data(edge_index=ei, num_nodes=n)
    if weighted:
        data.w = torch.as_tensor(rng.integers(1, 9, m).astype(np.float32))
    return data


def dense_reference(data, weight=None):
    n = data.num_nodes
    w = np.full((n, n), np.inf)
    ei = data.edge_index.numpy()
    vals = np.ones(ei.shape[1]) if weight is None else getattr(data, weight).numpy()
    for (u, v), x in zip(ei.T, vals):
        w[u, v] = min(w[u, v], x)
    return reference(w)


def test_is_a_base_transform_and_data_layouts():
    assert isinstance(ShortestPathDistance(), BaseTransform)
    rng = np.random.default_rng(0)
    for _ in range(40):
        data = random_data(rng, int(rng.integers(1, 10)))
        want = dense_reference(data)
        want_int = np.where(np.isinf(want), -1, want).astype(np.int64)
        dense = ShortestPathDistance(layout="dense")(data)
        assert dense.spd.dtype == torch.long and np.array_equal(dense.spd[0].numpy(), want_int)
        pairs = ShortestPathDistance()(data)
        n = data.num_nodes
        assert pairs.spd.shape == (n * n,) and pairs.spd_index.shape == (2, n * n)
        i, j = pairs.spd_index.numpy()
        assert np.array_equal(pairs.spd.numpy(), want_int[i, j])
        assert not hasattr(data, "spd")                 # BaseTransform copies: the input is untouched


def test_batching_transformed_data_equals_transforming_the_batch():
    rng = np.random.default_rng(1)
    datas = [random_data(rng, int(rng.integers(0, 9))) for _ in range(30)]
    for kwargs in ({}, {"paths": 3}, {"max_distance": 2}):
        t = ShortestPathDistance(**kwargs)
        one = Batch.from_data_list([t(d) for d in datas])
        whole = t(Batch.from_data_list(datas))
        for key in ("spd", "spd_index") + (("spd_path",) if "paths" in kwargs else ()):
            assert torch.equal(one[key], whole[key]), (kwargs, key)
    one = Batch.from_data_list([ShortestPathDistance()(d) for d in datas])
    dense = ShortestPathDistance(layout="dense")(Batch.from_data_list(datas))
    batch = Batch.from_data_list(datas)
    size = max(d.num_nodes for d in datas)
    rebuilt = to_dense_adj(one.spd_index, batch.batch, one.spd, max_num_nodes=size)
    counts = [d.num_nodes for d in datas]
    for g, n in enumerate(counts):
        assert torch.equal(rebuilt[g, :n, :n], dense.spd[g, :n, :n])
        assert (dense.spd[g, n:] == -1).all()


def test_weights_hops_and_markers():
    rng = np.random.default_rng(2)
    for _ in range(20):
        data = random_data(rng, int(rng.integers(1, 9)), weighted=True)
        out = ShortestPathDistance(layout="dense", weight="w", hops=True)(data)
        want = dense_reference(data, "w")
        assert np.array_equal(out.spd[0].numpy(), np.where(np.isinf(want), -1, want))
        hops = dense_reference(data)
        assert np.array_equal(out.spd_hops[0].numpy(), np.where(np.isinf(hops), -1, hops))
    data = Data(edge_index=torch.tensor([[0], [1]]), num_nodes=3, w=torch.tensor([0.5]))
    out = ShortestPathDistance(layout="dense", weight="w")(data)
    assert out.spd.dtype == torch.float32 and out.spd[0, 0, 1] == 0.5 and torch.isinf(out.spd[0, 0, 2])
    out = ShortestPathDistance(layout="dense", unreachable=99)(data)
    assert out.spd[0, 0, 2] == 99


def test_paths_are_walks_of_edge_ids():
    rng = np.random.default_rng(3)
    data = random_data(rng, 8)
    out = ShortestPathDistance(layout="dense", paths=8)(data)
    ei = data.edge_index.numpy()
    for i in range(8):
        for j in range(8):
            walk = [e for e in out.spd_path[0, i, j].tolist() if e >= 0]
            assert len(walk) == max(int(out.spd[0, i, j]), 0)
            at = i
            for e in walk:
                assert ei[0, e] == at
                at = ei[1, e]


def test_errors():
    with pytest.raises(FloydwarpError, match="layout must be one of"):
        ShortestPathDistance(layout="sparse")
    with pytest.raises(FloydwarpError, match="no edge attribute 'w'"):
        ShortestPathDistance(weight="w")(Data(edge_index=torch.tensor([[0], [1]]), num_nodes=2))
    with pytest.raises(FloydwarpError, match="out of range"):
        ShortestPathDistance()(Data(edge_index=torch.tensor([[0], [5]]), num_nodes=2))
    with pytest.raises(FloydwarpError, match="weights must be finite"):
        ShortestPathDistance(weight="w")(Data(edge_index=torch.tensor([[0], [1]]), num_nodes=2,
                                              w=torch.tensor([float("nan")])))
