"""Witness predecessors (gpu/witness.py) without a GPU: the plan, the candidate segments,
and the recovery rule on the NumPy model of the kernel (witness_model.py) against the
textbook triple loop."""
from __future__ import annotations

import numpy as np
import pytest

import witness_model as model
from conftest import random_weight_matrix, triple_loop

from floydwarp import numeric
from floydwarp.gpu import witness
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
    # a zero-weight edge could close a loop of witnesses; negative weights likewise
    assert witness.plan_witness(_plan("int16", 100, 0, 16), 100, True) is None
    assert witness.plan_witness(_plan("int16", 100, -1, 16), 100, True) is None
    assert witness.plan_witness(_plan("int16", 0, 1, 16), 0, True) is None


def test_float_slack_is_the_error_bound_of_an_n_term_sum():
    wp = witness.plan_witness(_plan("float32", 1000, 0.5, 16, integral=False), 1000, False)
    assert wp.slack == pytest.approx(1000 * np.finfo(np.float32).eps)
    # integer weights keep float32 exact below 2**24: no slack
    assert witness.plan_witness(_plan("float32", 1000, 1, 16), 1000, True).slack == 0.0
    wp = witness.plan_witness(_plan("float64", 1000, 0.25, 1, integral=False), 1000, False)
    assert wp.slack == pytest.approx(1000 * np.finfo(np.float64).eps)


def test_shapes_and_shared_memory():
    assert witness.shape("int16") == (1024, 32, 256)
    assert witness.shape("float64") == (256, 16, 128)
    # 32 rows of 1024 + 2 int16 (an odd number of words: a bank per lane)
    assert witness.smem_bytes("int16") == 32 * 1026 * 2
    assert witness.smem_bytes("float32") == 32 * 513 * 4
    assert all(witness.smem_bytes(dt) <= 80 * 1024 for dt in ("int16", "int32", "float32", "float64"))


# ---------------------------------------------------------------------- candidates
@pytest.mark.parametrize("dtype", ["int16", "float32", "float64"])
@pytest.mark.parametrize("n", [1, 2, 5, 300, 1100])
def test_candidates_are_the_tight_edges_in_segments(dtype, n):
    rng = np.random.default_rng(n)
    start = _start(random_weight_matrix(rng, n, density=0.2, low=1, high=9), dtype)
    d = _distances(start)
    cand = witness.candidates(d, start, 0.0)
    kc, _, group = witness.shape(dtype)
    assert cand.chunks == -(-n // kc) and cand.seg.size == -(-n // group) * cand.chunks * group + 1
    assert cand.seg[0] == 0 and (np.diff(cand.seg) >= 0).all() and cand.seg[-1] == cand.k.size
    tight = (start < numeric.inf_of(start.dtype)) & (start == d) & ~np.eye(n, dtype=bool)
    assert cand.k.size == tight.sum() == witness.count(d, start, 0.0)
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
    assert witness.candidates(d, start, 0.0).k.size == 2
    assert witness.candidates(d, start, 1e-2).k.size == 3


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
    pred, misses = model.recover(d, witness.candidates(d, start, 0.0), 0.0)
    assert misses == 0
    i, j = np.nonzero((pred != NO_PREDECESSOR))
    np.testing.assert_array_equal(d[i, pred[i, j]].astype(np.int64) + start[pred[i, j], j], d[i, j])
    _check(d, pred, start)


def test_ties_go_to_the_smallest_witness():
    # 0 -> 1 -> 3 and 0 -> 2 -> 3, both of length 2
    start = _start(np.array([[0, 1, 1, np.inf], [np.inf, 0, np.inf, 1], [np.inf, np.inf, 0, 1],
                             [np.inf] * 3 + [0]]), "int16")
    d = _distances(start)
    pred, _ = model.recover(d, witness.candidates(d, start, 0.0), 0.0)
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
    pred, misses = model.recover(d, witness.candidates(d, start, slack), slack)
    assert misses == 0
    _check(d, pred, start)


def test_missing_candidates_are_misses():
    start = _start(np.array([[0, 1, np.inf], [np.inf, 0, 1], [np.inf, np.inf, 0]]), "float32")
    d = _distances(start)
    cand = witness.candidates(d, start, 0.0)
    empty = witness.Candidates(np.zeros_like(cand.seg), cand.k[:0], cand.w[:0], cand.chunks)
    pred, misses = model.recover(d, empty, 0.0)
    assert misses == 3 and (pred == NO_PREDECESSOR).all()
