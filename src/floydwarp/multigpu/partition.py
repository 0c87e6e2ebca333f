"""How the multi-GPU engines cut the matrix: panels of ``width`` over the padded matrix,
held in contiguous 2D blocks by a Pr x Pc process grid (plain arithmetic, tested without
a GPU).

The matrix is padded to a multiple of 64 (padding entries INF: they never shorten a
real path) and cut into panels of ``width`` (a multiple of 64; the last one may be
narrower).  Process row p owns a contiguous run of panel rows, process column q a run of
panel columns.  Every round of Floyd-Warshall updates every entry, so contiguous blocks
are as balanced as block-cyclic ones (to one panel) and each process's share is one
pitched device matrix: phase 3 is ONE ``panel.minplus`` over it.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..errors import FloydwarpError
from ..gpu.layout import round_up
from ..gpu.panel import UNIT   # every dimension the panel kernel accepts is a multiple of it
from ..grid import ProcessGrid


def split_bounds(count: int, parts: int) -> list[int]:
    """``parts + 1`` boundaries cutting ``count`` items into balanced contiguous runs."""
    return [(p * count) // parts for p in range(parts + 1)]


def split_units(rows: int, parts: int) -> list[tuple[int, int]]:
    """``rows`` (a multiple of :data:`UNIT`) as at most ``parts`` balanced ``(lo, hi)`` runs of
    whole units, none empty."""
    bounds = split_bounds(rows // UNIT, max(1, min(parts, rows // UNIT)))
    return [(a * UNIT, b * UNIT) for a, b in zip(bounds, bounds[1:])]


@dataclass(frozen=True)
class BlockPartition:
    """Panels of ``width`` over the padded matrix and their contiguous 2D blocks on a
    ``rows`` x ``cols`` process grid (plain arithmetic, tested without a GPU)."""

    n: int
    width: int
    rows: int
    cols: int

    def __post_init__(self):
        if self.width <= 0 or self.width % UNIT:
            raise FloydwarpError(f"the multi-GPU panel width (block_size) must be a positive multiple of {UNIT}, "
                                 f"got {self.width}")
        if self.rows < 1 or self.cols < 1:
            raise FloydwarpError(f"bad process grid {self.rows}x{self.cols}")

    @property
    def padded(self) -> int:
        """Side of the padded matrix (0 for an empty graph)."""
        return round_up(self.n, UNIT)

    @property
    def panels(self) -> int:
        """Rounds of the run: panels of ``width`` (the last may be narrower)."""
        return -(-self.padded // self.width)

    def span(self, t: int) -> tuple[int, int]:
        """(first index, width) of panel t."""
        start = t * self.width
        return start, min(self.width, self.padded - start)

    def _bounds(self, parts: int) -> list[int]:
        return split_bounds(self.panels, parts)

    def row_panels(self, grid_row: int) -> range:
        b = self._bounds(self.rows)
        return range(b[grid_row], b[grid_row + 1])

    def col_panels(self, grid_col: int) -> range:
        b = self._bounds(self.cols)
        return range(b[grid_col], b[grid_col + 1])

    def _extent(self, panels: range) -> tuple[int, int]:
        if len(panels) == 0:
            return 0, 0
        first, _ = self.span(panels[0])
        last, w = self.span(panels[-1])
        return first, last + w - first

    def row_extent(self, grid_row: int) -> tuple[int, int]:
        """(first padded row, number of rows) of process row ``grid_row``'s block."""
        return self._extent(self.row_panels(grid_row))

    def col_extent(self, grid_col: int) -> tuple[int, int]:
        return self._extent(self.col_panels(grid_col))

    def owner_row(self, t: int) -> int:
        """The process row holding panel t's rows."""
        b = self._bounds(self.rows)
        return max(p for p in range(self.rows) if b[p] <= t)

    def owner_col(self, t: int) -> int:
        b = self._bounds(self.cols)
        return max(q for q in range(self.cols) if b[q] <= t)

    def local_shape(self, grid_row: int, grid_col: int) -> tuple[int, int]:
        return self.row_extent(grid_row)[1], self.col_extent(grid_col)[1]

    def round_roles(self, t: int, grid: ProcessGrid) -> dict:
        """What process ``grid.rank`` does in round t: whether it closes the pivot block,
        updates a slice of the row / column panel, and the local offsets of panel t."""
        pr, pc = self.owner_row(t), self.owner_col(t)
        start, w = self.span(t)
        in_row, in_col = grid.my_row == pr, grid.my_col == pc
        return {"pivot_row": pr, "pivot_col": pc, "width": w,
                "closes_pivot": in_row and in_col, "row_panel": in_row, "col_panel": in_col,
                "local_row": start - self.row_extent(grid.my_row)[0] if in_row else None,
                "local_col": start - self.col_extent(grid.my_col)[0] if in_col else None}


def union_skip(*ranges) -> tuple[int, int]:
    """One (first, count) range of 64-tiles covering the given element ranges
    ((first, count) or None), which must touch: the panels of rounds r and r + 1."""
    spans = [(a, a + c) for a, c in (r for r in ranges if r is not None) if c]
    if not spans:
        return 0, 0
    lo, hi = min(s[0] for s in spans), max(s[1] for s in spans)
    if sum(b - a for a, b in spans) < hi - lo:
        raise FloydwarpError(f"skip ranges {spans} do not touch")
    return lo // UNIT, (hi - lo) // UNIT


def choose_grid(size: int, shape=None) -> tuple[int, int]:
    """The process grid: an explicit (Pr, Pc), else the most square with Pr <= Pc
    (a 1 x 2 grid for two GPUs: the column panel, the larger message, stays home)."""
    g = ProcessGrid.for_size(size, 0, shape)
    return g.rows, g.cols
