"""The gpu backend on a real device: every algorithm x dtype against the reference.

Skipped cleanly without CuPy or a CUDA GPU.  Run with ``pytest -m gpu``.
"""
from __future__ import annotations

import functools

import numpy as np
import pytest

from conftest import require_gpu

cp = require_gpu()

import floydwarp as fw  # noqa: E402
from floydwarp import registry  # noqa: E402
from floydwarp.arrays import to_host  # noqa: E402
from floydwarp.errors import DeviceError, DtypeError, FloydwarpError  # noqa: E402
from floydwarp.generate import erdos_renyi  # noqa: E402
from floydwarp.predecessors import NO_PREDECESSOR, walk  # noqa: E402

pytestmark = pytest.mark.gpu

#: the algorithms for every graph (gpu/bfs takes unit weights only: tests/test_gpu_bfs.py)
IMPLS = {i.algorithm: i for i in registry.algorithms("gpu") if i.accepts is None}
ALGORITHMS = sorted(IMPLS)
PRED_ALGORITHMS = sorted(a for a, i in IMPLS.items() if i.predecessors)
DTYPES = ["int16", "int32", "int64", "float32", "float64"]
SIZES = [0, 1, 2, 31, 63, 65, 257, 1000, 1025]
SEQUENTIAL_MAX = 65


def _percent(n):
    return 30.0 if n < 100 else 8.0


@functools.lru_cache(maxsize=None)
def graph(n, kind):
    """pos: weights 1..16; neg: negative weights, no negative cycle; cycle: negative cycles."""
    if kind == "pos":
        return erdos_renyi(n, _percent(n), seed=1000 + n)
    if kind == "neg":
        return erdos_renyi(n, _percent(n), seed=2000 + n, potential=20)
    if kind == "cycle":
        return erdos_renyi(n, _percent(n), seed=3000 + n, weights=(-5, 10))
    raise ValueError(kind)


@functools.lru_cache(maxsize=None)
def reference_result(n, kind):
    """The reference backend's float64 result, once per graph."""
    return fw.solve(graph(n, kind), backend="reference", dtype="float64")


def reference(n, kind):
    """float64 distances (inf unreachable) and whether there is a negative cycle."""
    r = reference_result(n, kind)
    return r.to_dense(), r.has_negative_cycle


def _solve(g, algorithm, dtype, **kw):
    try:
        return fw.solve(g, backend="gpu", algorithm=algorithm, dtype=dtype, **kw)
    except DtypeError as exc:  # int16 cannot hold this graph's paths: not this test's business
        pytest.skip(f"{dtype}: {exc}")


def _skip_sequential(algorithm, n):
    if algorithm == "sequential" and n > SEQUENTIAL_MAX:
        pytest.skip("sequential runs one GPU thread: small n only")


def check_predecessors(res, g):
    """Every predecessor edge is tight, and sampled paths sum to their distances."""
    d = to_host(res.to_dense())
    pred = to_host(res.pred)
    n = d.shape[0]
    assert pred.shape == (n, n) and pred.dtype == np.int32
    w = g.to_matrix("float64", np.inf)
    reach = np.isfinite(d)
    np.fill_diagonal(reach, False)
    i, j = np.nonzero(reach)
    p = pred[i, j]
    assert ((p >= 0) & (p < n)).all(), "reachable pair without a predecessor"
    np.testing.assert_array_equal(d[i, p] + w[p, j], d[i, j])
    assert (pred[~reach] == NO_PREDECESSOR).all()
    rng = np.random.default_rng(n)
    if i.size:
        for s in rng.choice(i.size, size=min(200, i.size), replace=False):
            a, b = int(i[s]), int(j[s])
            path = walk(pred[a], a, b, n)
            assert path[0] == a and path[-1] == b
            assert sum(w[u, v] for u, v in zip(path, path[1:])) == d[a, b]


# ---------------------------------------------------------------------- correctness
@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("algorithm", ALGORITHMS)
@pytest.mark.parametrize("kind", ["pos", "neg"])
def test_matches_reference(algorithm, dtype, n, kind):
    _skip_sequential(algorithm, n)
    g = graph(n, kind)
    ref, _ = reference(n, kind)
    r = _solve(g, algorithm, dtype)
    assert r.backend == "gpu" and r.algorithm == algorithm
    assert isinstance(r.dist, np.ndarray) and r.dist.dtype == np.dtype(dtype) and r.dist.shape == (n, n)
    np.testing.assert_array_equal(r.to_dense(), ref)
    assert not r.has_negative_cycle
    assert r.timings["compute"] >= 0 and "h2d" in r.timings and "d2h" in r.timings


@pytest.mark.parametrize("n", [2, 31, 65, 257])
@pytest.mark.parametrize("dtype", ["int16", "int32", "float32", "float64"])
@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_negative_cycles(algorithm, dtype, n):
    """Same cycle vertices as the reference, and exact distances wherever no negative
    cycle lies between the pair (integer runs are redone in float64 by solve())."""
    _skip_sequential(algorithm, n)
    g = graph(n, "cycle")
    ref = reference_result(n, "cycle")
    r = _solve(g, algorithm, dtype)
    assert r.has_negative_cycle == ref.has_negative_cycle
    np.testing.assert_array_equal(r.negative_cycle_vertices, ref.negative_cycle_vertices)
    nc = ref.negative_cycles
    affected = (nc.reach_to.T.astype(np.int64) @ nc.reach_from.astype(np.int64)) > 0
    np.testing.assert_array_equal(to_host(r.to_dense())[~affected], ref.to_dense()[~affected])


def test_negative_self_loop_is_a_cycle():
    g = fw.Graph.from_edges([0, 1, 2], [1, 2, 2], [1, 1, -1], n=4)
    for algorithm in ALGORITHMS:
        r = fw.solve(g, backend="gpu", algorithm=algorithm, dtype="int32")
        assert r.has_negative_cycle and 2 in r.negative_cycle_vertices.tolist()


@pytest.mark.parametrize("n", [1, 2, 31, 65, 257, 1025])
@pytest.mark.parametrize("dtype", ["int16", "int32", "float32", "float64"])
@pytest.mark.parametrize("algorithm", PRED_ALGORITHMS)
@pytest.mark.parametrize("kind", ["pos", "neg"])
def test_predecessors(algorithm, dtype, n, kind):
    _skip_sequential(algorithm, n)
    g = graph(n, kind)
    ref, _ = reference(n, kind)
    r = _solve(g, algorithm, dtype, predecessors=True)
    np.testing.assert_array_equal(r.to_dense(), ref)
    check_predecessors(r, g)


def test_predecessors_refused_where_unsupported():
    no_pred = [a for a, i in IMPLS.items() if not i.predecessors]
    for algorithm in no_pred:
        with pytest.raises(FloydwarpError, match="cannot compute predecessors"):
            fw.solve(graph(31, "pos"), backend="gpu", algorithm=algorithm, predecessors=True)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("algorithm", ["naive", "blocked", "blocked-vec", "fast"])
def test_float_weights(algorithm, dtype):
    rng = np.random.default_rng(7)
    n = 300
    w = rng.uniform(0.5, 10.0, size=(n, n)).astype(dtype)
    w[rng.random((n, n)) > 0.1] = np.inf
    ref = fw.solve(w, backend="reference", dtype=dtype).to_dense()
    r = fw.solve(w, backend="gpu", algorithm=algorithm, dtype=dtype)
    np.testing.assert_allclose(r.to_dense(), ref, rtol=1e-6)


# ---------------------------------------------------------------------- options
@pytest.mark.parametrize("block_size", [16, 32, 64, 128])
@pytest.mark.parametrize("algorithm", ["blocked", "blocked-vec"])
@pytest.mark.parametrize("dtype", ["int16", "int32", "float64"])
def test_block_sizes(algorithm, block_size, dtype):
    ref, _ = reference(257, "neg")
    g = graph(257, "neg")
    try:
        r = fw.solve(g, backend="gpu", algorithm=algorithm, dtype=dtype, block_size=block_size)
    except FloydwarpError as exc:
        assert "shared" in str(exc) and np.dtype(dtype).itemsize == 8 and block_size == 128
        return
    np.testing.assert_array_equal(r.to_dense(), ref)  # 257 is padded for every block size


@pytest.mark.parametrize("R", [1, 2, 4, 8])
def test_pseudo_blocked_R(R):
    ref, _ = reference(257, "neg")
    r = fw.solve(graph(257, "neg"), backend="gpu", algorithm="pseudo-blocked", dtype="int32", R=R)
    np.testing.assert_array_equal(r.to_dense(), ref)


@pytest.mark.parametrize("variant", ["tiled", "async", "vec", "pipe", "wide"])
@pytest.mark.parametrize("dtype", DTYPES)
def test_fast_variants(variant, dtype):
    for n, kind in ((1, "pos"), (65, "pos"), (257, "neg"), (1025, "pos"), (1000, "neg")):
        ref, _ = reference(n, kind)
        r = _solve(graph(n, kind), "fast", dtype, fast_variant=variant)
        np.testing.assert_array_equal(r.to_dense(), ref)


@pytest.mark.parametrize("width", [64, 192, 256])
@pytest.mark.parametrize("dtype", DTYPES)
def test_wide_rounds_of_any_width(width, dtype):
    """Rounds narrower than the matrix, widths that do not divide the padded n."""
    for n, kind in ((65, "neg"), (257, "neg"), (1000, "pos"), (1000, "neg")):
        ref, _ = reference(n, kind)
        r = _solve(graph(n, kind), "fast", dtype, fast_variant="wide", wide_width=width)
        np.testing.assert_array_equal(r.to_dense(), ref)


@pytest.mark.parametrize("dtype", ["int16", "int32", "float64"])
def test_wide_negative_cycles(dtype):
    g = graph(257, "cycle")
    ref = reference_result(257, "cycle")
    r = _solve(g, "fast", dtype, fast_variant="wide", wide_width=128)
    np.testing.assert_array_equal(r.negative_cycle_vertices, ref.negative_cycle_vertices)


@pytest.mark.parametrize("shape", [(4, 4), (8, 4), (4, 8)])
@pytest.mark.parametrize("dtype", ["int16", "int32", "float32"])
def test_pipe_long_runs(dtype, shape):
    """A persistent phase 3 with few blocks: each runs many tiles across several tile
    rows (the double-buffered loads and the panel reloads)."""
    for n, kind, grid in ((1000, "neg", 7), (1025, "pos", 5), (257, "neg", 2)):
        ref, _ = reference(n, kind)
        r = _solve(graph(n, kind), "fast", dtype, fast_variant="pipe", pipe_shape=shape, pipe_grid=grid)
        np.testing.assert_array_equal(r.to_dense(), ref)


@functools.lru_cache(maxsize=None)
def small_weight_graph(n):
    """Negative weights small enough for int16 at n ~ 1000 (no negative cycle)."""
    return erdos_renyi(n, 8.0, seed=4000 + n, weights=(1, 4), potential=3)


@functools.lru_cache(maxsize=None)
def small_weight_reference(n):
    return fw.solve(small_weight_graph(n), backend="reference", dtype="float64").to_dense()


def long_path_graph(n, seed):
    """A Hamiltonian path in random vertex order (every pivot tile needs all six squarings
    of fw_pipe_p12), negative weights through a potential, and a few random shortcuts."""
    rng = np.random.default_rng(seed)
    order = rng.permutation(n)
    src, dst = order[:-1], order[1:]
    extra = rng.integers(0, n, (2, n // 4))
    src, dst = np.concatenate([src, extra[0]]), np.concatenate([dst, extra[1]])
    h = rng.integers(0, 4, n)
    w = np.concatenate([rng.integers(1, 3, n - 1), rng.integers(n // 2, n, n // 4)]) + h[src] - h[dst]
    keep = src != dst
    return fw.Graph.from_edges(src[keep], dst[keep], w[keep].astype(np.float64), n=n)


@pytest.mark.parametrize("dtype", ["int16", "int32", "float32"])
def test_pipe_pivot_closure(dtype):
    """fw_pipe_p12 closes pivots by squaring: long paths inside a tile, negative weights
    (int16 clamps), a single tile (pivot only) and phase-3 grids of one and three blocks."""
    for n, grid in ((1000, None), (1025, 3), (65, None), (130, 1)):
        g = small_weight_graph(n)
        r = _solve(g, "fast", dtype, fast_variant="pipe", pipe_grid=grid)
        np.testing.assert_array_equal(r.to_dense(), small_weight_reference(n))
    for n in (40, 64, 200, 777):
        g = long_path_graph(n, seed=n)
        ref = fw.solve(g, backend="reference", dtype="float64").to_dense()
        for variant in ("pipe", "wide"):
            r = _solve(g, "fast", dtype, fast_variant=variant, wide_width=128)
            np.testing.assert_array_equal(r.to_dense(), ref)


def test_phase_timings():
    r = fw.solve(graph(1025, "pos"), backend="gpu", algorithm="fast", fast_variant="pipe", phases=True)
    assert {"phase2", "phase3"} <= set(r.timings)   # "pipe" fuses phase 1 into phase 2's launch
    assert r.timings["phase3"] <= r.timings["compute"] * 1.01
    r = fw.solve(graph(1025, "pos"), backend="gpu", algorithm="fast", fast_variant="wide", wide_width=256,
                 phases=True)
    assert {"phase1", "phase2", "phase3"} <= set(r.timings)
    # phase 3 runs on the main stream, within the rounds.  The lookahead's pivot work (phases 1-2) runs on
    # a side stream beside phase 3, and its events' spans include the time it waits there for SMs: on a
    # GPU shared with other processes (pytest -n 12) phase 1's spans summed to more than the rounds
    assert r.timings["phase3"] <= r.timings["compute"] * 1.01
    assert all(r.timings[p] > 0 for p in ("phase1", "phase2"))


def test_bad_options():
    g = graph(31, "pos")
    with pytest.raises(FloydwarpError, match="block_size"):
        fw.solve(g, backend="gpu", algorithm="blocked", block_size=48)
    with pytest.raises(FloydwarpError, match="R must be"):
        fw.solve(g, backend="gpu", algorithm="pseudo-blocked", R=3)
    with pytest.raises(FloydwarpError, match="output"):
        fw.solve(g, backend="gpu", output="disk")
    with pytest.raises(FloydwarpError, match="fast_variant"):
        fw.solve(g, backend="gpu", algorithm="fast", fast_variant="warp")
    with pytest.raises(FloydwarpError, match="limited to n <= 512"):
        fw.solve(erdos_renyi(600, 1, seed=1), backend="gpu", algorithm="sequential")


def test_default_algorithm_is_fast():
    r = fw.solve(graph(65, "pos"), backend="gpu")
    assert r.algorithm == "fast"


# ---------------------------------------------------------------------- host / device arrays
def _dense(n, kind, dtype="float64"):
    return graph(n, kind).to_matrix(dtype, np.inf)


@pytest.mark.parametrize("algorithm", ["naive", "blocked", "fast"])
def test_cupy_input_stays_on_device(algorithm):
    n = 257
    ref, _ = reference(n, "neg")
    m = cp.asarray(_dense(n, "neg"))
    r = fw.solve(m, backend="gpu", algorithm=algorithm, dtype="int32", predecessors=True)
    assert isinstance(r.dist, cp.ndarray) and isinstance(r.pred, cp.ndarray)
    assert r.dist.flags.c_contiguous and r.dist.shape == (n, n)
    np.testing.assert_array_equal(to_host(r.to_dense()), ref)
    check_predecessors(r, graph(n, "neg"))
    assert r.path(0, 0) == [0]
    host = fw.solve(m, backend="gpu", algorithm=algorithm, dtype="int32", output="host")
    assert isinstance(host.dist, np.ndarray)
    np.testing.assert_array_equal(host.to_dense(), ref)


def test_numpy_input_output_device():
    n = 65
    ref, _ = reference(n, "pos")
    r = fw.solve(_dense(n, "pos"), backend="gpu", dtype="int32", output="device")
    assert isinstance(r.dist, cp.ndarray)
    np.testing.assert_array_equal(to_host(r.to_dense()), ref)
    assert isinstance(r.to_host().dist, np.ndarray)


def test_dense_host_input_matches_edges():
    n = 1000
    ref, _ = reference(n, "neg")
    r = fw.solve(_dense(n, "neg"), backend="gpu", algorithm="blocked", dtype="float32")
    np.testing.assert_array_equal(r.to_dense(), ref)


def test_empty_graph_device_output():
    r = fw.solve(cp.zeros((0, 0)), backend="gpu")
    assert isinstance(r.dist, cp.ndarray) and r.dist.shape == (0, 0)


@pytest.mark.parametrize("dtype", ["int16", "int32", "float64"])
def test_cupy_negative_cycle(dtype):
    m = cp.asarray(_dense(31, "cycle"))
    r = fw.solve(m, backend="gpu", dtype=dtype)
    assert r.has_negative_cycle


# ---------------------------------------------------------------------- errors, progress, ceilings
def test_too_large_for_memory_is_refused_before_allocating():
    g = fw.Graph.from_edges(np.zeros(0, int), np.zeros(0, int), n=400_000)
    with pytest.raises(DeviceError, match=r"needs \d+ bytes .* only \d+ bytes"):      # the device's limit
        fw.solve(g, backend="gpu", algorithm="blocked", dtype="int32")
    # "fast" would stream it from host memory, which has no room for 640 GB either
    with pytest.raises(FloydwarpError, match="in host memory"):
        fw.solve(g, backend="gpu", dtype="int32")


def test_progress_reaches_total():
    seen = []
    fw.solve(graph(257, "pos"), backend="gpu", algorithm="fast", progress=lambda d, t: seen.append((d, t)))
    assert seen and seen[-1][0] == seen[-1][1]
    seen.clear()
    fw.solve(graph(257, "pos"), backend="gpu", algorithm="naive", progress=lambda d, t: seen.append((d, t)))
    assert seen[-1] == (257, 257)


def test_ceilings_measure_positive():
    from floydwarp.gpu import ceilings

    assert ceilings.copy_bandwidth(64 << 20, repeat=2) > 1e9
    for kind in ("int32", "int16x2", "float32", "float32-nonneg", "float64"):
        assert ceilings.addmin_rate(kind, iters=64, repeat=2) > 1e9


def test_bytes_moved_models():
    for impl in IMPLS.values():
        f = impl.bytes_moved
        assert f(1024, 4, None) > 0
