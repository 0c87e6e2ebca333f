"""Witness predecessors (gpu/predecessors/witness.py) without a GPU: the plan, the candidate segments,
and the recovery rule on the NumPy model of the kernel (witness_model.py) against the
textbook triple loop."""
from __future__ import annotations

import numpy as np
import pytest

import witness_model as model
from conftest import random_weight_matrix, triple_loop

from floydwarp import numeric
from floydwarp.gpu.predecessors import witness
from floydwarp.plan import Plan
from floydwarp.predecessors import NO_PREDECESSOR, has_loops, walk


def _plan(dtype, n, low, high, integral=True):
    stats = numeric.WeightStats(n, low, high, integral)
    dt = np.dtype(dtype)
    return Plan(n=n, dtype=dt, inf=numeric.inf_of(dt), clamp=False, backend="gpu", algorithm="fast",
                predecessors=True, stats=stats)


def _start(w, dtype):
    """The start matrix in ``dtype``: INF for no edge, 0 on the diagonal."""
    dt = np.dtype(dtype)
    s = np.where(np.isfinite(w), w, numeric.inf_of(dt)).astype(dt)
    np.fill_diagonal(s, 0)
    return s


def _distances(start):
    """The closed matrix of a start matrix, by the textbook loop in the start's dtype."""
    d = start.copy()
    for k in range(d.shape[0]):
        np.minimum(d, d[:, k:k + 1] + d[k:k + 1, :], out=d)
    return d


# ---------------------------------------------------------------------- the plan
def test_positive_weights_only():
    assert witness.plan_witness(_plan("int16", 100, 1, 16), 100, True) == witness.WitnessPlan(0.0, 0.25)
    assert witness.plan_witness(_plan("int16", 100, 1, 16), 100, False).max_tight == 1.0
    # negative weights: none; a zero weight: only where it is a dense matrix's diagonal
    assert witness.plan_witness(_plan("int16", 100, -1, 16), 100, True) is None
    assert witness.plan_witness(_plan("int16", 100, 0, 16), 100, True).zero_seen
    assert witness.plan_witness(_plan("int16", 0, 1, 16), 0, True) is None
    assert witness.plan_witness(_plan("int64", 100, 1, 16), 100, False) is None     # no kernel for int64


def test_float_slack_is_the_error_bound_of_an_n_term_sum():
    wp = witness.plan_witness(_plan("float32", 1000, 0.5, 16, integral=False), 1000, False)
    assert wp.slack == pytest.approx(1000 * np.finfo(np.float32).eps)
    # integer weights keep float32 exact below 2**24: no slack
    assert witness.plan_witness(_plan("float32", 1000, 1, 16), 1000, True).slack == 0.0
    wp = witness.plan_witness(_plan("float64", 1000, 0.25, 1, integral=False), 1000, False)
    assert wp.slack == pytest.approx(1000 * np.finfo(np.float64).eps)


def test_shapes_and_shared_memory():
    sh = witness.shape("int16", 16384)
    assert (sh.chunk, sh.columns, sh.keyed, sh.group) == (1024, 32, True, 256)
    # int16 rows with an odd pitch in words, then 8 windows of 128 int2 candidates
    assert sh.smem == 32 * 1026 * 2 + 8 * 128 * 8
    sh = witness.shape("int16", 70000)                       # k no longer fits 16 bits
    assert not sh.keyed and sh.smem == 32 * 1026 * 2 + 8 * 128 * 8
    sh = witness.shape("float32", 100)
    assert (sh.chunk, sh.group, sh.smem) == (512, 128, 32 * 513 * 4 + 8 * 128 * 8)
    assert witness.shape("float64", 100).smem == 32 * 225 * 8 + 8 * 128 * 16
    # three blocks an SM (228 KiB, 1 KiB reserved a block)
    assert all(3 * (witness.shape(dt, n).smem + 1024) <= 228 * 1024
               for dt in ("int16", "int32", "float32", "float64") for n in (100, 70000))


# ---------------------------------------------------------------------- candidates
@pytest.mark.parametrize("dtype", ["int16", "float32", "float64"])
@pytest.mark.parametrize("n", [1, 2, 5, 300, 1100])
def test_candidates_are_the_tight_edges_in_segments(dtype, n):
    rng = np.random.default_rng(n)
    start = _start(random_weight_matrix(rng, n, density=0.2, low=1, high=9), dtype)
    d = _distances(start)
    cand = model.candidates(d, start, 0.0)
    sh = witness.shape(dtype, n)
    assert cand.shape == sh and cand.chunks == -(-n // sh.chunk)
    assert cand.seg.size == -(-n // sh.group) * cand.chunks * sh.group + 1
    assert cand.seg[0] == 0 and cand.seg[-1] == cand.k.size
    sizes = np.diff(cand.seg)
    assert (sizes >= 0).all() and (sizes % witness.UNROLL == 0).all()
    tight = (start < numeric.inf_of(start.dtype)) & (start == d) & ~np.eye(n, dtype=bool)
    assert (cand.k >= 0).sum() == tight.sum() == model.count(d, start, 0.0)
    # each segment: its candidates, then fewer than UNROLL pads (k = -1, weight INF)
    for a, b in zip(cand.seg[:-1], cand.seg[1:]):
        real = cand.k[a:b] >= 0
        assert (np.sort(real)[::-1] == real).all() and (~real).sum() < witness.UNROLL
    assert (cand.w[cand.k < 0] == numeric.inf_of(start.dtype)).all()
    # the kernels' entries: the byte offset of k in its chunk's row slice, and w or a key
    entries = model.pack(cand)
    real = cand.k >= 0
    assert entries.shape == (cand.k.size, sh.entry_bytes // 4)
    np.testing.assert_array_equal(entries[real, 0] if not sh.keyed else entries[real, 1],
                                  cand.k[real] % sh.chunk * start.dtype.itemsize)
    if sh.keyed:
        np.testing.assert_array_equal(entries[real, 0], (cand.w[real].astype(np.int32) << 16) | cand.k[real])
        assert (entries[~real, 0] == model.PAD_KEY).all()
    found = np.zeros((n, n), bool)
    for j in range(n):
        k, w = model.column_candidates(cand, j, n)
        assert (np.diff(k) > 0).all()                         # k ascending over the chunks
        np.testing.assert_array_equal(w, start[k, j])
        found[k, j] = True
    np.testing.assert_array_equal(found, tight)


def test_float_candidates_include_the_nearly_tight():
    start = np.array([[0, 1.0, 2.001], [np.inf, 0, 1.0], [np.inf, np.inf, 0]], np.float32)
    d = _distances(start)                 # d[0, 2] = 2 < 2.001 = w[0, 2]
    assert model.count(d, start, 0.0) == 2
    assert model.count(d, start, 1e-2) == 3


# ---------------------------------------------------------------------- the rule
def _check(d, pred, start):
    n = d.shape[0]
    w = np.where(start < numeric.inf_of(start.dtype), start.astype(np.float64), np.inf)
    df = np.where(d < numeric.inf_of(d.dtype), d.astype(np.float64), np.inf)
    assert not has_loops(pred)
    for a in range(n):
        for b in range(n):
            if a == b or not np.isfinite(df[a, b]):
                assert pred[a, b] == NO_PREDECESSOR
                continue
            path = walk(pred[a], a, b, n)
            assert path[0] == a and path[-1] == b
            np.testing.assert_allclose(sum(w[u, v] for u, v in zip(path, path[1:])), df[a, b], rtol=1e-5)


@pytest.mark.parametrize("dtype", ["int16", "int32"])
@pytest.mark.parametrize("seed", range(6))
def test_integer_witnesses_are_exact_and_tight(dtype, seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 90))
    w = random_weight_matrix(rng, n, density=rng.uniform(0.05, 0.9), low=1, high=int(rng.integers(1, 30)))
    w[rng.random((n, n)) < 0.05] = 3.0                    # parallel weights collapse; self-loops too
    start = _start(w, dtype)
    d = _distances(start)
    np.testing.assert_array_equal(np.where(d < numeric.inf_of(d.dtype), d, np.inf), triple_loop(w))
    pred, misses = model.recover(d, model.candidates(d, start, 0.0), 0.0)
    assert misses == 0
    i, j = np.nonzero((pred != NO_PREDECESSOR))
    np.testing.assert_array_equal(d[i, pred[i, j]].astype(np.int64) + start[pred[i, j], j], d[i, j])
    _check(d, pred, start)


def test_ties_go_to_the_smallest_witness():
    # 0 -> 1 -> 3 and 0 -> 2 -> 3, both of length 2
    start = _start(np.array([[0, 1, 1, np.inf], [np.inf, 0, np.inf, 1], [np.inf, np.inf, 0, 1],
                             [np.inf] * 3 + [0]]), "int16")
    d = _distances(start)
    pred, _ = model.recover(d, model.candidates(d, start, 0.0), 0.0)
    assert pred[0, 3] == 1


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("seed", range(4))
def test_float_witnesses_within_the_slack(dtype, seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 120))
    w = random_weight_matrix(rng, n, density=rng.uniform(0.05, 0.9), low=1e-3, high=1.0, integer=False)
    start = _start(w, dtype)
    d = _distances(start)
    slack = n * float(np.finfo(start.dtype).eps)
    pred, misses = model.recover(d, model.candidates(d, start, slack), slack)
    assert misses == 0
    _check(d, pred, start)


def test_missing_candidates_are_misses():
    start = _start(np.array([[0, 1, np.inf], [np.inf, 0, 1], [np.inf, np.inf, 0]]), "float32")
    d = _distances(start)
    cand = model.candidates(d, start, 0.0)
    empty = model.Candidates(np.zeros_like(cand.seg), cand.k[:0], cand.w[:0], cand.shape, cand.chunks)
    pred, misses = model.recover(d, empty, 0.0)
    assert misses == 3 and (pred == NO_PREDECESSOR).all()
