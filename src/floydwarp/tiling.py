"""The start matrix as square tiles, written from the graph in one parallel pass.

Blocked engines keep the matrix as a 4-D array ``tiles[li, lj]`` of
``bs x bs`` tiles: tile ``(I, J)`` of the padded matrix, with
``I = grid.tile_rows(nt)[li]`` and ``J = grid.tile_cols(nt)[lj]`` (one
process holds every tile; an MPI rank holds its 2D block-cyclic share).
Padding rows and columns (index >= n) are INF with 0 on the diagonal and
have no predecessors.  The arrays come from ``alloc(shape, dtype)``, so they
may be memory-mapped files for matrices larger than memory.
"""
from __future__ import annotations

import functools

import numpy as np

from .grid import ProcessGrid

SINGLE = ProcessGrid(1, 1, 0)


def start_tiles(graph, bs: int, dtype, inf, *, with_pred=False, grid: ProcessGrid = SINGLE, alloc=np.empty):
    """(tiles, pred tiles or None) of this process, written from the graph in one parallel pass
    (:meth:`Graph.fill_start`)."""
    rows, cols, col_tile = _tile_starts(grid, graph.n, bs)
    tiles = alloc((rows.size, cols.size, bs, bs), np.dtype(dtype))
    pred = alloc(tiles.shape, np.dtype(np.int32)) if with_pred else None
    graph.fill_start(tiles, rows, cols, inf, pred, col_tile=col_tile)
    return tiles, pred


@functools.lru_cache(maxsize=64)
def _tile_starts(grid: ProcessGrid, n: int, bs: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The first row and the first column of each tile row and column this process holds,
    and the :func:`column_tiles` of those columns, shared between calls (not to be written;
    a read-only flag would make the Numba passes compile a second, read-only specialization)."""
    nt = -(-n // bs)
    rows, cols = (np.arange(t.start, t.stop, t.step, dtype=np.int64) * bs
                  for t in (grid.tile_rows(nt), grid.tile_cols(nt)))
    return rows, cols, column_tiles(n, cols, bs)


def column_tiles(n: int, col0: np.ndarray, bw: int) -> np.ndarray:
    """``table[j // bw]``: the index of the tile column of ``col0`` (tile starts, multiples of
    ``bw``) that holds column j of n, -1 where none does; what the start-tile pass of an edge
    list looks an edge's tile up in (graph/kernels.py: ``edge_tiles``)."""
    table = np.full(-(-n // max(bw, 1)), -1, np.int64)
    for lj, j0 in enumerate(col0.tolist()):
        if j0 < n:
            table[j0 // bw] = lj
    return table
