"""Bellman-equation certificates (floydwarp.certify) against solved and corrupted matrices."""
from __future__ import annotations

import numpy as np
import pytest

import floydwarp as fw
from floydwarp.certify import certify
from floydwarp.generate import erdos_renyi


@pytest.mark.parametrize("n", [0, 1, 2, 3, 64, 257])
@pytest.mark.parametrize("dtype", ["int16", "int32", "float32", "float64"])
def test_solved_matrices_are_certified(n, dtype):
    g = erdos_renyi(n, 4.0, seed=n)
    r = fw.solve(g, backend="cpu", dtype=dtype)
    c = certify(g, r.dist, inf=r.inf)
    assert c.ok and c.mismatches == 0 and c.unique and c.first is None


def test_negative_weights_hold_but_are_not_unique():
    g = erdos_renyi(120, 6.0, seed=2, potential=15)
    r = fw.solve(g, backend="cpu", dtype="int32")
    c = certify(g, r.dist, inf=r.inf)
    assert c.ok and not c.unique


@pytest.mark.parametrize("change", [-1, +1])
def test_a_wrong_entry_is_found(change):
    g = erdos_renyi(150, 5.0, seed=3)
    r = fw.solve(g, backend="cpu", dtype="int32")
    bad = r.dist.copy()
    i, j = np.argwhere((bad > 0) & (bad < r.inf))[7]
    bad[i, j] += change
    c = certify(g, bad, inf=r.inf)
    assert not c.ok and c.mismatches >= 1 and c.first[0] == i


def test_unreachable_pairs_and_parallel_edges():
    g = fw.Graph.from_edges([0, 0, 1, 3], [1, 1, 2, 3], [5, 2, 1, 4], n=4)
    r = fw.solve(g, backend="reference", dtype="float64")
    assert certify(g, r.dist).ok
    bad = r.dist.copy()
    bad[2, 0] = 7.0          # claims a path where there is none
    assert certify(g, bad).first == (2, 0)
