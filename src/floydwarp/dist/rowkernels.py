"""Numba kernels of the 1D ``rows`` decomposition: relax local rows with a received row k."""
from __future__ import annotations

from numba import njit, prange

from ..cpu.kernels import _PRANGE_ONLY, narrow


@njit(cache=True, parallel=_PRANGE_ONLY)
def relax_rows(d, row, k, clamp, lo):
    """``d[i, j] = min(d[i, j], d[i, k] + row[j])`` for every local row."""
    m, n = d.shape
    for i in prange(m):
        dik = d[i, k]
        for j in range(n):
            x = narrow(dik + row[j], d)
            if clamp:
                x = x if x > lo else lo
            if x < d[i, j]:
                d[i, j] = x


@njit(cache=True, parallel=_PRANGE_ONLY)
def relax_rows_pred(d, p, row, prow, k, clamp, lo):
    m, n = d.shape
    for i in prange(m):
        dik = d[i, k]
        for j in range(n):
            x = narrow(dik + row[j], d)
            if clamp:
                x = x if x > lo else lo
            if x < d[i, j]:
                d[i, j] = x
                p[i, j] = prow[j]
