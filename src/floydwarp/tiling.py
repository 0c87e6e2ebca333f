"""The start matrix as square tiles, built a band of rows at a time.

Blocked engines keep the matrix as a 4-D array ``tiles[li, lj]`` of
``bs x bs`` tiles: tile ``(I, J)`` of the padded matrix, with
``I = grid.tile_rows(nt)[li]`` and ``J = grid.tile_cols(nt)[lj]`` (one
process holds every tile; an MPI rank holds its 2D block-cyclic share).
Padding rows and columns (index >= n) are INF with 0 on the diagonal and
have no predecessors.  The arrays come from ``alloc(shape, dtype)``, so they
may be memory-mapped files for matrices larger than memory.
"""
from __future__ import annotations

import numpy as np

from .dist.grid import ProcessGrid
from .predecessors import NO_PREDECESSOR

SINGLE = ProcessGrid(1, 1, 0)


def start_tiles(graph, bs: int, dtype, inf, *, with_pred=False, grid: ProcessGrid = SINGLE, alloc=np.empty):
    """(tiles, pred tiles or None) of this process, from the graph, one tile row at a time."""
    n = graph.n
    nt = -(-n // bs)
    rows, cols = grid.tile_rows(nt), grid.tile_cols(nt)
    tiles = alloc((len(rows), len(cols), bs, bs), np.dtype(dtype))
    pred = alloc(tiles.shape, np.dtype(np.int32)) if with_pred else None
    # the global column of every column of a tile row, and whether it is a real vertex
    col = (np.asarray(cols, dtype=np.int64)[:, None] * bs + np.arange(bs)[None, :]).ravel()
    real_col = col < n
    for li, I in enumerate(rows):
        lo, hi = I * bs, min(n, (I + 1) * bs)
        row = lo + np.arange(bs)
        band = np.full((bs, col.size), inf, dtype=dtype)
        if hi > lo:
            band[:hi - lo, real_col] = graph.matrix_rows(lo, hi, dtype, inf)[:, col[real_col]]
        padded = row >= n
        on_diag = row[:, None] == col[None, :]
        band[padded[:, None] & on_diag] = 0
        tiles[li] = band.reshape(bs, len(cols), bs).transpose(1, 0, 2)
        if pred is not None:
            has = (band < inf) & ~on_diag & ~padded[:, None] & real_col[None, :]
            p = np.where(has, row[:, None], NO_PREDECESSOR).astype(np.int32)
            pred[li] = p.reshape(bs, len(cols), bs).transpose(1, 0, 2)
    return tiles, pred
