"""The out-of-core GPU engine's planning (no GPU needed): panel widths, buffers, tile order."""
from __future__ import annotations

import pytest

from floydwarp.errors import FloydwarpError
from floydwarp.gpu import ooc


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
