"""floydwarp.learn.graphormer against a plain-Python model of Graphormer's preprocessing
(graphormer_model.py) on thousands of random molecule-like graphs, every array bit for bit,
one graph at a time and batched; and what it refuses.  (bench/graphormer_check.py compares
with Graphormer's own compiled Cython; docs/graph-learning.md has that result.)"""
from __future__ import annotations

import numpy as np
import pytest

import graphormer_model as model
from floydwarp.errors import FloydwarpError
from floydwarp.learn import graphormer


def _adjacency(n, edge_index):
    adj = np.zeros((n, n), dtype=bool)
    adj[edge_index[0], edge_index[1]] = True
    return adj


def test_floyd_warshall_and_gen_edge_input_on_thousands_of_molecules():
    rng = np.random.default_rng(0)
    for g in range(2000):
        n = int(rng.integers(1, 12)) if g % 100 else int(rng.integers(12, 60))
        edge_index, _ = model.molecule(rng, n)
        adj = _adjacency(n, edge_index)
        M, path = graphormer.floyd_warshall(adj)
        want_M, want_path = model.floyd_warshall(adj)
        assert M.dtype == np.int64 and path.dtype == np.int64
        assert np.array_equal(M, want_M) and np.array_equal(path, want_path), g
        feat = rng.integers(0, 1000, size=(n, n, 2))
        got = graphormer.gen_edge_input(M.max(), path, feat)
        assert np.array_equal(got, model.gen_edge_input(M.max(), want_path, feat)), g


def test_weighted_adjacency_of_every_integer_dtype():
    """Weights 1..600 (510 and more: as far as unreachable), uint16 rows; and every dtype
    Graphormer's safe cast takes."""
    rng = np.random.default_rng(1)
    for g in range(150):
        n = int(rng.integers(1, 20))
        w = rng.integers(1, 600, size=(n, n)) * (rng.random((n, n)) < 0.3)
        for dtype in (np.int64, np.int32, np.uint16):
            M, path = graphormer.floyd_warshall(w.astype(dtype))
            want = model.floyd_warshall(w)
            assert np.array_equal(M, want[0]) and np.array_equal(path, want[1]), (g, dtype)
    adj = np.array([[0, 1], [1, 0]])
    for dtype in (bool, np.uint8, np.int8, np.uint32):
        assert graphormer.floyd_warshall(adj.astype(dtype))[0].tolist() == [[0, 1], [1, 0]]


def test_edge_cases_of_one_graph():
    empty = graphormer.floyd_warshall(np.zeros((0, 0), bool))       # Graphormer's own code fails here
    assert empty[0].shape == (0, 0) and empty[1].shape == (0, 0)
    assert [a.tolist() for a in graphormer.floyd_warshall(np.ones((1, 1), bool))] == [[[0]], [[-1]]]
    two = graphormer.floyd_warshall(np.array([[5, 0], [0, 7]]))     # self-loops only: unreachable
    assert two[0].tolist() == [[0, 510], [510, 0]] and two[1].tolist() == [[-1, 510], [510, -1]]
    # 255 hops: past uint8 rows
    n = 300
    chain = np.zeros((n, n), bool)
    chain[np.arange(n - 1), np.arange(1, n)] = True
    M, path = graphormer.floyd_warshall(chain)
    want = model.floyd_warshall(chain)
    assert M[0, n - 1] == n - 1 and np.array_equal(M, want[0]) and np.array_equal(path, want[1])


def test_refused_like_graphormer_would_not_mean():
    with pytest.raises(FloydwarpError, match="casting='safe'"):
        graphormer.floyd_warshall(np.ones((2, 2)))
    with pytest.raises(FloydwarpError, match="casting='safe'"):
        graphormer.floyd_warshall(np.ones((2, 2), np.uint64))
    with pytest.raises(FloydwarpError, match="non-negative weights"):
        graphormer.floyd_warshall(np.array([[0, -1], [1, 0]]))
    with pytest.raises(FloydwarpError, match="square"):
        graphormer.floyd_warshall(np.ones((2, 3), bool))
    M, path = graphormer.floyd_warshall(np.array([[0, 1, 0], [0, 0, 1], [0, 0, 0]], bool))
    feat = np.zeros((3, 3, 1), np.int64)
    with pytest.raises(FloydwarpError, match=r"path 0 -> 2 has more than max_dist = 1 edges"):
        graphormer.gen_edge_input(1, path, feat)
    circle = np.array([[-1, 2, -1], [-1, -1, -1], [-1, 0, -1]])       # 0 -> 1 through 2, 2 -> 1 through 0
    with pytest.raises(FloydwarpError, match=r"path\[0, 1\] does not spell a path"):
        graphormer.gen_edge_input(5, circle, feat)
    with pytest.raises(FloydwarpError, match="max_dist must be a non-negative integer"):
        graphormer.gen_edge_input(-1, path, feat)
    with pytest.raises(FloydwarpError, match=r"edge_feat must have shape \(n, n, F\)"):
        graphormer.gen_edge_input(2, path, np.zeros((2, 2, 1), np.int64))
    with pytest.raises(FloydwarpError, match="casting='safe'"):
        graphormer.gen_edge_input(2, path, np.zeros((3, 3, 1)))


def _batch(rng, count, lo=1, hi=14, features=3):
    graphs = []
    for _ in range(count):
        n = int(rng.integers(lo, hi + 1))
        ei, attr = model.molecule(rng, n, features)
        graphs.append(model.Data(n, ei, attr))
    return graphs


def test_shortest_paths_batched_from_every_form():
    rng = np.random.default_rng(2)
    graphs = _batch(rng, 300)
    adjs = [_adjacency(d.num_nodes, d.edge_index) for d in graphs]
    size = max(a.shape[0] for a in adjs)
    padded = np.zeros((len(adjs), size, size), bool)
    for g, a in enumerate(adjs):
        padded[g, :a.shape[0], :a.shape[0]] = a
    sizes = np.array([a.shape[0] for a in adjs])
    for given, kw in ((graphs, {}), (adjs, {}), (padded, {"sizes": sizes})):
        M, path, got_sizes = graphormer.shortest_paths(given, **kw)
        assert M.shape == (len(adjs), size, size) and np.array_equal(got_sizes, sizes)
        for g, a in enumerate(adjs):
            n = a.shape[0]
            want = model.floyd_warshall(a)
            assert np.array_equal(M[g, :n, :n], want[0]) and np.array_equal(path[g, :n, :n], want[1])
            assert (M[g, n:] == 510).all() and (path[g, :, n:] == 510).all()


def test_collate_equals_preprocess_item_and_the_collator():
    rng = np.random.default_rng(3)
    for trial in range(30):
        graphs = _batch(rng, int(rng.integers(1, 10)), 1, 24)
        hops = [20, 3, 0][trial % 3]
        want = model.collate([model.item(d.num_nodes, d.edge_index, d.edge_attr) for d in graphs], hops, 5)
        got = graphormer.collate(graphs, multi_hop_max_dist=hops, spatial_pos_max=5)
        for name, w in want.items():
            assert got[name].dtype == w.dtype and np.array_equal(got[name], w), (trial, name)


def test_collate_edge_features_parallel_edges_and_options():
    """Of parallel edges the last listed gives the features; 1-D edge_attr; features as given."""
    ei = np.array([[0, 1, 0, 1, 2], [1, 0, 1, 2, 1]])
    attr = np.array([4, 4, 7, 1, 1])
    d = model.Data(3, ei, attr)
    got = graphormer.collate([d])
    want = model.collate([model.item(3, ei, attr)])
    assert np.array_equal(got["edge_input"], want["edge_input"])
    assert got["edge_input"][0, 0, 2, :, 0].tolist() == [7 + 3, 1 + 3]        # + 1 + 1 + 1
    raw = graphormer.collate([d], single_embedding=False)
    assert raw["edge_input"][0, 0, 2, :, 0].tolist() == [8, 2]
    assert "edge_input" not in graphormer.collate([model.Data(3, ei)])
    with pytest.raises(FloydwarpError, match="edge_attr must have shape"):
        graphormer.collate([d], edge_attr=np.zeros(4, np.int64))
    with pytest.raises(FloydwarpError, match="needs edges"):
        graphormer.collate([np.ones((2, 2), bool)])
    with pytest.raises(FloydwarpError, match="multi_hop_max_dist must be"):
        graphormer.collate([d], multi_hop_max_dist=1.5)


def test_torch_in_torch_out():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(4)
    graphs = _batch(rng, 20)
    ei = torch.cat([torch.as_tensor(d.edge_index) + int(sum(x.num_nodes for x in graphs[:g]))
                    for g, d in enumerate(graphs)], dim=1)
    ptr = torch.as_tensor(np.concatenate([[0], np.cumsum([d.num_nodes for d in graphs])]))
    attr = torch.cat([torch.as_tensor(d.edge_attr) for d in graphs])

    class Batch:
        edge_index, edge_attr = ei, attr

    Batch.ptr = ptr
    got = graphormer.collate(Batch)
    want = graphormer.collate(graphs)
    assert all(isinstance(v, torch.Tensor) for v in got.values())
    for name in want:
        assert np.array_equal(got[name].numpy(), want[name])
    M, _, _ = graphormer.shortest_paths(Batch)
    assert isinstance(M, torch.Tensor) and M.dtype == torch.int64
