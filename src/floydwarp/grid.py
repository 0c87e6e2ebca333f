"""The Pr x Pc process grid and the 2D block-cyclic map of tiles onto it.

Tile (I, J) of the padded matrix belongs to the process at grid position
(I mod Pr, J mod Pc).  A process keeps its tiles as one 4-D array
``local[li, lj]`` with ``I = my_row + li * Pr`` and ``J = my_col + lj * Pc``,
so the tiles of a pivot row (or column) that a process holds are one slice.
"""
from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass(frozen=True)
class ProcessGrid:
    rows: int
    cols: int
    rank: int

    @classmethod
    def for_size(cls, size: int, rank: int, shape=None) -> "ProcessGrid":
        """The most square Pr x Pc = size grid (Pr <= Pc), or an explicit shape."""
        if shape is not None:
            pr, pc = (int(x) for x in shape)
            if pr * pc != size:
                raise ValueError(f"process grid {pr}x{pc} does not match {size} processes")
            return cls(pr, pc, rank)
        pr = max(d for d in range(1, int(math.isqrt(size)) + 1) if size % d == 0)
        return cls(pr, size // pr, rank)

    @property
    def size(self) -> int:
        return self.rows * self.cols

    @property
    def my_row(self) -> int:
        return self.rank // self.cols

    @property
    def my_col(self) -> int:
        return self.rank % self.cols

    def rank_of(self, grid_row: int, grid_col: int) -> int:
        return grid_row * self.cols + grid_col

    def owner(self, tile_row: int, tile_col: int) -> int:
        return self.rank_of(tile_row % self.rows, tile_col % self.cols)

    def tile_rows(self, ntiles: int, grid_row: int | None = None) -> range:
        """Global tile-row indices held by a process row (default: mine)."""
        return range(self.my_row if grid_row is None else grid_row, ntiles, self.rows)

    def tile_cols(self, ntiles: int, grid_col: int | None = None) -> range:
        return range(self.my_col if grid_col is None else grid_col, ntiles, self.cols)

    def local_row(self, tile_row: int) -> int | None:
        """Local index of a global tile row, or None when this process holds none of it."""
        return tile_row // self.rows if tile_row % self.rows == self.my_row else None

    def local_col(self, tile_col: int) -> int | None:
        return tile_col // self.cols if tile_col % self.cols == self.my_col else None
