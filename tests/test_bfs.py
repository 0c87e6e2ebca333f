"""All-pairs breadth-first search (cpu/bfs): hop counts equal SciPy's breadth-first searches
and the reference backend's Floyd-Warshall on hundreds of random graphs (directed and not,
disconnected, isolated vertices, self-loops, parallel edges, n = 0, 1, 2, around multiples of
64, long paths whose distances outgrow uint8); ``algorithm="auto"`` takes it exactly when
every edge weighs 1; its results work with every Result method and metric."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.sparse.csgraph import shortest_path

import floydwarp as fw
from floydwarp import bfs, metrics, numeric, registry
from floydwarp.errors import DtypeError, FloydwarpError

SIZES = (0, 1, 2, 3, 5, 17, 63, 64, 65, 100, 127, 128, 129, 200, 257, 300)


def random_edges(rng, n, *, directed, density):
    """Edges with duplicates, self-loops and (at low density) isolated vertices."""
    m = int(density * n * max(n - 1, 1))
    src = rng.integers(0, max(n, 1), m) if n else np.zeros(0, np.int64)
    dst = rng.integers(0, max(n, 1), m) if n else np.zeros(0, np.int64)
    if not directed:
        src, dst = np.r_[src, dst], np.r_[dst, src]
    return src, dst


def scipy_hops(n, src, dst):
    """SciPy's breadth-first searches, float64 with inf for unreachable."""
    adjacency = sp.csr_matrix((np.ones(len(src)), (src, dst)), shape=(n, n))
    return shortest_path(adjacency, unweighted=True, directed=True)


def narrowest(hops):
    finite = hops[np.isfinite(hops)]
    deepest = finite.max() if finite.size else 0
    return np.dtype(np.uint8) if deepest < 255 else np.dtype(np.int16)


def check_predecessors(r, n, src, dst):
    """Every predecessor is the smallest in-neighbour one hop closer (an independent loop)."""
    d = r.to_dense()
    into = [sorted({int(s) for s, t in zip(src, dst) if t == j and s != j}) for j in range(n)]
    for i in range(n):
        for j in range(n):
            want = fw.NO_PREDECESSOR
            if i != j and np.isfinite(d[i, j]):
                want = next(x for x in into[j] if d[i, x] == d[i, j] - 1)
            assert r.pred[i, j] == want, (i, j)


@pytest.mark.parametrize("directed", [True, False], ids=["directed", "undirected"])
@pytest.mark.parametrize("n", SIZES)
def test_hop_counts_equal_scipy_and_the_reference(n, directed):
    rng = np.random.default_rng(1000 * n + directed)
    for density in (0.0, 0.5 / max(n, 1), 2.0 / max(n, 1), 0.05, 0.3):
        src, dst = random_edges(rng, n, directed=directed, density=density)
        graph = fw.Graph.from_edges(src, dst, n=n)
        r = fw.solve(graph, backend="cpu")
        want = scipy_hops(n, src, dst)
        assert r.algorithm == "bfs" and r.dtype == narrowest(want)
        assert r.inf == numeric.inf_of(r.dtype) and r.dist.flags.c_contiguous
        np.testing.assert_array_equal(r.to_dense(), want)
        ref = fw.solve(graph, backend="reference")
        np.testing.assert_array_equal(r.to_dense(), ref.to_dense())
        assert r.metadata["levels"] == (int(want[np.isfinite(want)].max()) if n else 0)


@pytest.mark.parametrize("n", [0, 1, 2, 9, 64, 70, 130])
@pytest.mark.parametrize("directed", [True, False], ids=["directed", "undirected"])
def test_predecessors_are_exact_and_routes_are_shortest(n, directed):
    rng = np.random.default_rng(n)
    for density in (0.02, 0.1, 0.4):
        src, dst = random_edges(rng, n, directed=directed, density=density)
        r = fw.solve(fw.Graph.from_edges(src, dst, n=n), backend="cpu", predecessors=True)
        assert r.algorithm == "bfs" and r.pred.dtype == np.int32
        check_predecessors(r, n, src, dst)
        for i in range(min(n, 5)):
            for j in range(n):
                if r.reachable(i, j):
                    assert len(r.path(i, j)) == r.distance(i, j) + 1


@pytest.mark.parametrize("length, dtype", [(255, "uint8"), (256, "int16"), (700, "int16")])
def test_long_paths_widen_the_dtype_past_uint8(length, dtype):
    """A path of 256 vertices has a distance of 255, uint8's INF: the search moves to int16."""
    n = length
    for directed in (True, False):
        src, dst = np.arange(n - 1), np.arange(1, n)
        if not directed:
            src, dst = np.r_[src, dst], np.r_[dst, src]
        r = fw.solve(fw.Graph.from_edges(src, dst, n=n), backend="cpu", predecessors=True)
        assert r.dtype == np.dtype(dtype) and r.metadata["levels"] == n - 1
        np.testing.assert_array_equal(r.to_dense(), scipy_hops(n, src, dst))
        assert r.distance(0, n - 1) == n - 1 and r.path(0, n - 1) == list(range(n))
        assert r.reachable(n - 1, 0) is not directed


def test_an_explicit_dtype_is_kept_and_one_too_narrow_is_refused():
    n = 300
    graph = fw.Graph.from_edges(np.arange(n - 1), np.arange(1, n), n=n)
    for dtype in ("int16", "int32", "int64"):
        r = fw.solve(graph, backend="cpu", dtype=dtype)
        assert r.algorithm == "bfs" and r.dtype == np.dtype(dtype) and r.distance(0, n - 1) == n - 1
    r = fw.solve(graph, backend="cpu", dtype="float32")       # bfs stores integers: Floyd-Warshall runs
    assert r.algorithm == "blocked" and r.distance(0, n - 1) == n - 1
    assert numeric.hop_storage(np.dtype("int16"), False) == (np.dtype("int16"),)
    assert numeric.hop_storage(np.dtype("int32"), True) == tuple(map(np.dtype, ("uint8", "int16", "int32")))
    stats = numeric.WeightStats(20000, 1, 1, True)          # int16 only after the run: its check stays
    choice = numeric.choose_dtype("int16", stats)
    assert choice.dtype == np.dtype("int16") and choice.verify_after


def test_auto_takes_bfs_exactly_for_unit_weights():
    rng = np.random.default_rng(5)
    src, dst = random_edges(rng, 40, directed=True, density=0.1)
    unit = fw.Graph.from_edges(src, dst, n=40)
    assert fw.solve(unit, backend="cpu").algorithm == "bfs"
    assert fw.solve(unit, backend="cpu", predecessors=True).algorithm == "bfs"
    assert fw.solve(unit, backend="cpu", algorithm="blocked").algorithm == "blocked"
    floats = fw.Graph.from_edges(src, dst, n=40, weight=np.ones(src.size) * 1.0)
    assert fw.solve(floats, backend="cpu").algorithm == "bfs"
    assert fw.solve(fw.Graph(5, edges=(np.zeros(0, np.int64),) * 3), backend="cpu").algorithm == "bfs"
    for weights in (np.full(src.size, 2), np.where(np.arange(src.size) % 7, 1, 3), np.full(src.size, 0.5)):
        weighted = fw.Graph.from_edges(src, dst, weights, n=40)
        assert fw.solve(weighted, backend="cpu").algorithm == "blocked"
        assert "every edge must weigh 1" in bfs.refusal(weighted, {})
        refusal = "breadth-first search counts hops|does not support dtype float64"
        with pytest.raises(FloydwarpError, match=f"cpu/bfs (cannot run this call: {refusal})"):
            fw.solve(weighted, backend="cpu", algorithm="bfs")
    negative_loop = fw.Graph.from_edges([0, 1], [0, 0], [-1, 1], n=2)
    assert bfs.refusal(negative_loop, {}) and fw.solve(negative_loop, backend="cpu").algorithm == "blocked"
    # a dense 0/1 matrix of SciPy's unweighted reading is unit weights too
    dense = np.where(rng.random((30, 30)) < 0.1, 1.0, 0.0)
    assert fw.solve(fw.Graph.from_dense(dense, missing=0), backend="cpu").algorithm == "bfs"
    np.testing.assert_array_equal(fw.floyd_warshall(dense, unweighted=True),
                                  shortest_path(dense, unweighted=True, method="D"))


def test_threads_and_repeated_runs_agree():
    rng = np.random.default_rng(8)
    src, dst = random_edges(rng, 600, directed=True, density=0.004)
    graph = fw.Graph.from_edges(src, dst, n=600)
    one = fw.solve(graph, backend="cpu", threads=1)
    two = fw.solve(graph, backend="cpu", threads=2)
    np.testing.assert_array_equal(one.dist, two.dist)
    np.testing.assert_array_equal(one.dist, fw.solve(graph, backend="cpu").dist)


@pytest.mark.parametrize("directed", [True, False], ids=["directed", "undirected"])
def test_metrics_of_a_uint8_result_equal_the_reference(directed):
    """Every metric of the narrowed result equals the one of the reference's int16 result."""
    for seed in range(12):
        rng = np.random.default_rng(seed)
        n = int(rng.integers(1, 90))
        src, dst = random_edges(rng, n, directed=directed, density=float(rng.choice([0.01, 0.05, 0.3])))
        graph = fw.Graph.from_edges(src, dst, n=n)
        r, ref = fw.solve(graph, backend="cpu"), fw.solve(graph, backend="reference")
        assert r.dtype == np.uint8 and ref.dtype == np.int16
        got, want = r.eccentricity(), ref.eccentricity()
        assert got.dtype == np.uint8
        np.testing.assert_array_equal(got < r.inf, want < ref.inf)
        np.testing.assert_array_equal(got[got < r.inf].astype(np.int64), want[want < ref.inf])
        for name in ("diameter", "radius", "center", "periphery", "average_path_length", "wiener_index"):
            got, want = getattr(r, name)(), getattr(ref, name)()
            assert got == want and type(got) is type(want), name
        for wf in (True, False):
            np.testing.assert_array_equal(r.closeness(wf), ref.closeness(wf))
        for axis in (0, 1):
            for a, b in zip(metrics.reach_sums(r.dist, r.inf, axis), metrics.reach_sums(ref.dist, ref.inf, axis)):
                np.testing.assert_array_equal(a, b)
        assert metrics.inverse_distance_sum(r.dist, r.inf) == pytest.approx(
            metrics.inverse_distance_sum(ref.dist, ref.inf), rel=1e-15)


def test_result_methods_work_on_uint8_hop_counts(tmp_path):
    from floydwarp.checksum import checksum

    rng = np.random.default_rng(3)
    src, dst = random_edges(rng, 50, directed=True, density=0.04)
    graph = fw.Graph.from_edges(src, dst, n=50)
    r, ref = fw.solve(graph, backend="cpu", predecessors=True), fw.solve(graph, backend="reference")
    assert r.dtype == np.uint8 and r.inf == 255
    assert r.distances_from(0) == ref.distances_from(0)
    assert all(type(v) is int for v in r.distances_from(0).values() if v != float("inf"))
    assert checksum(r) == checksum(ref)
    back = fw.Result.load(r.save(tmp_path / "r.npz"))
    assert back.dtype == np.uint8 and back.inf == 255
    np.testing.assert_array_equal(back.to_dense(), ref.to_dense())
    # a new edge: the update computes in a signed type, so the result widens to int16 first
    a, b = next((a, b) for a in range(50) for b in range(50) if a != b and not ((src == a) & (dst == b)).any())
    r.update_edge(a, b, 7)
    fresh = fw.solve(r.graph, backend="reference", predecessors=True)
    assert r.dtype == np.int16
    np.testing.assert_array_equal(r.to_dense(), fresh.to_dense())
    r.update_edge(a, b, None)
    np.testing.assert_array_equal(r.to_dense(), ref.to_dense())


def test_registry_lookup_prefers_suited_algorithms_and_says_why_not():
    impl = registry.lookup("cpu", "auto", dtype=np.dtype("int16"), predecessors=True, n=10,
                           graph=fw.Graph.from_edges([0], [1], n=10))
    assert impl.algorithm == "bfs" and impl.preferred and not impl.default
    weighted = fw.Graph.from_edges([0], [1], [4], n=10)
    assert registry.lookup("cpu", "auto", dtype=np.dtype("int16"), predecessors=False, n=10,
                           graph=weighted).algorithm == "blocked"
    with pytest.raises(FloydwarpError, match="does not support dtype float64"):
        registry.lookup("cpu", "bfs", dtype=np.dtype("float64"), predecessors=False, n=10)
    assert registry.lookup("cpu", "auto", dtype=np.dtype("float64"), predecessors=False, n=10,
                           graph=fw.Graph.from_edges([0], [1], n=10)).algorithm == "blocked"


def test_a_too_narrow_explicit_dtype_is_the_dtype_error():
    """The engine's own check: a distance reaching the only dtype's INF (an explicit int16 on
    a path longer than it holds) is refused, not wrapped."""
    from floydwarp.cpu import bfs_kernels

    n = 300
    graph = fw.Graph.from_edges(np.arange(n - 1), np.arange(1, n), n=n)
    out_ptr, out_idx = graph.csr()
    in_ptr, in_idx = graph.csr(reverse=True)
    dist = np.empty((n, n), np.uint8)
    assert bfs_kernels.hop_distances(out_ptr, out_idx, in_ptr, in_idx, dist, 255) == -1
    assert bfs_kernels.hop_distances(out_ptr, out_idx, in_ptr, in_idx, dist.astype(np.int16), 16383) == n - 1
    with pytest.raises(DtypeError, match="too narrow"):
        from floydwarp.cpu import bfs as cpu_bfs
        from floydwarp.plan import Plan

        plan = Plan(n=n, dtype=np.dtype("uint8"), inf=255, clamp=False, backend="cpu", algorithm="bfs",
                    stats=graph.weight_stats())
        cpu_bfs.run(graph, plan)


def test_csr_lists_neighbours_in_order_both_ways():
    src = np.array([3, 0, 2, 0, 3, 1])
    dst = np.array([0, 2, 1, 1, 1, 3])
    graph = fw.Graph(4, edges=(src, dst, np.ones(6, np.int64)))        # unsorted, as with_edge leaves them
    ptr, idx = graph.csr()
    assert ptr.tolist() == [0, 2, 3, 4, 6] and idx.tolist() == [1, 2, 3, 1, 0, 1]
    ptr, idx = graph.csr(reverse=True)
    assert ptr.tolist() == [0, 1, 4, 5, 6] and idx.tolist() == [3, 0, 2, 3, 0, 1]


def test_checkpoints_are_floyd_warshall_s_and_workdir_holds_the_matrices(tmp_path, monkeypatch):
    from floydwarp.cpu import storage

    rng = np.random.default_rng(4)
    src, dst = random_edges(rng, 120, directed=True, density=0.03)
    graph = fw.Graph.from_edges(src, dst, n=120)
    want = scipy_hops(120, src, dst)
    r = fw.solve(graph, backend="cpu", checkpoint=tmp_path / "ckpt")
    assert r.algorithm == "blocked"
    np.testing.assert_array_equal(r.to_dense(), want)
    with pytest.raises(TypeError, match=r"'resume' \(cpu/bfs does not take it; cpu/blocked"):
        fw.solve(graph, backend="cpu", algorithm="bfs", resume=tmp_path / "ckpt")
    work = tmp_path / "work"
    work.mkdir()
    r = fw.solve(graph, backend="cpu", predecessors=True, workdir=work)
    assert r.algorithm == "bfs" and isinstance(r.dist, np.memmap) and r.metadata["workdir"] == str(work)
    assert sorted(p.name for p in work.iterdir()) == ["dist.npy", "pred.npy"]
    np.testing.assert_array_equal(np.load(work / "dist.npy"), r.dist)
    np.testing.assert_array_equal(r.to_dense(), want)
    monkeypatch.setattr(storage, "available_memory", lambda: 1000)
    big = fw.Graph.from_edges([0], [1], n=9000)
    with pytest.raises(FloydwarpError, match=r"needs 81,000,000 bytes .* 1,000 are available; pass workdir=DIR"):
        fw.solve(big, backend="cpu")
