"""``fast`` variant "wide": in-core blocked Floyd-Warshall with wide rounds of panel products.

Rounds of ``w`` pivot columns (w a multiple of 64, ``WIDE_WIDTH`` per dtype) instead of 64:
the w x w pivot block is closed by the 64-tile kernels (``tiles.close_block``), then the
pivot row and column panels and the rest of the matrix are each ONE ``panel.minplus``
launch (minplus.cu), which keeps every output tile in registers over all w pivot steps.
Against 64-wide rounds ("pipe"), a cell is read and written once per w steps instead of
once per 64, so the add-min pipe rather than the memory system sets the pace -- the same
schedule as the out-of-core engine (ooc.py), with the whole matrix on the device.
"""
from __future__ import annotations

import functools

import numpy as np

from .. import schedule
from ..errors import FloydwarpError
from . import panel, tiles
from .panel import band_skip, row_bands

#: pivot columns per round by dtype (options["wide_width"] overrides).  H100, n = 16384,
#: T relax/s at 1024 / 1536 / 2048 / 3072: int16 28.22 / 28.24 / 28.13 / 28.44, int32
#: 14.51 / 14.55 / 14.56 / 14.58, float32 14.19 / 14.19 / 14.20 / 14.18 (bench/NOTES.md)
WIDE_WIDTH = {"int16": 3072}
WIDE_WIDTH_DEFAULT = 2048
#: the solve option of the wide rounds (fast.py declares it)
OPTIONS = {
    "wide_width": f"pivot columns a wide round takes, a multiple of {panel.UNIT} (default: 3072 for int16, "
                  f"{WIDE_WIDTH_DEFAULT} for the others)",
}


def width(plan) -> int:
    w = int(plan.options.get("wide_width") or WIDE_WIDTH.get(np.dtype(plan.dtype).name, WIDE_WIDTH_DEFAULT))
    if w <= 0 or w % panel.UNIT:
        raise FloydwarpError(f"wide_width must be a positive multiple of {panel.UNIT}, got {w}")
    return w


def run(ctx) -> None:
    """All rounds on the padded device matrix ``ctx.d`` (N x pitch, N a multiple of 64)."""
    plan = ctx.plan
    ctx.rounds(Rounds(ctx.d[:, :ctx.lay.N], width(plan), functools.partial(tiles.close_block, plan=plan), ctx.arith),
               result=True)


class Rounds:
    """The engine of the blocked schedule for in-core blocked Floyd-Warshall on the square
    device matrix ``d`` (side a multiple of 64) in rounds of ``w`` pivot columns.
    ``close(pivot)`` closes a pivot block in place; the products compute in ``arith``
    (``panel.Arith``); ``keep`` goes to ``panel.to_words`` (keyed predecessors)."""

    def __init__(self, d, w, close, arith, keep=-1):
        import cupy as cp

        self.d, self.close, self.arith, self.keep = d, close, arith, keep
        self.n_pad = n_pad = d.shape[0]
        self.w = w = min(w, n_pad)
        wd = panel.word_dtype(d.dtype)
        self.col_t = cp.empty((w, n_pad), wd)       # the column panel, transposed into words
        self.piv_t = cp.empty((w, w), wd)           # the closed pivot block, likewise
        self.rounds = -(-n_pad // w)
        self._views = None

    def _round(self, r):
        """(pivot block, row panel, column panel, its words, the pivot's words, skip) of
        round r, made once a round (keyed runs make thousands of short rounds)."""
        if self._views is None or self._views[0] != r:
            k0 = r * self.w
            kw = min(self.w, self.n_pad - k0)
            d = self.d
            self._views = r, (d[k0:k0 + kw, k0:k0 + kw], d[k0:k0 + kw], d[:, k0:k0 + kw], self.col_t[:kw],
                              self.piv_t[:kw, :kw], (k0 // panel.UNIT, kw // panel.UNIT))
        return self._views[1]

    def close_pivot(self, r):
        self.close(self._round(r)[0])

    def update_panels(self, r):
        pivot, rows, cols, ct, pt, skip = self._round(r)
        if self.rounds == 1:     # a pivot that is the whole matrix is the whole answer
            return
        keep, arith = self.keep, self.arith
        panel.to_words(pivot, out=pt, keep=keep)
        panel.minplus(rows, pt, rows, arith, skip_cols=skip)
        panel.to_words(cols, out=ct, keep=keep)        # the column panel before its update ...
        panel.minplus(cols, ct, pivot, arith, skip_rows=skip)
        panel.to_words(cols, out=ct, keep=keep)        # ... and after: the left operand of the rest

    def product(self, r, part):
        """Phase 3 on every row, or on the rows ``part = (start, stop)`` of :meth:`row_parts`."""
        _, rows, _, ct, _, skip = self._round(r)
        if self.rounds > 1:
            lo, hi = (0, self.n_pad) if part == schedule.ALL else part
            panel.minplus(self.d[lo:hi], ct[:, lo:hi], rows, self.arith,
                          skip_rows=band_skip(skip, lo // panel.UNIT, hi // panel.UNIT), skip_cols=skip)

    def row_parts(self, r):
        """The last round's phase 3 in bands of rows (``panel.row_bands``)."""
        return [(band, band) for band in row_bands(self.n_pad)]
