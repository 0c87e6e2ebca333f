"""``fast`` variant "wide": in-core blocked Floyd-Warshall with wide rounds of panel products.

Rounds of ``w`` pivot columns (w a multiple of 64, ``WIDE_WIDTH`` per dtype) instead of 64:
the w x w pivot block is closed by the 64-tile kernels (``panel.close_block``), then the
pivot row and column panels and the rest of the matrix are each ONE ``panel.minplus``
launch (minplus.cu), which keeps every output tile in registers over all w pivot steps.
Against 64-wide rounds ("pipe"), a cell is read and written once per w steps instead of
once per 64, so the add-min pipe rather than the memory system sets the pace -- the same
schedule as the out-of-core engine (ooc.py), with the whole matrix on the device.
"""
from __future__ import annotations

import contextlib

import numpy as np

from ..errors import FloydwarpError
from . import panel

#: pivot columns per round by dtype (options["wide_width"] overrides).  H100, n = 16384,
#: T relax/s at 1024 / 1536 / 2048 / 3072: int16 28.22 / 28.24 / 28.13 / 28.44, int32
#: 14.51 / 14.55 / 14.56 / 14.58, float32 14.19 / 14.19 / 14.20 / 14.18 (bench/NOTES.md)
WIDE_WIDTH = {"int16": 3072}
WIDE_WIDTH_DEFAULT = 2048


def width(plan) -> int:
    w = int(plan.options.get("wide_width") or WIDE_WIDTH.get(np.dtype(plan.dtype).name, WIDE_WIDTH_DEFAULT))
    if w <= 0 or w % panel.UNIT:
        raise FloydwarpError(f"wide_width must be a positive multiple of {panel.UNIT}, got {w}")
    return w


def run(ctx) -> None:
    """All rounds on the padded device matrix ``ctx.d`` (N x pitch, N a multiple of 64)."""
    plan = ctx.plan
    rounds(ctx.d[:, :ctx.lay.N], width(plan), lambda pivot: panel.close_block(pivot, plan),
           ctx.arith, phase=ctx.phase, report=ctx.report)


def _untimed(name):
    return contextlib.nullcontext()


def rounds(d, w, close, arith, *, keep=-1, phase=_untimed, report=None) -> None:
    """Blocked Floyd-Warshall in place on the square device matrix ``d`` (side a multiple
    of 64) in rounds of ``w`` pivot columns.  ``close(pivot)`` closes a pivot block in
    place; the products compute in ``arith`` (``panel.Arith``); ``keep`` goes to
    ``panel.to_words`` (keyed.py); ``phase(name)`` times what it
    encloses (``Ctx.phase``); ``report(done, total)`` follows the rounds."""
    import cupy as cp

    n_pad = d.shape[0]
    w = min(w, n_pad)
    wd = panel.word_dtype(d.dtype)
    col_t = cp.empty((w, n_pad), wd)       # the column panel, transposed into words
    piv_t = cp.empty((w, w), wd)           # the closed pivot block, likewise
    total = -(-n_pad // w)
    for r in range(total):
        k0 = r * w
        kw = min(w, n_pad - k0)
        skip = (k0 // panel.UNIT, kw // panel.UNIT)
        pivot = d[k0:k0 + kw, k0:k0 + kw]
        rows, cols = d[k0:k0 + kw], d[:, k0:k0 + kw]
        ct, pt = col_t[:kw], piv_t[:kw, :kw]
        with phase("phase1"):
            close(pivot)
        if kw < n_pad:      # (a pivot that is the whole matrix is the whole answer)
            with phase("phase2"):
                panel.to_words(pivot, out=pt, keep=keep)
                panel.minplus(rows, pt, rows, arith, skip_cols=skip)
                panel.to_words(cols, out=ct, keep=keep)        # the column panel before its update ...
                panel.minplus(cols, ct, pivot, arith, skip_rows=skip)
                panel.to_words(cols, out=ct, keep=keep)        # ... and after: the left operand of the rest
            with phase("phase3"):
                panel.minplus(d, ct, rows, arith, skip_rows=skip, skip_cols=skip)
        if report is not None:
            report(r + 1, total)
