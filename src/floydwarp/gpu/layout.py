"""Padded, pitched device layout of the distance and predecessor matrices (no CuPy here).

Seed 000 allocates with ``cudaMallocPitch`` so that every row starts aligned; we do the
same by hand: a matrix of ``N`` rows of ``pitch`` elements where

* ``N`` is ``n`` rounded up to the algorithm's tile (blocked kernels need whole tiles);
  the extra vertices have no edges: INF off the diagonal, 0 on it, so they never
  shorten a real path (and kernels that loop over k stop at ``n`` anyway);
* ``pitch * itemsize`` is ``N * itemsize`` rounded up to 128 bytes, so every row starts
  on a 128-byte boundary and 16-byte vector accesses are aligned.

Everything here is plain arithmetic, tested on machines without a GPU.
"""
from __future__ import annotations

from dataclasses import dataclass

#: Every row starts on a multiple of this many bytes (one L2 cache line, 4 sectors).
ROW_ALIGN = 128
PRED_ITEMSIZE = 4  # int32 predecessors


def round_up(x: int, multiple: int) -> int:
    return -(-int(x) // int(multiple)) * int(multiple)


def pitch_elements(ncols: int, itemsize: int, align: int = ROW_ALIGN) -> int:
    """Elements per row so that each row is ``ncols`` long and a multiple of ``align`` bytes."""
    if align % itemsize:
        raise ValueError(f"row alignment {align} is not a multiple of the item size {itemsize}")
    return round_up(max(int(ncols), 1) * itemsize, align) // itemsize


@dataclass(frozen=True)
class Layout:
    """Shape of the device buffers for one run."""

    n: int            #: real vertices
    N: int            #: padded vertices (a multiple of ``tile``)
    tile: int         #: what N is a multiple of
    itemsize: int     #: bytes per distance
    pitch: int        #: elements per distance row
    pred_pitch: int   #: elements per predecessor row (0 without predecessors)

    @classmethod
    def make(cls, n: int, itemsize: int, tile: int = 1, predecessors: bool = False) -> "Layout":
        n = int(n)
        N = round_up(max(n, 1), max(int(tile), 1))
        pitch = pitch_elements(N, itemsize)
        pred_pitch = pitch_elements(N, PRED_ITEMSIZE) if predecessors else 0
        return cls(n, N, int(tile), int(itemsize), pitch, pred_pitch)

    @property
    def tiles(self) -> int:
        return self.N // self.tile

    @property
    def dist_bytes(self) -> int:
        return self.N * self.pitch * self.itemsize

    @property
    def pred_bytes(self) -> int:
        return self.N * self.pred_pitch * PRED_ITEMSIZE

    @property
    def row_bytes(self) -> int:
        return self.pitch * self.itemsize

    @property
    def padded(self) -> bool:
        """True when the buffer is not simply the n x n matrix."""
        return self.N != self.n or self.pitch != self.n

    def device_bytes(self, *, staging: int = 0, output_copy: bool = False) -> int:
        """Peak device memory of a run: the buffers, plus the larger of what exists
        beside them at once (a start matrix staged on the device, or a contiguous
        n x n copy of the result handed back on the device)."""
        out = 0
        if output_copy and self.padded:
            out = self.n * self.n * (self.itemsize + (PRED_ITEMSIZE if self.pred_pitch else 0))
        return self.dist_bytes + self.pred_bytes + max(int(staging), out)


def format_bytes(b: int | float) -> str:
    b = float(b)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if b < 1024 or unit == "TiB":
            return f"{b:.0f} {unit}" if unit == "B" else f"{b:.2f} {unit}"
        b /= 1024
    return f"{b:.2f} TiB"
