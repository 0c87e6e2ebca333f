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


def test_gen_edge_input_of_no_vertex():
    """The empty (0, 0, max_dist, F) array Graphormer's np.ones([n, n, max_dist, F]) would be."""
    got = graphormer.gen_edge_input(2, np.zeros((0, 0), np.int64), np.zeros((0, 0, 3), np.int64))
    assert got.shape == (0, 0, 2, 3) and got.dtype == np.int64


_PAIR = np.array([[0, 1], [1, 0]])


@pytest.mark.parametrize("value", [float("nan"), float("inf"), 2 ** 70, np.float16(5), np.uint64(5), np.array(5)])
def test_collate_spatial_pos_max_compares_as_given(value):
    """NaN, inf and any real number compare with the distances as Graphormer's torch does."""
    d = model.Data(3, np.array([[0, 1], [1, 2]]), np.array([1, 2]))
    got = graphormer.collate([d], spatial_pos_max=value)["attn_bias"]
    want = model.collate([model.item(3, d.edge_index, d.edge_attr)], spatial_pos_max=float(value))["attn_bias"]
    assert np.array_equal(got, want)


@pytest.mark.parametrize("options, message", [
    ({"spatial_pos_max": "x"}, "spatial_pos_max must be a real number"),
    ({"spatial_pos_max": None}, "spatial_pos_max must be a real number"),
    ({"spatial_pos_max": True}, "spatial_pos_max must be a real number"),
    ({"spatial_pos_max": 1 + 0j}, "spatial_pos_max must be a real number"),
    ({"spatial_pos_max": np.array([5])}, "spatial_pos_max must be a real number"),
    ({"multi_hop_max_dist": "x"}, "multi_hop_max_dist must be a non-negative integer"),
    ({"single_embedding": "no"}, "single_embedding must be True or False"),
    ({"single_embedding": np.array([1, 0])}, "single_embedding must be True or False"),
])
def test_collate_refuses_malformed_options(options, message):
    with pytest.raises(FloydwarpError, match=message):
        graphormer.collate([model.Data(2, _PAIR, np.array([1, 2]))], **options)


@pytest.mark.parametrize("graphs, message", [
    ([model.Data(None, np.array([0, 1, 1]))], r"graph 0's edge_index must have shape \(2, E\); got \(3,\)"),
    ([model.Data(2, _PAIR), model.Data(None, np.array([0, 1, 1, 0]))],      # not read as (2, 2)
     r"graph 1's edge_index must have shape \(2, E\); got \(4,\)"),
    ([model.Data(2, np.zeros((1, 4), np.int64))], r"graph 0's edge_index must have shape \(2, E\); got \(1, 4\)"),
    ([model.Data(2, np.zeros((2, 1, 1), np.int64))], r"graph 0's edge_index must have shape \(2, E\)"),
    ([model.Data(None, np.array([["a"], ["b"]]))], "graph 0's edge_index must hold integers"),
    (model.Data(None, np.array([["a"], ["b"]])), "edge_index must hold integers"),
    ([model.Data("x", _PAIR)], "graph 0's num_nodes must be a non-negative integer; got 'x'"),
    ([model.Data(2, _PAIR), model.Data(2.5, _PAIR)], "graph 1's num_nodes must be a non-negative integer; got 2.5"),
    ([model.Data(-1, _PAIR)], "graph 0's num_nodes must be a non-negative integer"),
    (model.Data(2.5, _PAIR), "num_nodes must be a non-negative integer; got 2.5"),
    ([model.Data(2, _PAIR, np.array([1, 2])), model.Data(2, _PAIR, np.array([[1, 2], [3, 4]]))],
     r"graph 1's edge_attr has shape \(2, 2\) but graph 0's has \(2,\)"),
    ([model.Data(2, _PAIR, np.array([1, 2, 3])), model.Data(2, _PAIR, np.array([4]))],   # 4 rows in all, not 2 + 2
     r"graph 0's edge_attr must have shape \(E,\) or \(E, F\) for its 2 edges; got \(3,\)"),
])
def test_collate_refuses_malformed_data(graphs, message):
    with pytest.raises(FloydwarpError, match=message):
        graphormer.collate(graphs)


def test_collate_num_nodes_of_numpy_kinds():
    for n in (np.int64(3), np.array(3)):
        assert graphormer.collate([model.Data(n, _PAIR)])["spatial_pos"].shape == (1, 3, 3)


@pytest.mark.parametrize("x, offset, message", [
    (np.zeros((2, 1), np.int64), "x", "offset must be a non-negative integer"),
    (np.zeros((2, 1), np.int64), 1.5, "offset must be a non-negative integer"),
    (np.int64(3), 512, r"shape \(E,\) or \(E, F\); got \(\)"),
])
def test_convert_to_single_emb_refuses(x, offset, message):
    with pytest.raises(FloydwarpError, match=message):
        graphormer.convert_to_single_emb(x, offset)


def test_shortest_paths_takes_sizes_only_with_a_padded_adjacency():
    """A list's or a PyG batch's own sizes were used and ``sizes=`` dropped without a word."""
    a = np.array([[0, 1], [1, 0]])
    for graphs in ([a], model.Data(2, _PAIR), [model.Data(2, _PAIR)]):
        with pytest.raises(FloydwarpError, match="sizes= is for a padded"):
            graphormer.shortest_paths(graphs, sizes=[1])
    assert graphormer.shortest_paths(a[None], sizes=[1])[2].tolist() == [1]
