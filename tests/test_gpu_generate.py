"""Random graphs drawn on the GPU (gpu/generate.py, kernels/generate.cu) are the host generator's.

On the CPU: the kernels' algorithm, written out pass for pass in tests/gpu_generate_model.py,
against ``floydwarp.generate.erdos_renyi`` (the same edges in the same order, the same weights),
and the pieces the host computes for the device.  With a GPU (``-m gpu``): the device's graph
against the host's, and solves from it.
"""
from __future__ import annotations

import numpy as np
import pytest

import floydwarp as fw
from floydwarp.gpu import generate as gpu_generate

import gpu_generate_model as model

CASES = [
    dict(n=150, percent=5, seed=3),                       # gaps, several chunks per block
    dict(n=150, percent=25, seed=1),
    dict(n=90, percent=50, seed=2),                       # one uniform number per pair
    dict(n=60, percent=100, seed=0),                      # every pair
    dict(n=120, percent=10, seed=4, directed=False, potential=7),
    dict(n=80, percent=45, seed=5, directed=False),
    dict(n=70, percent=30, seed=6, weights=(0, 3 * 2 ** 30 - 1)),   # a quarter of the draws rejected
    dict(n=70, percent=30, seed=6, weights=(-5, 99)),
    dict(n=40, percent=30, seed=6, weights=(4, 4)),       # nothing drawn for the weights
    dict(n=1100, percent=0.2, seed=9),                    # two blocks of rows
    dict(n=1030, percent=0.3, seed=9, directed=False),
    dict(n=2, percent=100, seed=1),
    dict(n=1, percent=30),
    dict(n=0),
    dict(n=50, percent=0),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: ",".join(f"{k}={v}" for k, v in c.items()))
@pytest.mark.parametrize("chunks", [(7, 6), (1, 2), (256, 512)])
def test_device_algorithm_draws_the_host_graph(case, chunks):
    host = fw.generate.erdos_renyi(**case).edges()
    drawn = model.erdos_renyi(**case, place_chunk=chunks[0], weight_chunk=chunks[1])
    for got, want in zip(drawn, host):
        np.testing.assert_array_equal(got, want)


def test_stream_states_are_numpys_pcg64():
    seed = np.random.SeedSequence(11).spawn(3)[2]
    (row,) = gpu_generate.stream_states([seed])
    g = model.Pcg(row, 0)
    want = np.random.PCG64(seed).random_raw(5)
    assert [g.next() for _ in range(5)] == [int(x) for x in want]
    # the jump-ahead lands where stepping does
    assert model.Pcg(row, 3).next() == int(want[3])


@pytest.mark.parametrize("span", [1, 2, 16, 100, 3 * 2 ** 30, 2 ** 32 - 1])
def test_lemire_threshold_is_numpys(span):
    assert gpu_generate.lemire_threshold(span) == (2 ** 32 - 1 - (span - 1)) % span


def test_draw_counts_cover_the_expected_edges():
    cells = gpu_generate.block_cells(2500, True)
    assert list(cells) == [1024 * 2499, 1024 * 2499, 452 * 2499]
    assert list(gpu_generate.block_cells(5, False)) == [4 + 3 + 2 + 1 + 0]
    draws = gpu_generate.gap_draws(cells, 0.05)
    assert (draws > cells * 0.05 + 5 * np.sqrt(cells * 0.05)).all() and (draws <= cells + 1).all()
    assert gpu_generate.gap_draws(np.array([3]), 0.3)[0] == 4
    assert gpu_generate.weight_draws(np.array([1000]), 16)[0] == 1064        # no rejections for a power of 2


def test_unsupported_weights_are_named():
    assert gpu_generate.unsupported((1, 16)) is None
    assert gpu_generate.unsupported((0, 2 ** 32 - 2)) is None
    assert "2**32" in gpu_generate.unsupported((0, 2 ** 32 - 1))
    assert "real" in gpu_generate.unsupported((1, 16), real=True)


# ------------------------------------------------------------------ on the GPU
@pytest.mark.gpu
@pytest.mark.parametrize("case", CASES + [dict(n=4097, percent=5, seed=3), dict(n=3000, percent=60, seed=2,
                                                                                 directed=False, potential=3)],
                         ids=lambda c: ",".join(f"{k}={v}" for k, v in c.items()))
def test_gpu_draws_the_host_graph(case):
    from conftest import require_gpu

    require_gpu()
    host = fw.generate.erdos_renyi(**case)
    device = fw.generate.erdos_renyi(**case, device=True)
    assert device.device_edges() is not None
    assert device.num_edges == host.num_edges
    assert device.weight_stats() == host.weight_stats()
    for got, want in zip(device.edges(), host.edges()):
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)


@pytest.mark.gpu
@pytest.mark.parametrize("directed", [True, False])
def test_gpu_solve_of_a_device_graph_is_the_host_graphs(directed):
    from conftest import require_gpu

    require_gpu()
    kw = dict(seed=5, weights=(-3, 20), potential=4, directed=directed)
    host = fw.solve(fw.generate.erdos_renyi(700, 4, **kw), backend="gpu")
    device = fw.solve(fw.generate.erdos_renyi(700, 4, **kw, device=True), backend="gpu")
    assert device.dtype == host.dtype
    np.testing.assert_array_equal(device.dist, host.dist)
    # the same graph still solves on the CPU (its edges come to the host when asked for)
    cpu = fw.solve(fw.generate.erdos_renyi(700, 4, **kw, device=True), backend="cpu")
    np.testing.assert_array_equal(cpu.dist, host.dist)


@pytest.mark.gpu
def test_gpu_refuses_weights_it_cannot_draw():
    from conftest import require_gpu

    require_gpu()
    with pytest.raises(fw.FloydwarpError, match="2\\*\\*32"):
        fw.generate.erdos_renyi(10, 50, weights=(0, 2 ** 40), device=True)
