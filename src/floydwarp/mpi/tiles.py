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
def pivot_panel(tiles, ptiles, piv, ppiv, skip, clamp, lo, with_pred, row_side):
    """Phase 2: pivot-row tiles become ``piv* (x) x`` (``row_side``), pivot-column tiles
    ``x (x) piv*``; one product suffices because ``piv`` is closed."""
    for s in prange(tiles.shape[0]):
        if s == skip:
            continue
        x = tiles[s]
        old = copy_of(x)
        if with_pred:
            if row_side:
                minplus_pred(x, ptiles[s], piv, old, copy_of(ptiles[s]))
            else:
                minplus_pred(x, ptiles[s], old, piv, ppiv)
        elif row_side:
            minplus(x, piv, old)
        else:
            minplus(x, old, piv)
        if clamp:
            clamp_below(x, lo)
