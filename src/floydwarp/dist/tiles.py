"""Numba kernels for a process's local tiles (the min-plus work is cpu/kernels.py's)."""
from __future__ import annotations

from numba import njit, prange

from ..cpu.kernels import _PRANGE_ONLY, clamp_below, copy_of, minplus, minplus_pred


@njit(cache=True, parallel=_PRANGE_ONLY)
def update_tiles(local, colp, rowp, sel_i, sel_j, clamp, lo):
    """Phase 3 on the chosen local tiles: ``local[i, j] = min(local[i, j], colp[i] (x) rowp[j])``."""
    for s in prange(sel_i.size):
        i = sel_i[s]
        j = sel_j[s]
        x = local[i, j]
        minplus(x, colp[i], rowp[j])
        if clamp:
            clamp_below(x, lo)


@njit(cache=True, parallel=_PRANGE_ONLY)
def update_tiles_pred(local, plocal, colp, rowp, prowp, sel_i, sel_j, clamp, lo):
    for s in prange(sel_i.size):
        i = sel_i[s]
        j = sel_j[s]
        x = local[i, j]
        minplus_pred(x, plocal[i, j], colp[i], rowp[j], prowp[j])
        if clamp:
            clamp_below(x, lo)


@njit(cache=True, parallel=_PRANGE_ONLY)
def pivot_row_panel(tiles, ptiles, piv, ppiv, skip, clamp, lo, with_pred):
    """Phase 2 for pivot-row tiles: ``x = piv* (x) x`` (one product suffices: piv is closed)."""
    for s in prange(tiles.shape[0]):
        if s == skip:
            continue
        x = tiles[s]
        old = copy_of(x)
        if with_pred:
            pold = copy_of(ptiles[s])
            minplus_pred(x, ptiles[s], piv, old, pold)
        else:
            minplus(x, piv, old)
        if clamp:
            clamp_below(x, lo)


@njit(cache=True, parallel=_PRANGE_ONLY)
def pivot_col_panel(tiles, ptiles, piv, ppiv, skip, clamp, lo, with_pred):
    """Phase 2 for pivot-column tiles: ``x = x (x) piv*``."""
    for s in prange(tiles.shape[0]):
        if s == skip:
            continue
        x = tiles[s]
        old = copy_of(x)
        if with_pred:
            minplus_pred(x, ptiles[s], old, piv, ppiv)
        else:
            minplus(x, old, piv)
        if clamp:
            clamp_below(x, lo)
