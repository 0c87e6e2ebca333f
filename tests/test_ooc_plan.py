"""The out-of-core GPU engine's planning (no GPU needed): panel widths, buffers, tile order; and
its whole run with NumPy playing the GPU, its streams in any order a shared GPU may pick."""
from __future__ import annotations

import numpy as np
import pytest

import floydwarp as fw
from floydwarp.errors import FloydwarpError
from floydwarp.generate import erdos_renyi
from floydwarp.gpu import ooc
from floydwarp.numeric import inf_of
from floydwarp.plan import Plan

from numpy_gpu import ScheduledCupy


def test_width_is_the_widest_that_fits():
    budget = 4 * 10 ** 9
    w = ooc.choose_width(65536, "int32", budget, bandwidth=54e9)
    assert w % 64 == 0
    assert ooc.OocLayout.device_bytes_for(65536, w, 4, 4) <= budget
    assert ooc.OocLayout.device_bytes_for(65536, w + 64, 4, 4) > budget


def test_width_is_capped_by_n_and_by_the_panel_limit():
    assert ooc.choose_width(100, "int32", 10 ** 12) == 128
    assert ooc.choose_width(10 ** 5, "int32", 10 ** 12, bandwidth=54e9) == ooc.PANEL_MAX


def test_a_slow_link_asks_for_wider_panels():
    assert ooc.needed_width(4, 14e12, 5e9) == 22400      # 2 * 14e12 * 4 / 5e9
    need = ooc.needed_width(4, ooc.EXPECTED_RATE["int32"], 5e9)
    assert need > ooc.PANEL_MAX
    assert ooc.choose_width(200_000, "int32", 10 ** 12, bandwidth=5e9) == need


def test_int16_transposed_panel_is_in_words():
    assert ooc.OocLayout.device_bytes_for(1024, 256, 2, 4) > ooc.OocLayout.device_bytes_for(1024, 256, 2, 2)


def test_too_small_a_budget_is_refused_with_the_numbers():
    with pytest.raises(FloydwarpError, match=r"at least \d+ bytes .* only 1000 bytes"):
        ooc.choose_width(65536, "int32", 1000)


@pytest.mark.parametrize("n,w", [(1, 64), (64, 64), (65, 64), (700, 192), (4096, 1024)])
def test_spans_cover_the_matrix(n, w):
    lay = ooc.OocLayout(n, w, 4, 4)
    covered = []
    for t in range(lay.rounds):
        lo, real, padded = lay.span(t)
        assert lo == t * w and 0 < real <= w and padded % 64 == 0 and real <= padded
        covered.extend(range(lo, lo + real))
    assert covered == list(range(n))


@pytest.mark.parametrize("rounds", [1, 2, 5])
def test_tile_order_covers_every_off_pivot_tile_once(rounds):
    for r in range(rounds):
        order = ooc.tile_order(rounds, r)
        want = {(i, j) for i in range(rounds) for j in range(rounds) if i != r and j != r}
        assert len(order) == len(want) and set(order) == want
        nxt = r + 1
        k = sum(1 for i, j in order if nxt in (i, j))
        assert all(nxt in t for t in order[:k])       # the next round's panels come first


def _ooc_plan(graph, **options):
    return Plan(n=graph.n, dtype=np.dtype("int32"), inf=inf_of("int32"), clamp=False, backend="gpu",
                algorithm="out-of-core", options={"panel_width": 64, **options}, stats=graph.weight_stats())


@pytest.mark.parametrize("n", [1, 2, 65, 150])
@pytest.mark.parametrize("pinned", [True, False], ids=["pinned", "staged"])
def test_out_of_core_is_right_in_any_stream_order(monkeypatch, n, pinned):
    """Issue 35, item 1: on a GPU that other processes share, out-of-core results came back all
    INF.  The INF fills of the panel buffers, queued on the current stream, raced the panel loads
    on the copy stream, which does not wait for it.  Here every order the streams allow runs."""
    graph = erdos_renyi(n, 20.0, seed=n)
    want = fw.solve(graph, backend="reference", dtype="int32").dist
    for seed in range(16):
        gpu = ScheduledCupy(seed, pin=pinned)
        gpu.install(monkeypatch, ooc)
        out = ooc.solve(graph, _ooc_plan(graph))
        assert out.metadata["host_memory"] == ("pinned" if pinned else "pageable")
        # compared before anything else runs: a copy still queued would show as a wrong entry
        np.testing.assert_array_equal(out.dist, want, err_msg=f"schedule seed {seed}")
