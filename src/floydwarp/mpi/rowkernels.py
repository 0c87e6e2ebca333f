"""Numba kernels of the 1D ``rows`` decomposition: relax the local rows with a received row k."""
from __future__ import annotations

from numba import njit, prange

from ..cpu.steps import relax_row, relax_row_pred
from ..jit import PRANGE_ONLY


@njit(cache=True, parallel=PRANGE_ONLY)
def relax_rows(d, row, k, clamp, lo):
    """``d[i, j] = min(d[i, j], d[i, k] + row[j])`` for every local row i."""
    for i in prange(d.shape[0]):
        relax_row(d, i, row, k, clamp, lo)


@njit(cache=True, parallel=PRANGE_ONLY)
def relax_rows_pred(d, p, row, prow, k, clamp, lo):
    for i in prange(d.shape[0]):
        relax_row_pred(d, p, i, row, prow, k, clamp, lo)
