"""floydwarp.generate.erdos_renyi: the graphs it promises, checked by counting and by statistics.

The densities cover the three ways it draws (geometric gaps below 40 %, one number per
pair from 40 %, every pair at 100 %); the sizes cover one row block, several, and a last
block of a few rows.  Statistical checks allow 5 sigma (chi-square tail 1e-6): a correct
generator fails one of them about once in a million runs.
"""
import math

import numpy as np
import pytest
from scipy import stats

import floydwarp as fw
from floydwarp import generate
from floydwarp.errors import FloydwarpError
from floydwarp.generate import erdos_renyi

DENSITIES = [0.5, 5, 25, 39.9, 40, 60, 95]
Z = 5.0


def pair_keys(g):
    src, dst, _ = g.edges()
    return src * g.n + dst


def assert_simple(g):
    """No self-loops, no pair twice, ids in range."""
    src, dst, _ = g.edges()
    assert src.dtype == dst.dtype == np.int64
    assert ((src >= 0) & (src < g.n) & (dst >= 0) & (dst < g.n)).all()
    assert not (src == dst).any()
    assert (np.diff(np.sort(pair_keys(g))) > 0).all()


def candidate_pairs(n, directed):
    return n * (n - 1) if directed else n * (n - 1) // 2


@pytest.mark.parametrize("percent", DENSITIES)
@pytest.mark.parametrize("n", [37, 1000, 2100])
@pytest.mark.parametrize("directed", [True, False])
def test_edge_count_is_binomial(n, percent, directed):
    p = percent / 100
    pairs = candidate_pairs(n, directed)
    mean, sigma = pairs * p, math.sqrt(pairs * p * (1 - p))
    for seed in range(3):
        g = erdos_renyi(n, percent, seed=seed, directed=directed)
        assert_simple(g)
        drawn = g.num_edges if directed else g.num_edges // 2
        assert abs(drawn - mean) <= Z * sigma + 1, (seed, drawn, mean, sigma)


@pytest.mark.parametrize("percent", [5, 30, 60])
@pytest.mark.parametrize("directed", [True, False])
def test_every_pair_equally_likely(percent, directed):
    """Row degrees, column degrees and the hits at each distance from the diagonal follow
    the binomial of their candidate pairs (chi-square); neighbouring pairs are independent."""
    n, p, graphs = 1500, percent / 100, 4
    rows = np.zeros(n)
    cols = np.zeros(n)
    band = np.zeros(n)                       # hits at distance d = 1 .. n-1 right of the diagonal
    adjacent = 0
    for seed in range(graphs):
        g = erdos_renyi(n, percent, seed=100 + seed, directed=directed)
        src, dst, _ = g.edges()
        if not directed:                     # the drawn pairs: the upper triangle
            src, dst = src[src < dst], dst[src < dst]
        rows += np.bincount(src, minlength=n)
        cols += np.bincount(dst, minlength=n)
        band += np.bincount((dst - src) % n, minlength=n)      # (i, i + d mod n); undirected: (i, i + d)
        keys = np.sort(src * n + dst)
        adjacent += np.count_nonzero((np.diff(keys) == 1) & (keys[1:] % n != 0))
    if directed:
        row_pairs = col_pairs = np.full(n, n - 1)
        band_pairs = np.full(n, n)
        adjacent_pairs = (n - 1) * (n - 2)   # (i, j), (i, j + 1) with neither on the diagonal
    else:
        row_pairs, col_pairs = n - 1 - np.arange(n), np.arange(n)
        band_pairs = n - np.arange(n)
        adjacent_pairs = (n - 1) * (n - 2) // 2
    for counts, pairs in ((rows, row_pairs), (cols, col_pairs), (band[1:], band_pairs[1:])):
        expect = graphs * pairs * p
        used = expect > 0
        chi = (((counts[used] - expect[used]) ** 2) / (expect[used] * (1 - p))).sum()
        assert stats.chi2.sf(chi, used.sum()) > 1e-6
        assert counts[~used].sum() == 0
    expect = graphs * adjacent_pairs * p * p
    assert abs(adjacent - expect) <= Z * math.sqrt(expect) * (1 + p)


def test_edges_are_sorted_and_the_degrees_vary():
    g = erdos_renyi(2500, 10, seed=4)
    assert (np.diff(pair_keys(g)) > 0).all()
    degrees = np.bincount(g.edges()[0], minlength=g.n)
    p = 0.1
    # the out-degrees are Binomial(n - 1, p): their spread, not only their mean
    assert abs(degrees.var() / ((g.n - 1) * p * (1 - p)) - 1) < 0.15


@pytest.mark.parametrize("percent", [3, 50])
def test_undirected_mirrors_each_pair(percent):
    g = erdos_renyi(1100, percent, seed=3, directed=False, weights=(-4, 9))
    m = g.to_matrix("float64", np.inf)
    assert np.array_equal(m, m.T)
    src, dst, w = g.edges()
    assert (src < dst).sum() == (src > dst).sum() == g.num_edges // 2


def test_the_same_graph_for_a_seed_whatever_the_cores(monkeypatch):
    def edges(**kw):
        return [a.copy() for a in erdos_renyi(3000, 4, seed=9, potential=3, directed=False, **kw).edges()]

    many = edges()
    monkeypatch.setattr(generate, "usable_cores", lambda: 1)
    one = edges()
    monkeypatch.setattr(generate, "usable_cores", lambda: 7)
    seven = edges()
    for a, b, c in zip(many, one, seven):
        assert np.array_equal(a, b) and np.array_equal(a, c)
    other = erdos_renyi(3000, 4, seed=10, potential=3, directed=False).edges()
    assert not np.array_equal(other[0], many[0]) or not np.array_equal(other[1], many[1])


@pytest.mark.parametrize("percent", [5, 60, 100])
def test_weights_cover_the_range(percent):
    g = erdos_renyi(300, percent, seed=1, weights=(-3, 4))
    w = g.edges()[2]
    assert w.dtype == np.int64
    assert set(np.unique(w).tolist()) == set(range(-3, 5))
    assert g.weight_stats() == fw.Graph.from_edges(*g.edges(), n=g.n).weight_stats()


@pytest.mark.parametrize("real", [False, True])
@pytest.mark.parametrize("directed", [True, False])
def test_weight_statistics_are_those_of_the_edges(real, directed):
    """The generator hands its statistics to the graph: they must be what a scan finds."""
    for percent, weights, potential in ((20, (1, 16), 0), (60, (-5, 5), 0), (10, (0, 9), 6), (0, (1, 16), 0),
                                        (50, (7, 7), 0)):
        g = erdos_renyi(150, percent, seed=2, weights=weights, potential=potential, real=real, directed=directed)
        assert g.weight_stats() == fw.Graph.from_edges(*g.edges(), n=g.n).weight_stats()


def test_potential_keeps_every_cycle_length():
    n, potential = 400, 7
    g = erdos_renyi(n, 30, seed=5, weights=(0, 9), potential=potential, directed=False)
    src, dst, w = g.edges()
    assert w.min() < 0 and w.min() >= -potential and w.max() <= 9 + potential
    back = {(int(s), int(d)): int(x) for s, d, x in zip(src, dst, w)}
    for s, d, x in zip(src[:2000], dst[:2000], w[:2000]):
        assert 0 <= x + back[(int(d), int(s))] <= 18         # the 2-cycle keeps 2 * its weight
    directed = erdos_renyi(200, 20, seed=6, weights=(0, 9), potential=potential)
    assert directed.edges()[2].min() < 0
    assert not fw.solve(directed, backend="reference").has_negative_cycle


def test_real_weights_in_the_half_open_range():
    g = erdos_renyi(400, 45, seed=3, weights=(-2, 3), real=True)
    w = g.edges()[2]
    assert w.dtype == np.float64 and (w >= -2).all() and (w < 3).all()
    assert not g.weight_stats().integral


@pytest.mark.parametrize("directed", [True, False])
def test_tiny_graphs_and_the_extreme_densities(directed):
    for n in (0, 1, 2, 3, 1025):
        assert erdos_renyi(n, 0, seed=1, directed=directed).num_edges == 0
        full = erdos_renyi(n, 100, seed=1, directed=directed)
        assert full.num_edges == n * (n - 1)
        assert_simple(full)
        if n:
            m = full.to_matrix("int64")
            assert (m[~np.eye(n, dtype=bool)] < fw.inf_of(np.int64)).all()
    assert erdos_renyi(2, 50, seed=1).num_edges in (0, 1, 2)
    assert erdos_renyi(1000, 1e-300, seed=1, directed=directed).num_edges == 0
    assert erdos_renyi(0, 25).weight_stats() == fw.Graph.from_edges([], [], [], n=0).weight_stats()


def test_bad_arguments():
    for args, kwargs, text in (((-1,), {}, "n must be"), ((5, 101), {}, "percent"), ((5, -1), {}, "percent"),
                               ((5,), {"weights": (3, 2)}, "empty")):
        with pytest.raises(FloydwarpError, match=text):
            erdos_renyi(*args, **kwargs)
