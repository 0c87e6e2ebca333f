"""The ``cpu`` backend (Numba): every algorithm x dtype against the reference backend and SciPy."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings, strategies as st
from scipy.sparse.csgraph import floyd_warshall as scipy_fw

import floydwarp as fw
from floydwarp.errors import FloydwarpError
from floydwarp.predecessors import NO_PREDECESSOR, walk

pytest.importorskip("numba")

ALGORITHMS = ("blocked", "rows", "serial")
DTYPES = ("int16", "int32", "int64", "float32", "float64")
BLOCKS = (None, 1, 2, 3, 4, 5, 7, 8, 13, 16, 64)
SETTINGS = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


# --------------------------------------------------------------------------- graphs
def random_graph(seed, n, density, kind):
    """A graph with self-loops, parallel edges and zero weights possible.

    kind: "nonneg" (0..9), "potential" (negative weights, no negative cycle),
    "negcycle" (-5..10, negative self-loops included), "float" / "float-potential"
    (non-integer weights), "er" / "er-potential" (floydwarp.generate.erdos_renyi).
    """
    rng = np.random.default_rng(seed)
    if kind.startswith("er"):
        return fw.generate.erdos_renyi(n, 100 * density, seed=seed, weights=(0, 9),
                                       potential=6 if kind == "er-potential" else 0)
    m = int(rng.binomial(n * n, density)) if n else 0
    src = rng.integers(0, max(n, 1), m)
    dst = rng.integers(0, max(n, 1), m)
    h = rng.integers(0, 7, max(n, 1))
    if kind == "nonneg":
        w = rng.integers(0, 10, m)
    elif kind == "potential":
        w = rng.integers(0, 10, m) + h[src] - h[dst]
    elif kind == "negcycle":
        w = rng.integers(-5, 11, m)
    elif kind == "float":
        w = rng.uniform(0, 10, m)
    elif kind == "float-potential":
        w = rng.uniform(0, 10, m) + h[src] - h[dst]
    else:
        raise AssertionError(kind)
    return fw.Graph.from_edges(src, dst, w, n=n)


def weight_matrix(graph):
    """Dense float64 weights (lightest parallel edge), inf = no edge."""
    w = np.full((graph.n, graph.n), np.inf)
    src, dst, wt = graph.edges()
    w[src, dst] = wt
    return w


def scipy_distances(w):
    n = w.shape[0]
    finite = np.isfinite(w)
    np.fill_diagonal(finite, False)
    i, j = np.nonzero(finite)
    return scipy_fw(sp.csr_matrix((w[i, j], (i, j)), shape=(n, n)), directed=True)


@st.composite
def graphs(draw, kinds):
    n = draw(st.integers(0, 80)) if draw(st.integers(0, 9)) else draw(st.integers(81, 300))
    density = draw(st.sampled_from([0.0, 0.01, 0.03, 0.08, 0.2, 0.5, 1.0]))
    kind = draw(st.sampled_from(kinds))
    seed = draw(st.integers(0, 2**32 - 1))
    return random_graph(seed, n, density, kind), kind


def cpu(graph, algorithm, dtype, **kw):
    return fw.solve(graph, backend="cpu", algorithm=algorithm, dtype=dtype, **kw)


def out_inf(dtype):
    return fw.inf_of(dtype)


def run_engine(graph, algorithm, dtype, predecessors=False, block_size=None, threads=None):
    """The engine's own output, before solve() post-processes it."""
    from floydwarp import numeric, registry
    from floydwarp.plan import Plan

    dt = np.dtype(dtype)
    impl = registry.lookup("cpu", algorithm, dtype=dt, predecessors=predecessors, n=graph.n)
    plan = Plan(n=graph.n, dtype=dt, inf=numeric.inf_of(dt),
                clamp=numeric.is_integer(dt) and graph.weight_stats().has_negative,
                backend="cpu", algorithm=algorithm, predecessors=predecessors,
                block_size=block_size, threads=threads)
    return impl.run(graph, plan)


# --------------------------------------------------------------------------- checks
def check_paths(result, w, rng, max_walks=400):
    """pred: edge-consistent everywhere; rebuilt paths sum to the distance."""
    n = result.n
    d = result.to_dense()
    pred = result.pred
    assert pred.shape == (n, n) and pred.dtype == np.int32
    reach = np.isfinite(d)
    off = ~np.eye(n, dtype=bool)
    assert np.array_equal(pred >= 0, reach & off)
    assert np.all(pred[~(reach & off)] == NO_PREDECESSOR)
    i, j = np.nonzero(reach & off)
    p = pred[i, j]
    tol = 1e-6 if result.dtype.kind == "i" else 1e-3 * (1 + np.abs(d[i, j]))
    assert np.all(np.abs(d[i, p] + w[p, j] - d[i, j]) <= tol)
    pairs = list(zip(i.tolist(), j.tolist()))
    if len(pairs) > max_walks:
        pairs = [pairs[k] for k in rng.choice(len(pairs), max_walks, replace=False)]
    for a, b in pairs:
        path = walk(pred[a], a, b, n)
        assert path[0] == a and path[-1] == b
        length = sum(w[u, v] for u, v in zip(path, path[1:]))
        assert abs(length - d[a, b]) <= (0 if result.dtype.kind == "i" else 1e-3 * (1 + abs(d[a, b])))


def assert_close(got, expected, dtype):
    """ints exact; floats within rounding of the float64 answer (inf pattern exact)."""
    assert np.array_equal(np.isinf(got), np.isinf(expected))
    if np.dtype(dtype).kind == "i":
        assert np.array_equal(got, expected)
    else:
        fin = np.isfinite(expected)
        rtol, atol = (1e-4, 1e-2) if dtype == "float32" else (1e-10, 1e-8)
        np.testing.assert_allclose(got[fin], expected[fin], rtol=rtol, atol=atol)


# --------------------------------------------------------------------------- tests
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("algorithm", ALGORITHMS)
@settings(max_examples=20, **SETTINGS)
@given(data=st.data())
def test_matches_reference_and_scipy(algorithm, dtype, data):
    kinds = ["nonneg", "potential", "er", "er-potential"]
    if dtype.startswith("float"):
        kinds += ["float", "float-potential"]
    graph, kind = data.draw(graphs(kinds))
    bs = data.draw(st.sampled_from(BLOCKS))
    pred = data.draw(st.booleans())
    r = cpu(graph, algorithm, dtype, predecessors=pred, block_size=bs)
    assert r.backend == "cpu" and r.algorithm == algorithm and r.dtype == np.dtype(dtype)
    assert not r.has_negative_cycle
    assert r.timings["compute"] >= 0
    w = weight_matrix(graph)
    ref = fw.solve(graph, backend="reference", dtype="float64")
    assert_close(r.to_dense(), ref.to_dense(), dtype)
    if dtype != "float64":  # the same dtype on the reference backend: bit-identical for integers
        same = fw.solve(graph, backend="reference", dtype=dtype)
        if dtype.startswith("int"):
            assert np.array_equal(r.dist, same.dist)
    if graph.n:
        assert_close(r.to_dense(), scipy_distances(w), dtype)
    if pred:
        check_paths(r, w, np.random.default_rng(0))


@pytest.mark.parametrize("algorithm", ALGORITHMS)
@settings(max_examples=40, **SETTINGS)
@given(data=st.data())
def test_negative_cycles_match_reference(algorithm, data):
    graph, _ = data.draw(graphs(["negcycle"]))
    dtype = data.draw(st.sampled_from(DTYPES))
    bs = data.draw(st.sampled_from(BLOCKS))
    pred = data.draw(st.booleans())
    ref = fw.solve(graph, backend="reference", dtype=dtype)
    r = cpu(graph, algorithm, dtype, predecessors=pred, block_size=bs)
    assert r.has_negative_cycle == ref.has_negative_cycle
    assert np.array_equal(r.negative_cycle_vertices, ref.negative_cycle_vertices)
    if dtype.startswith("float"):
        assert not np.isnan(r.dist).any()
    # the engine itself: clamped at -INF, no wrap-around however fast negative cycles grow
    out = run_engine(graph, algorithm, dtype, predecessors=pred, block_size=bs)
    if graph.n:
        assert out.dist.min() >= -out_inf(dtype)
        assert (np.diagonal(out.dist) < 0).any() == ref.has_negative_cycle


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_float_overflow_to_minus_inf_never_gives_nan(algorithm):
    """Huge negative cycles drive float distances to -inf; inf + -inf = NaN must never win."""
    rng = np.random.default_rng(3)
    n = 40
    src = rng.integers(0, n, 300)
    dst = rng.integers(0, n, 300)
    w = rng.choice([-1e307, 5.0, 1e307], 300)
    graph = fw.Graph.from_edges(src, dst, w, n=n)
    ref = fw.solve(graph, backend="reference", dtype="float64")
    for bs in (None, 7):
        r = cpu(graph, algorithm, "float64", block_size=bs, predecessors=True)
        assert not np.isnan(r.dist).any()
        assert np.array_equal(r.negative_cycle_vertices, ref.negative_cycle_vertices)
        assert np.array_equal(np.isposinf(r.dist), np.isposinf(ref.dist))


@pytest.mark.parametrize("dtype", ["int32", "float64"])
def test_zero_weight_cycles_give_loop_free_predecessors(dtype):
    """The blocked order can close a predecessor loop around a zero-weight cycle;
    the engine detects it and recomputes in the k-outer order of `rows`."""
    fell_back = 0
    for seed in range(4):
        rng = np.random.default_rng(seed)
        n, m = 60, 400
        graph = fw.Graph.from_edges(rng.integers(0, n, m), rng.integers(0, n, m),
                                    rng.integers(0, 2, m), n=n)
        ref = fw.solve(graph, backend="reference", dtype=dtype)
        for bs in (4, 8, None):
            r = cpu(graph, "blocked", dtype, predecessors=True, block_size=bs)
            assert np.array_equal(r.dist, ref.dist)
            check_paths(r, weight_matrix(graph), rng, max_walks=10_000)
            fell_back += "pred_fallback" in r.metadata
    assert fell_back


@pytest.mark.parametrize("dtype, weights, looked", [
    ("int32", (1, 9), False), ("float32", (1, 9), False), ("float64", (1, 9), False),   # exact, positive
    ("float32", (0.5, 9.5), True), ("int32", (0, 9), True),    # rounding; zero-weight cycles possible
])
def test_loop_check_only_where_a_loop_can_form(monkeypatch, dtype, weights, looked):
    """Exact arithmetic and positive weights: every predecessor edge is tight and no
    cycle weighs zero, so solve() skips the O(n^2) loop check of the predecessors."""
    import importlib

    solve_module = importlib.import_module("floydwarp.solver")   # (the package's `solve` is the function)
    calls = []
    monkeypatch.setattr(solve_module, "has_loops", lambda pred: calls.append(1) or False)
    rng = np.random.default_rng(3)
    w = rng.uniform(*weights, 300)
    w = w if dtype == "float32" and weights[0] % 1 else np.round(w)
    graph = fw.Graph.from_edges(rng.integers(0, 40, 300), rng.integers(0, 40, 300), w, n=40)
    cpu(graph, "blocked", dtype, predecessors=True)
    assert bool(calls) == looked


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_threads_one_and_two_agree(algorithm):
    import numba

    before = numba.get_num_threads()
    for kind in ("potential", "negcycle"):
        graph = random_graph(11, 203, 0.05, kind)
        for dtype in ("int32", "float32"):
            a = cpu(graph, algorithm, dtype, predecessors=True, threads=1, block_size=32)
            b = cpu(graph, algorithm, dtype, predecessors=True,
                    threads=min(2, numba.config.NUMBA_NUM_THREADS), block_size=32)
            assert np.array_equal(a.dist, b.dist)
            assert np.array_equal(a.pred, b.pred)
    assert numba.get_num_threads() == before


@pytest.mark.parametrize("pred", [False, True])
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_tiny_graphs(algorithm, dtype, pred):
    cases = [
        fw.Graph.from_edges([], [], [], n=0),
        fw.Graph.from_edges([], [], [], n=1),
        fw.Graph.from_edges([0], [0], [3], n=1),       # non-negative self-loop: dropped
        fw.Graph.from_edges([0], [0], [-2], n=1),      # negative self-loop: a negative cycle
        fw.Graph.from_edges([], [], [], n=2),
        fw.Graph.from_edges([0], [1], [0], n=2),       # zero weight
        fw.Graph.from_edges([0, 1], [1, 0], [4, -3], n=2),
        fw.Graph.from_edges([0, 1, 0], [1, 0, 1], [4, -5, 2], n=2),  # parallel edges, negative cycle
    ]
    for graph in cases:
        for bs in (None, 1, 2, 3):
            r = cpu(graph, algorithm, dtype, predecessors=pred, block_size=bs)
            ref = fw.solve(graph, backend="reference", dtype=dtype, predecessors=pred)
            assert r.dist.shape == (graph.n, graph.n) and r.dist.dtype == np.dtype(dtype)
            assert r.has_negative_cycle == ref.has_negative_cycle
            if not ref.has_negative_cycle:
                assert np.array_equal(r.dist, ref.dist)
                if pred:
                    assert np.array_equal(r.pred, ref.pred)


def test_clamp_keeps_int16_in_range():
    """A dense negative-cycle graph drives every entry to -INF; int16 must not wrap."""
    graph = fw.generate.erdos_renyi(150, 60, seed=5, weights=(-5, 10))
    for algorithm in ALGORITHMS:
        for bs in (None, 16, 13):
            out = run_engine(graph, algorithm, "int16", predecessors=True, block_size=bs)
            assert np.all(out.dist == -out_inf("int16"))
        r = cpu(graph, algorithm, "int16", predecessors=True)
        assert np.array_equal(r.negative_cycle_vertices, np.arange(150))


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_progress_reaches_total(algorithm):
    seen = []
    graph = fw.generate.erdos_renyi(100, 10, seed=2)
    cpu(graph, algorithm, "int32", block_size=16, progress=lambda done, total: seen.append((done, total)))
    assert seen and seen[-1][0] == seen[-1][1]
    assert [d for d, _ in seen] == sorted(d for d, _ in seen)


def test_registration():
    from floydwarp import registry

    backend = registry.backend("cpu")
    assert registry.AUTO_ORDER[-1] == "cpu" and backend.auto_priority > 0
    assert backend.auto_min_n() == 0 and backend.probe() is None
    impls = {i.algorithm: i for i in registry.algorithms("cpu")}
    assert set(impls) == {*ALGORITHMS, "bfs"}          # bfs: unit weights only (tests/test_bfs.py)
    assert impls["blocked"].default and not impls["rows"].default
    assert all(impls[a].predecessors and set(impls[a].dtypes) == set(DTYPES) for a in ALGORITHMS)
    r = fw.solve(fw.generate.erdos_renyi(300, 20, seed=1), backend="cpu", dtype="int32", threads=1)
    assert r.algorithm == "blocked"
    assert r.metadata["threads"] == 1 and r.metadata["block_size"] == 64
    assert r.timings["compute"] > 0 and r.relaxations_per_second > 0


def test_bad_options_are_refused():
    graph = fw.generate.erdos_renyi(10, 20, seed=1)
    for bad in (0, -3, 2.5):
        with pytest.raises(FloydwarpError, match="block_size"):
            cpu(graph, "blocked", "int32", block_size=bad)
    with pytest.raises(FloydwarpError, match="threads"):
        cpu(graph, "blocked", "int32", threads=10_000)
    with pytest.raises(FloydwarpError, match="threads"):
        cpu(graph, "rows", "int32", threads=0)


# --------------------------------------------------------------------------- memory-mapped matrices
def test_workdir_keeps_the_matrix_in_memory_mapped_files(tmp_path):
    g = fw.generate.erdos_renyi(301, 8, seed=4, potential=6)
    r = fw.solve(g, backend="cpu", block_size=32, predecessors=True, workdir=tmp_path)
    assert isinstance(r.dist, np.memmap) and isinstance(r.pred, np.memmap)
    ref = fw.solve(g, backend="reference", predecessors=True)
    assert np.array_equal(r.dist, ref.dist)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dist.npy", "pred.npy"]   # tile files removed
    assert np.array_equal(np.load(tmp_path / "dist.npy", mmap_mode="r"), ref.dist)


def test_too_large_for_memory_names_bytes_and_workdir(monkeypatch):
    from floydwarp.cpu import storage
    monkeypatch.setattr(storage, "available_memory", lambda: 1000)
    # memory is read only for matrices above 64 MiB (tiles + result: 72 MB here)
    with pytest.raises(fw.FloydwarpError, match=r"needs 72,000,000 bytes .* 1,000 are available; pass workdir=DIR"):
        fw.solve(fw.Graph.from_edges([0], [1], [1], n=3000), backend="cpu", algorithm="blocked", dtype="int32",
                 block_size=100)
