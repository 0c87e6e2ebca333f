"""Numba kernels for a process's local tiles (the min-plus work is cpu/kernels.py's)."""
from __future__ import annotations

from numba import njit, prange

from ..cpu.kernels import clamp_below, copy_of, minplus, minplus_pred
from ..jit import PRANGE_ONLY


@njit(cache=True, parallel=PRANGE_ONLY)
def update_tiles(local, colp, rowp, sel_i, sel_j, clamp, lo):
    """Phase 3 on the chosen local tiles: ``local[i, j] = min(local[i, j], colp[i] (x) rowp[j])``."""
    for s in prange(sel_i.size):
        i = sel_i[s]
        j = sel_j[s]
        x = local[i, j]
        minplus(x, colp[i], rowp[j])
        if clamp:
            clamp_below(x, lo)


@njit(cache=True, parallel=PRANGE_ONLY)
def update_tiles_pred(local, plocal, colp, rowp, prowp, sel_i, sel_j, clamp, lo):
    for s in prange(sel_i.size):
        i = sel_i[s]
        j = sel_j[s]
        x = local[i, j]
        minplus_pred(x, plocal[i, j], colp[i], rowp[j], prowp[j])
        if clamp:
            clamp_below(x, lo)


@njit(cache=True, parallel=PRANGE_ONLY)
def pivot_panel(local, at, piv, skip, clamp, lo, row_side):
    """Phase 2 on the pivot's tile row ``local[at, :]`` (``row_side``: each tile becomes
    ``piv* (x) x``) or column ``local[:, at]`` (``x (x) piv*``), tile ``skip`` left out; one
    product suffices because ``piv`` is closed.  The whole array and an index, not a view of
    the panel: a column's view has no C layout, and every layout was a compiled version of
    this kernel and of the products it calls (12 versions, 5 s each, in the test suite)."""
    count = local.shape[1] if row_side else local.shape[0]
    for s in prange(count):
        if s != skip:
            x = local[at, s] if row_side else local[s, at]
            old = copy_of(x)
            if row_side:
                minplus(x, piv, old)
            else:
                minplus(x, old, piv)
            if clamp:
                clamp_below(x, lo)


@njit(cache=True, parallel=PRANGE_ONLY)
def pivot_panel_pred(local, plocal, at, piv, ppiv, skip, clamp, lo, row_side):
    """:func:`pivot_panel` with predecessors (``plocal``, the pivot's ``ppiv``)."""
    count = local.shape[1] if row_side else local.shape[0]
    for s in prange(count):
        if s != skip:
            x = local[at, s] if row_side else local[s, at]
            p = plocal[at, s] if row_side else plocal[s, at]
            old = copy_of(x)
            if row_side:
                minplus_pred(x, p, piv, old, copy_of(p))
            else:
                minplus_pred(x, p, old, piv, ppiv)
            if clamp:
                clamp_below(x, lo)
