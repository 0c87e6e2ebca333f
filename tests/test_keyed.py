"""Keyed predecessors (gpu/predecessors/keyed.py) without a GPU: the plan, and the key arithmetic
itself on the NumPy model of the kernels (keyed_model.py, which test_gpu_keyed.py holds the
kernels to) against the textbook triple loop."""
from __future__ import annotations

import numpy as np
import pytest

import keyed_model as model
from conftest import random_weight_matrix, triple_loop

from floydwarp import numeric
from floydwarp.gpu.predecessors import keyed
from floydwarp.plan import Plan
from floydwarp.predecessors import NO_PREDECESSOR, has_loops, initial_predecessors, walk


def _plan(dtype, n, low, high, integral=True, **options):
    stats = numeric.WeightStats(n, low, high, integral)
    dt = np.dtype(dtype)
    return Plan(n=n, dtype=dt, inf=numeric.inf_of(dt), clamp=low < 0, backend="gpu", algorithm="fast",
                predecessors=True, options=options, stats=stats)


# ---------------------------------------------------------------------- the plan
def test_int16_keeps_its_own_inf():
    kp = keyed.plan_keys(_plan("int16", 1000, 1, 16), 1000)
    assert (kp.bits, kp.inf, kp.unreachable, kp.verify) == (10, 16383, 16383, False)
    assert kp.none == 1023 and kp.keep == -1024 and kp.ninf == -16383 * 1024
    # 2 * INF plus a predecessor still fits an int32 at the largest n
    kp = keyed.plan_keys(_plan("int16", 65535, 1, 16), 65535)
    assert kp.bits == 16 and kp.inf == 16383
    assert (2 * kp.inf << kp.bits) + kp.none < 2 ** 31
    # from 65536 vertices on, int16 distances too get a narrower key INF, proven after the run
    kp = keyed.plan_keys(_plan("int16", 65536, 1, 16), 65536)
    assert (kp.bits, kp.inf, kp.verify) == (17, 8191, True)


def test_int32_keys_are_narrower():
    # n = 16384: 15 predecessor bits leave distances below 2**15 - 1
    kp = keyed.plan_keys(_plan("int32", 16384, 1, 16), 16384)
    assert (kp.bits, kp.inf) == (15, 32767)
    assert kp.verify            # 16383 * 16 may exceed the key INF: checked after the run
    kp = keyed.plan_keys(_plan("int32", 1000, 1, 16), 1000)
    assert (kp.bits, kp.inf, kp.verify) == (10, 2 ** 20 - 1, False)     # 999 * 16 provably fits
    kp = keyed.plan_keys(_plan("int32", 1000, -5, 16), 1000)
    assert not kp.verify and kp.unreachable == kp.inf - 999 * 5
    # negative weights whose bound exceeds the key INF: no after-run proof, so no keys
    assert keyed.plan_keys(_plan("int32", 1000, -5000, 16), 1000) is None


def test_no_keys_for_int64():
    assert keyed.plan_keys(_plan("int64", 100, 1, 16), 100) is None


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_floats_take_keys_for_non_negative_integer_weights(dtype):
    kp = keyed.plan_keys(_plan(dtype, 1000, 0, 16), 1000)
    assert (kp.bits, kp.inf, kp.unreachable, kp.verify) == (10, 2 ** 20 - 1, 2 ** 20 - 1, False)
    kp = keyed.plan_keys(_plan(dtype, 16384, 1, 16), 16384)
    assert (kp.bits, kp.inf, kp.verify) == (15, 32767, True)       # proven after the run, as int32
    assert keyed.plan_keys(_plan(dtype, 1000, 1, 16, integral=False), 1000) is None
    assert keyed.plan_keys(_plan(dtype, 1000, -1, 16), 1000) is None


def test_float32_keys_stay_below_two_to_the_24():
    # 3 vertices: 2 predecessor bits would allow distances up to 2**28; float32 integers are
    # exact up to 2**24 only
    kp = keyed.plan_keys(_plan("float32", 3, 1, 2 ** 22), 3)
    assert kp.inf == 2 ** 24 and not kp.verify                   # 2 * 2**22 provably fits
    kp = keyed.plan_keys(_plan("float32", 3, 1, 2 ** 23 + 1), 3)
    assert kp.inf == 2 ** 24 and kp.verify
    assert keyed.plan_keys(_plan("float64", 3, 1, 2 ** 23 + 1), 3).inf == 2 ** 28 - 1


def test_keys_need_stats():
    plan = _plan("int32", 100, 1, 16)
    plan.stats = None
    assert keyed.plan_keys(plan, 100) is None


# ---------------------------------------------------------------------- packing
def _start_matrix(w, dtype):
    dt = np.dtype(dtype)
    inf = numeric.inf_of(dt)
    d = np.where(np.isfinite(w), w, inf).astype(dt)
    np.fill_diagonal(d, np.minimum(np.diagonal(d), 0))
    return d


@pytest.mark.parametrize("dtype", ["int16", "int32"])
@pytest.mark.parametrize("n", [1, 2, 7, 64, 100])
def test_pack_then_unpack_is_the_start(dtype, n):
    rng = np.random.default_rng(n)
    w = random_weight_matrix(rng, n, low=-3, high=20)
    d = _start_matrix(w, dtype)
    kp = keyed.plan_keys(_plan(dtype, n, -3, 20), n)
    out_d, out_p = model.unpack(model.pack(d, kp), kp, dtype)
    np.testing.assert_array_equal(out_d, d)
    np.testing.assert_array_equal(out_p, initial_predecessors(d, numeric.inf_of(dtype)))


def test_in_range_finds_distances_near_the_key_inf():
    kp = keyed.plan_keys(_plan("int32", 16384, 1, 16), 16384)
    d = np.array([[0, 5], [numeric.inf_of("int32"), 0]], np.int32)
    keys = model.pack(d, kp)
    assert keyed.in_range(keys, kp, 16)
    assert not keyed.in_range(keys, kp, kp.inf - 5)        # 5 + that weight reaches the key INF
    assert keyed.in_range(np.zeros((0, 0), np.int32), kp, 16)


# ---------------------------------------------------------------------- the arithmetic
def _solve_keyed(w, dtype, low, high):
    n = w.shape[0]
    d = _start_matrix(w, dtype)
    kp = keyed.plan_keys(_plan(dtype, n, low, high), n)
    keys = model.floyd_warshall(model.pack(d, kp), kp, clamp=low < 0)
    if kp.verify:
        assert keyed.in_range(keys, kp, high)
    return model.unpack(keys, kp, dtype)


def _check_routes(dist, pred, w):
    n = dist.shape[0]
    inf = numeric.inf_of(dist.dtype)
    reach = dist < inf
    np.fill_diagonal(reach, False)
    i, j = np.nonzero(reach)
    p = pred[i, j]
    assert ((p >= 0) & (p < n)).all()
    np.testing.assert_array_equal(dist[i, p] + w[p, j], dist[i, j])      # every predecessor edge is tight
    assert (pred[~reach] == NO_PREDECESSOR).all()
    for a, b in zip(i[:300], j[:300]):
        path = walk(pred[a], a, b, n)
        assert sum(w[u, v] for u, v in zip(path, path[1:])) == dist[a, b]


@pytest.mark.parametrize("dtype", ["int16", "int32", "float32", "float64"])
@pytest.mark.parametrize("seed", range(12))
def test_keys_give_exact_distances_and_routes(dtype, seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 60))
    low = int(rng.choice([1, 0]))        # positive, or zero weights too
    w = random_weight_matrix(rng, n, density=float(rng.uniform(0.05, 0.6)), low=low, high=30)
    ref = triple_loop(w)
    dist, pred = _solve_keyed(w, dtype, low, 30)
    got = np.where(dist >= numeric.inf_of(dtype), np.inf, dist)
    np.testing.assert_array_equal(got, ref)
    if low > 0:
        assert not has_loops(pred)       # no zero-weight cycle, so no loop
    if not has_loops(pred):              # a loop is what solve() detects and recomputes
        _check_routes(dist, pred, w)


def test_negative_weights_without_cycles():
    rng = np.random.default_rng(7)
    n = 40
    w = random_weight_matrix(rng, n, density=0.3, low=1, high=20)
    pot = rng.integers(0, 10, n)
    w = w + pot[:, None] - pot[None, :]          # a potential: negative edges, no negative cycle
    lo = int(np.min(w[np.isfinite(w)]))
    dist, pred = _solve_keyed(w, "int16", lo, 30)
    np.testing.assert_array_equal(np.where(dist >= numeric.inf_of("int16"), np.inf, dist), triple_loop(w))
    _check_routes(dist, pred, w)


def test_ties_go_to_the_smaller_predecessor():
    # 0 -> 3 directly (2) and through 1 or 2 (1 + 1): all three are shortest
    w = np.full((4, 4), np.inf)
    w[0, 3] = 2
    w[0, 1] = w[1, 3] = w[0, 2] = w[2, 3] = 1
    dist, pred = _solve_keyed(w, "int32", 1, 2)
    assert dist[0, 3] == 2 and pred[0, 3] == 0
