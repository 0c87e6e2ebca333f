"""Numba kernels of the ``cpu`` backend's per-k loops: a row relaxed against a copy of row k
(:func:`relax_row`), Floyd-Warshall steps on a square array (phase 1 of the blocked schedule,
``serial``), the parallel rows of ``rows``, and SciPy's textbook loop (``floyd_warshall`` on
small graphs).  The rules on sums and selects are cpu/kernels.py's.
"""
from __future__ import annotations

import numpy as np
from numba import njit, prange

from ..jit import PRANGE_ONLY, narrow, select_max, select_min


@njit(cache=True, inline="always")
def copy_row(src, k, out):
    """``out[:] = src[k, :]`` by an explicit loop (see cpu/kernels.py's ``copy_of``)."""
    for j in range(src.shape[1]):
        out[j] = src[k, j]


# --------------------------------------------------------------------------- in-place FW on one tile
@njit(cache=True, inline="always")
def fw_tile(t, clamp, lo):
    """Floyd-Warshall in place on a square array (phase 1 of the blocked schedule)."""
    fw_steps_with(t, 0, t.shape[0], clamp, lo, np.empty(t.shape[0], t.dtype))


@njit(cache=True, inline="always")
def fw_steps_with(t, k0, k1, clamp, lo, rowk):
    """Steps k0..k1-1 of Floyd-Warshall in place on a square array, with the caller's buffer
    ``rowk`` (at least ``t.shape[0]`` entries): compiling ``np.empty`` took ~60 ms of phase
    1's cold compile.

    Row k is copied to the buffer per k, so the j loop reads and writes different arrays
    and vectorizes; the values are those of the in-place loop (row k does not change in
    step k while ``t[k, k]`` is 0).  Inlined into its callers' Numba IR (as are
    :func:`copy_row` and :func:`relax_row`): compiled as a function of its own it would be
    optimized once there and again inside each caller, 0.1 s more of a cold compile.
    """
    for k in range(k0, k1):
        copy_row(t, k, rowk)
        for i in range(t.shape[0]):
            relax_row(t, i, rowk, k, clamp, lo)


@njit(cache=True, inline="always")
def fw_tile_pred(t, p, clamp, lo):
    fw_steps_pred_with(t, p, 0, t.shape[0], clamp, lo, np.empty(t.shape[0], t.dtype),
                       np.empty(t.shape[0], p.dtype))


@njit(cache=True, inline="always")
def fw_steps_pred_with(t, p, k0, k1, clamp, lo, rowk, prowk):
    """:func:`fw_steps_with` with predecessors (buffers ``rowk`` and ``prowk``)."""
    for k in range(k0, k1):
        copy_row(t, k, rowk)
        copy_row(p, k, prowk)
        for i in range(t.shape[0]):
            relax_row_pred(t, p, i, rowk, prowk, k, clamp, lo)


# --------------------------------------------------------------------------- rows and serial
@njit(inline="always")
def relax_row(d, i, rowk, k, clamp, lo):
    """``d[i, j] = min(d[i, j], d[i, k] + rowk[j])`` for every j (rowk: a copy of row k)."""
    dik = d[i, k]
    for j in range(d.shape[1]):
        x = narrow(dik + rowk[j], d)
        if clamp:
            x = select_max(lo, x)
        d[i, j] = select_min(d[i, j], x)


@njit(inline="always")
def relax_row_pred(d, p, i, rowk, prowk, k, clamp, lo):
    """:func:`relax_row` with predecessors: a win sets ``p[i, j] = prowk[j]``."""
    dik = d[i, k]
    for j in range(d.shape[1]):
        x = narrow(dik + rowk[j], d)
        if clamp:
            x = select_max(lo, x)
        if x < d[i, j]:
            d[i, j] = x
            p[i, j] = prowk[j]


@njit(cache=True, parallel=PRANGE_ONLY)
def rows_steps(d, k0, k1, clamp, lo):
    """Steps k0..k1-1 of Floyd-Warshall: per k, row k copied to a buffer, rows i in parallel."""
    n = d.shape[0]
    rowk = np.empty(n, d.dtype)
    for k in range(k0, k1):
        copy_row(d, k, rowk)
        for i in prange(n):
            relax_row(d, i, rowk, k, clamp, lo)


@njit(cache=True, parallel=PRANGE_ONLY)
def rows_steps_pred(d, p, k0, k1, clamp, lo):
    n = d.shape[0]
    rowk = np.empty(n, d.dtype)
    prowk = np.empty(n, p.dtype)
    for k in range(k0, k1):
        copy_row(d, k, rowk)
        copy_row(p, k, prowk)
        for i in prange(n):
            relax_row_pred(d, p, i, rowk, prowk, k, clamp, lo)


@njit(cache=True)
def serial_steps(d, k0, k1, clamp, lo):
    """Steps k0..k1-1 of the textbook triple loop, in place, one thread (row k read from a
    copy: :func:`fw_steps_with`; 2-3x the in-place loop's speed on 16-64 vertices)."""
    fw_steps_with(d, k0, k1, clamp, lo, np.empty(d.shape[0], d.dtype))


@njit(cache=True)
def serial_steps_pred(d, p, k0, k1, clamp, lo):
    """:func:`serial_steps` with predecessors (6x the in-place loop on 32 vertices)."""
    fw_steps_pred_with(d, p, k0, k1, clamp, lo, np.empty(d.shape[0], d.dtype), np.empty(d.shape[0], p.dtype))


@njit(cache=True)
def scipy_textbook(d, p, with_pred, none):
    """SciPy's own ``floyd_warshall`` on the float64 weights ``d`` (``inf``: no edge), in
    place: zero diagonal, ``p[i, j] = i`` for each edge (``none`` elsewhere) when ``with_pred``,
    then the textbook triple loop, so distances and predecessors are SciPy's to the bit.
    Returns False when a diagonal entry did not stay 0 (a negative cycle)."""
    n = d.shape[0]
    for i in range(n):
        d[i, i] = 0.0
    if with_pred:
        for i in range(n):
            for j in range(n):
                p[i, j] = i if i != j and d[i, j] < np.inf else none
        serial_steps_pred(d, p, 0, n, False, -np.inf)
    else:
        serial_steps(d, 0, n, False, -np.inf)
    for i in range(n):
        if d[i, i] != 0.0:
            return False
    return True
