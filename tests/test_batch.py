"""solve_batch on the CPU: every graph of thousands of random batches against SciPy, the
three input forms, predecessors, hop counts, clipping, negative cycles and bad input."""
from __future__ import annotations

import numpy as np
import pytest

import floydwarp as fw
from batch_model import KINDS, as_float, check, padded_of, pyg_of, random_batch, random_graph, reference
from floydwarp.errors import DtypeError, FloydwarpError
from floydwarp.predecessors import NO_PREDECESSOR


@pytest.mark.parametrize("kind", KINDS)
def test_thousands_of_random_batches(kind):
    """400 batches of each kind (2,000 in all), ragged sizes 0..13, every graph against SciPy."""
    rng = np.random.default_rng(sum(map(ord, kind)))
    for _ in range(400):
        mats = random_batch(rng, int(rng.integers(1, 9)), 13, kind)
        check(fw.solve_batch(mats), mats)


def test_thousands_of_random_hop_count_batches():
    """500 batches of hop counts (the saturating uint8 kernel), ragged sizes 0..40."""
    rng = np.random.default_rng(23)
    for _ in range(500):
        mats = random_batch(rng, int(rng.integers(1, 7)), 40, KINDS[int(rng.integers(len(KINDS)))])
        hops = [np.where(np.isinf(m), np.inf, 1.0) for m in mats]
        r = fw.solve_batch(mats, unweighted=True)
        assert r.dtype == np.uint8 and r.metadata["kernel_dtype"] == "uint8"
        check(r, hops)


@pytest.mark.parametrize("dtype", ["auto", "int16", "int32", "int64", "float32", "float64"])
def test_sizes_around_whole_vectors(dtype):
    """Graphs of 1, 2, 3 and 4 vectors a row and more (lanes: 32 uint8 ... 4 float64), each
    size just below, at and above a multiple of the lanes, in one batch."""
    rng = np.random.default_rng(len(dtype))
    sizes = [0, 1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 47, 48, 49, 63, 64, 65, 96, 97, 130]
    for kind in ("pos", "neg"):
        mats = [random_graph(rng, n, kind) for n in rng.permutation(sizes)]
        if dtype == "auto" and kind == "pos":
            mats = [np.where(np.isinf(m), np.inf, np.minimum(m, 1)) for m in mats]   # reach < 255: uint8
        r = fw.solve_batch(mats, dtype=dtype)
        check(r, mats)


def test_kernel_dtype_saturating_uint8_up_to_255_vertices():
    """Hop counts of a 255-vertex path reach 254: still uint8 arithmetic; small integer weights
    too, stored in the plan's dtype; 256 vertices or predecessors use the plan's dtype."""
    path = np.full((255, 255), np.inf)
    path[np.arange(254), np.arange(1, 255)] = 1
    r = fw.solve_batch([path], unweighted=True)
    assert r.metadata["kernel_dtype"] == "uint8" and r.dist[0, 0, 254] == 254 and r.dist[0, 254, 0] == 255
    weighted = np.array([[0, 2.0, np.inf], [np.inf, 0, 3], [1, np.inf, 0]])
    r = fw.solve_batch([weighted, weighted[:2, :2]])
    assert (r.dtype.name, r.metadata["kernel_dtype"]) == ("int16", "uint8")
    assert r.dist[0].tolist() == [[0, 2, 5], [4, 0, 3], [1, 3, 0]] and r.dist[1, 0, 2] == r.inf
    assert fw.solve_batch([weighted], dtype="float32").dist[0, 1, 0] == 4.0
    longer = np.full((256, 256), np.inf)
    longer[np.arange(255), np.arange(1, 256)] = 1
    assert fw.solve_batch([longer], unweighted=True).metadata["kernel_dtype"] == "int16"
    assert fw.solve_batch([path], unweighted=True, predecessors=True).metadata["kernel_dtype"] == "int16"
    clipped = fw.solve_batch([weighted * 100], max_distance=250)     # reach 500: int16 arithmetic, clipped
    assert clipped.metadata["kernel_dtype"] == "int16" and clipped.dist[0, 0, 2] == 250


@pytest.mark.parametrize("dtype", ["int16", "int32", "int64", "float32", "float64"])
def test_every_dtype_and_three_input_forms(dtype):
    rng = np.random.default_rng(7)
    mats = random_batch(rng, 40, 70, "neg")          # sizes past one 64-byte row
    refs = [reference(m) for m in mats]
    edge_index, weight, ptr = pyg_of(mats)
    padded, sizes = padded_of(mats)
    for given in (mats, fw.GraphBatch.from_pyg(edge_index, weight, ptr=ptr), padded):
        r = fw.solve_batch(given, dtype=dtype, sizes=sizes if given is padded else None)
        assert r.dtype.name == dtype and r.backend == "cpu"
        check(r, mats, refs)


def test_batch_vector_parallel_edges_and_unsorted_edges():
    """PyG's ``batch`` vector; edges not grouped by graph; parallel edges keep the lightest."""
    rng = np.random.default_rng(3)
    mats = random_batch(rng, 12, 9, "pos")
    edge_index, weight, ptr = pyg_of(mats)
    extra = rng.permutation(edge_index.shape[1])[:20]
    edge_index = np.concatenate([edge_index, edge_index[:, extra]], axis=1)
    weight = np.concatenate([weight, weight[extra] + 3])
    perm = rng.permutation(edge_index.shape[1])
    batch = np.repeat(np.arange(len(mats)), np.diff(ptr))
    r = fw.solve_batch(fw.GraphBatch.from_pyg(edge_index[:, perm], weight[perm], batch=batch,
                                              num_graphs=len(mats)))
    check(r, mats)


def test_pyg_edges_in_many_chunks(monkeypatch):
    """The parallel edge pass with chunks of a few edges: grouped and scattered edges give the
    same graphs, and the first bad edge is the one named."""
    from floydwarp.batch import pyg_layout

    monkeypatch.setattr(pyg_layout, "EDGE_CHUNK", 5)
    rng = np.random.default_rng(31)
    mats = random_batch(rng, 25, 9, "pos")
    edge_index, weight, ptr = pyg_of(mats)
    check(fw.solve_batch(fw.GraphBatch.from_pyg(edge_index, weight, ptr=ptr)), mats)
    perm = rng.permutation(edge_index.shape[1])
    check(fw.solve_batch(fw.GraphBatch.from_pyg(edge_index[:, perm], weight[perm], ptr=ptr)), mats)
    bad = edge_index.copy()
    bad[1, 40], bad[0, 46] = ptr[-1], -3
    with pytest.raises(FloydwarpError, match=rf"edge 40 \({bad[0, 40]} -> {ptr[-1]}\): target vertex"):
        fw.GraphBatch.from_pyg(bad, ptr=ptr)


def test_predecessors_equal_the_textbook_order():
    """Predecessors are exactly the k-order reference's (ties included), and routes are shortest."""
    rng = np.random.default_rng(11)
    for kind in ("pos", "zero", "neg", "undirected"):
        mats = random_batch(rng, 30, 20, kind)
        r = fw.solve_batch(mats, predecessors=True)
        for g, m in enumerate(mats):
            n = m.shape[0]
            ref = fw.solve(m, dtype=r.dtype, backend="reference", predecessors=True)
            np.testing.assert_array_equal(r.pred[g, :n, :n], ref.pred)
            assert np.all(r.pred[g, n:, :] == NO_PREDECESSOR) and np.all(r.pred[g, :, n:] == NO_PREDECESSOR)
            view = r[g]
            for u, v in zip(*np.nonzero(ref.dist < ref.inf)):
                path = view.path(int(u), int(v))
                assert sum(m[a, b] for a, b in zip(path, path[1:])) == ref.dist[u, v]


def test_hop_counts_uint8_and_max_distance():
    rng = np.random.default_rng(5)
    mats = random_batch(rng, 50, 30, "pos")
    hops = [np.where(np.isinf(m), np.inf, 1.0) for m in mats]
    r = fw.solve_batch(mats, unweighted=True)
    assert r.dtype == np.uint8 and r.inf == 255
    check(r, hops)
    clipped = fw.solve_batch(mats, unweighted=True, max_distance=3)
    for g, m in enumerate(hops):
        n = m.shape[0]
        ref = reference(m)
        want = np.where(np.isinf(ref), 255, np.minimum(ref, 3))
        np.testing.assert_array_equal(clipped.dist[g, :n, :n], want)
    assert fw.solve_batch(mats, unweighted=True, dtype="int16").dtype == np.int16
    for dtype in ("auto", "int16", "float32"):          # a clip beyond every distance cuts nothing
        far = fw.solve_batch(mats, unweighted=True, dtype=dtype, max_distance=10 ** 6)
        np.testing.assert_array_equal(far.dist, fw.solve_batch(mats, unweighted=True, dtype=dtype).dist)


def test_uint8_is_refused_or_widened_never_overflowed():
    path = np.full((300, 300), np.inf)
    path[np.arange(299), np.arange(1, 300)] = 1
    r = fw.solve_batch([path], unweighted=True)           # 299 hops do not fit in uint8
    assert r.dtype == np.int16 and r.dist[0, 0, 299] == 299
    assert fw.solve_batch([path], unweighted=True, max_distance=254).dtype == np.uint8
    with pytest.raises(DtypeError, match="uint8"):
        fw.solve_batch([path], unweighted=True, dtype="uint8")
    with pytest.raises(DtypeError, match="uint8"):
        fw.solve_batch([np.array([[0, -1.0], [np.inf, 0]])], dtype="uint8")
    heavy = np.array([[0, 30000.0], [np.inf, 0]])
    assert fw.solve_batch([heavy]).dtype == np.int32
    with pytest.raises(DtypeError):
        fw.solve_batch([heavy, heavy], dtype="int16")


def test_explicit_narrow_dtype_checked_after_the_run():
    """int16 for a long path of heavy edges: too narrow a priori, proven after the run."""
    chain = np.full((40, 40), np.inf)
    chain[np.arange(39), np.arange(1, 40)] = 400          # bound 39 * 400 < 16383 but 15,600 fits
    r = fw.solve_batch([chain], dtype="int16")
    assert r.dist[0, 0, 39] == 15600
    chain[np.arange(39), np.arange(1, 40)] = 500          # 19,500 does not fit
    with pytest.raises(DtypeError, match="too narrow"):
        fw.solve_batch([chain], dtype="int16")
    with pytest.raises(DtypeError, match="max_distance"):
        fw.solve_batch([chain], dtype="int16", max_distance=10)


def test_negative_cycle_in_the_middle_of_a_batch():
    rng = np.random.default_rng(2)
    mats = random_batch(rng, 9, 12, "neg")
    cycle = np.full((4, 4), np.inf)
    cycle[0, 1], cycle[1, 2], cycle[2, 0], cycle[2, 3] = 1, -3, 1, 5
    mats.insert(5, cycle)
    for kwargs in ({}, {"predecessors": True}, {"dtype": "float64"}):
        r = fw.solve_batch(mats, **kwargs)
        assert r.negative_cycle.tolist() == [g == 5 for g in range(len(mats))]
        for g, m in enumerate(mats):
            n = m.shape[0]
            if g == 5:
                alone = fw.solve(m, dtype=r.dtype)
                np.testing.assert_array_equal(r.dist[g, :n, :n], alone.dist)
                assert r[g].has_negative_cycle and r[g].distance(0, 3) == -np.inf
            else:
                np.testing.assert_array_equal(as_float(r.dist[g, :n, :n], r.inf), reference(m))


def test_negative_self_loop_is_a_negative_cycle():
    r = fw.solve_batch([np.array([[-1.0]]), np.array([[3.0]])])
    assert r.negative_cycle.tolist() == [True, False] and r.dist[1, 0, 0] == 0


def test_empty_batch_and_empty_graphs():
    r = fw.solve_batch([])
    assert r.dist.shape == (0, 0, 0) and len(r) == 0
    r = fw.solve_batch([np.zeros((0, 0)), np.zeros((0, 0))])
    assert r.dist.shape == (2, 0, 0)
    r = fw.solve_batch(fw.GraphBatch.from_pyg(np.zeros((2, 0), np.int64), ptr=np.array([0, 0, 1, 1])))
    assert r.sizes.tolist() == [0, 1, 0] and r.dist.shape == (3, 1, 1)
    assert r.dist[:, 0, 0].tolist() == [r.inf, 0, r.inf]


def test_max_n_pads_and_refuses():
    mats = [np.array([[0, 1.0], [1, 0]])]
    r = fw.solve_batch(mats, max_n=5)
    assert r.dist.shape == (1, 5, 5) and r.dist[0, 0, 1] == 1 and r.dist[0, 3, 3] == r.inf
    with pytest.raises(FloydwarpError, match="graph 0 has 2 vertices, more than max_n = 1"):
        fw.solve_batch(mats, max_n=1)


def test_result_views_files_and_labels(tmp_path):
    import networkx as nx

    g = nx.Graph()
    g.add_weighted_edges_from([("a", "b", 2), ("b", "c", 3)])
    r = fw.solve_batch([g, np.array([[0, 1.0], [np.inf, 0]])], predecessors=True)
    assert r[0].distance("a", "c") == 5 and r[0].path("a", "c") == ["a", "b", "c"]
    assert r[1].reachable(0, 1) and not r[1].reachable(1, 0)
    assert [v.n for v in r] == [3, 2]
    assert r.relaxations == 27 + 8 and "compute" in r.timings
    path = r.save(tmp_path / "out.npz")
    back = fw.BatchResult.load(path)
    np.testing.assert_array_equal(back.dist, r.dist)
    np.testing.assert_array_equal(back.pred, r.pred)
    assert back.sizes.tolist() == [3, 2] and back[0].distance(0, 2) == 5
    with pytest.raises(FloydwarpError, match="not a floydwarp batch result"):
        fw.BatchResult.load(tmp_path / "missing.npz")


# ---------------------------------------------------------------------- bad input
def _pyg(edge_index, **kwargs):
    return fw.solve_batch(fw.GraphBatch.from_pyg(np.asarray(edge_index), **kwargs))


def test_edge_out_of_range_for_its_graph():
    with pytest.raises(FloydwarpError, match=r"edge 2 \(1 -> 3\) is out of range for its graph: vertex 1 is in "
                                             r"graph 0 \(vertices 0..2\) but vertex 3 is in graph 1"):
        _pyg([[0, 1, 1], [1, 2, 3]], ptr=np.array([0, 3, 5]))


def test_edge_out_of_range_of_the_batch():
    with pytest.raises(FloydwarpError, match=r"edge 1 \(1 -> 7\): target vertex 7 is out of range 0..4"):
        _pyg([[0, 1], [1, 7]], ptr=np.array([0, 3, 5]))
    with pytest.raises(FloydwarpError, match=r"edge 0 \(-1 -> 1\): source vertex -1"):
        _pyg([[-1], [1]], batch=np.array([0, 0]))


def test_unsorted_batch_and_bad_ptr():
    with pytest.raises(FloydwarpError, match="batch is not sorted: vertex 2 is in graph 0 but vertex 1 before it "
                                             "is in graph 1"):
        _pyg([[0], [1]], batch=np.array([0, 1, 0]))
    with pytest.raises(FloydwarpError, match=r"ptr is not sorted: ptr\[2\] = 1 is below ptr\[1\] = 3"):
        _pyg([[0], [1]], ptr=np.array([0, 3, 1]))
    with pytest.raises(FloydwarpError, match="ptr must start at 0"):
        _pyg([[0], [1]], ptr=np.array([1, 3]))
    with pytest.raises(FloydwarpError, match="give batch= .* or ptr="):
        _pyg([[0], [1]])


def test_mismatched_lengths_and_shapes():
    with pytest.raises(FloydwarpError, match=r"edge_weight has shape \(3,\) but edge_index has 2 edges"):
        _pyg([[0, 1], [1, 0]], edge_weight=np.ones(3), ptr=np.array([0, 2]))
    with pytest.raises(FloydwarpError, match=r"edge_index must have shape \(2, E\)"):
        _pyg([[0, 1, 2]], ptr=np.array([0, 3]))
    with pytest.raises(FloydwarpError, match="sizes has 3 entries for a batch of 2 graphs"):
        fw.solve_batch(np.zeros((2, 4, 4)), sizes=[1, 2, 3])
    with pytest.raises(FloydwarpError, match=r"graph 1: size 5 is out of range 0..4"):
        fw.solve_batch(np.zeros((2, 4, 4)), sizes=[1, 5])
    with pytest.raises(FloydwarpError, match=r"shape \(B, N, N\)"):
        fw.solve_batch(np.zeros((2, 4, 3)))


def test_bad_weights_name_graph_and_edge():
    with pytest.raises(FloydwarpError, match=r"edge 1 \(graph 0, 1 -> 0\) has weight nan"):
        _pyg([[0, 1], [1, 0]], edge_weight=np.array([1, np.nan]), ptr=np.array([0, 2]))
    padded = np.full((3, 2, 2), np.inf)
    padded[2, 1, 0] = np.nan
    with pytest.raises(FloydwarpError, match=r"graph 2: entry \[1, 0\] has weight nan"):
        fw.solve_batch(padded)
    padded[2, 1, 0] = np.nan
    with pytest.raises(FloydwarpError, match=r"max_distance must be a non-negative integer"):
        fw.solve_batch([random_graph(np.random.default_rng(0), 3, "pos")], max_distance=-1)


def test_list_errors_name_the_graph():
    with pytest.raises(FloydwarpError, match=r"graph 1: matrix entry \[0, 1\] has weight nan"):
        fw.solve_batch([np.zeros((2, 2)), np.array([[0, np.nan], [1, 0]])])
    with pytest.raises(FloydwarpError, match=r"graph 2: a weight matrix must be square"):
        fw.solve_batch([np.zeros((1, 1)), np.zeros((1, 1)), np.zeros((2, 3))])


def test_pyg_and_dgl_objects_of_torch_tensors():
    """A PyG ``Batch``-like object and a batched DGL graph, both holding Torch tensors (the
    attributes and methods solve_batch reads; neither library is needed)."""
    torch = pytest.importorskip("torch")
    from types import SimpleNamespace

    rng = np.random.default_rng(12)
    mats = random_batch(rng, 15, 9, "pos")
    edge_index, weight, ptr = pyg_of(mats)
    node_graph = np.repeat(np.arange(len(mats)), np.diff(ptr))
    pyg = SimpleNamespace(edge_index=torch.from_numpy(edge_index), edge_weight=torch.from_numpy(weight),
                          batch=torch.from_numpy(node_graph), ptr=None, num_graphs=len(mats))
    check(fw.solve_batch(pyg), mats)

    class BatchedDGLGraph:
        edata = {"w": torch.from_numpy(weight)}

        def edges(self):
            return torch.from_numpy(edge_index[0]), torch.from_numpy(edge_index[1])

        def batch_num_nodes(self):
            return torch.from_numpy(np.diff(ptr))

    check(fw.solve_batch(BatchedDGLGraph(), edge_weight="w"), mats)
    check(fw.solve_batch(BatchedDGLGraph(), edge_weight=torch.from_numpy(weight)), mats)
    hops = fw.solve_batch(BatchedDGLGraph(), unweighted=True)
    check(hops, [np.where(np.isinf(m), np.inf, 1.0) for m in mats])


def test_backends_and_dlpack_inputs():
    with pytest.raises(FloydwarpError, match="unknown batch backend 'tpu'"):
        fw.solve_batch([np.zeros((1, 1))], backend="tpu")
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(9)
    mats = random_batch(rng, 10, 8, "pos")
    edge_index, weight, ptr = pyg_of(mats)
    r = fw.solve_batch(fw.GraphBatch.from_pyg(torch.from_numpy(edge_index), torch.from_numpy(weight),
                                              ptr=torch.from_numpy(ptr)))
    check(r, mats)
    padded, sizes = padded_of(mats)
    check(fw.solve_batch(torch.from_numpy(padded), sizes=torch.from_numpy(sizes)), mats)


# ---------------------------------------------------------------------- command line and study
def test_cli_batch_files_and_npz(tmp_path, capsys):
    from floydwarp.batch.generate import molecules
    from floydwarp.cli import main
    from floydwarp.io import write_graph

    edge_index, ptr = molecules(30, seed=1)
    np.savez(tmp_path / "mols.npz", edge_index=edge_index, ptr=ptr)
    with pytest.raises(SystemExit) as done:
        main(["batch", str(tmp_path / "mols.npz"), "--unweighted", "--max-distance", "3", "-o",
              str(tmp_path / "out.npz"), "--no-progress"])
    assert done.value.code == 0 and "solved 30 graphs" in capsys.readouterr().out
    r = fw.BatchResult.load(tmp_path / "out.npz")
    want = fw.solve_batch(fw.GraphBatch.from_pyg(edge_index, ptr=ptr), unweighted=True, max_distance=3)
    np.testing.assert_array_equal(r.dist, want.dist)
    write_graph(np.array([[0, 2.0], [np.inf, 0]]), tmp_path / "a.npy")
    write_graph(np.array([[0, 1.0, 5], [np.inf, 0, 1], [np.inf, np.inf, 0]]), tmp_path / "b.npy")
    with pytest.raises(SystemExit) as done:
        main(["batch", str(tmp_path / "a.npy"), str(tmp_path / "b.npy"), "-o", str(tmp_path / "ab.npz"),
              "--predecessors", "--no-progress"])
    r = fw.BatchResult.load(tmp_path / "ab.npz")
    assert r.sizes.tolist() == [2, 3] and r[1].distance(0, 2) == 2 and r.pred is not None
    with pytest.raises(SystemExit) as done:
        main(["batch", str(tmp_path / "mols.npz"), "-o", str(tmp_path / "mols.npz"), "--no-progress"])
    assert done.value.code == 2 and "refusing to overwrite the input file" in capsys.readouterr().err


def test_bench_batch_study(tmp_path):
    from floydwarp.bench import STUDIES, BenchConfig

    config = BenchConfig(backends=["cpu"], repeats=1, batches=[40], options={"loop_max": 10})
    data = STUDIES["batch"](config)
    methods = {r["method"]: r for r in data["records"]}
    assert methods["floydwarp batch"]["status"] == "ok" and methods["floydwarp batch"]["graphs"] == 40
    assert methods["scipy loop"]["matches"] and methods["floydwarp loop"]["matches"]
    assert methods["scipy loop"]["timed_graphs"] == 10
    assert methods["graphormer loop"]["status"] == "skipped"
    assert methods["floydwarp batch"]["speedup_vs_scipy"] > 0
    forms = {(r["input"], r["problem"]) for r in data["records"]
             if r["method"] == "floydwarp batch" and r["input"] != "pyg"}
    assert forms == {(f, p) for f in ("dense list", "padded", "padded adjacency", "sparse list", "graph list")
                     for p in ("hops", "weights")}
    assert all(r["matches"] for r in data["records"] if r.get("status") == "ok" and "matches" in r)
    assert methods["graphormer collate"]["status"] == "ok"
    assert methods["graphormer cython collate"]["status"] == "skipped"
    assert methods["dgl shortest_dist"]["speedup_vs_loop"] > 0
    assert methods["pyg transform"]["status"] in ("ok", "skipped")
