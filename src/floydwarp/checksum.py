"""Seed 002's result check: a 16-bit Fletcher checksum of the distance matrix.

The checksum is defined over a canonical form of the distances, so that the
same graph gives the same checksum in every dtype (int16 ... float64), on
every backend and for every algorithm:

1. **Canonical form.**  The n x n distances, row-major, as little-endian
   int64 (8 n^2 bytes):

   * a pair with a shortest path holds its distance;
   * an unreachable pair holds ``INT64_MAX`` (2**63 - 1);
   * a pair with a negative cycle on the way (no shortest path, see
     :class:`floydwarp.cycles.NegativeCycles`) holds ``INT64_MIN`` (-2**63).

   A float result whose finite entries are not all integers (non-integral
   weights) cannot be written as integers: it is hashed as little-endian
   float64 instead, with ``+inf`` for unreachable and ``-inf`` for pairs
   through a negative cycle.

2. **Fletcher-16** (Fletcher 1982) over those bytes::

       s1 = s2 = 0
       for b in data:
           s1 = (s1 + b) % 255
           s2 = (s2 + s1) % 255
       checksum = s2 * 256 + s1

Vectorized: with ``m`` bytes ``x_0 .. x_{m-1}``, ``s1 = sum(x)`` and
``s2 = sum((m - t) x_t)`` (mod 255).  Laying the bytes out in rows of 2040
bytes (a multiple of 255) makes a byte's row drop out of its weight mod 255,
so the weighted sum needs only the column sums of that layout: one pass of
fast ``uint8`` additions.  The matrix is canonicalized in row blocks of a few
tens of megabytes, so n = 16384 needs no 2 GB copy.

>>> hex(fletcher16(b"abcde")), hex(fletcher16(b"abcdef"))
('0xc8f0', '0x2057')
"""
from __future__ import annotations

import numpy as np

from .arrays import to_host
from .casts import cast_distances
from .numeric import inf_of

_MOD = 255
#: Bytes per row of the 2-D layout: a multiple of 255 (and of 8).
_ROW = 8 * _MOD
#: Rows summed at once: keeps column sums of uint8 within uint32 (2**20 * 255 < 2**32).
_MAX_ROWS = 1 << 20
_COLUMN_WEIGHTS = np.arange(_ROW, dtype=np.int64) % _MOD
#: About this many bytes of canonical int64 per row block.
_BLOCK_BYTES = 32 << 20

INT64_MAX = np.iinfo(np.int64).max
INT64_MIN = np.iinfo(np.int64).min


class Fletcher16:
    """Streaming Fletcher-16: ``update()`` with consecutive pieces, then ``value``."""

    def __init__(self):
        self.s1 = 0
        self.s2 = 0

    def update(self, data) -> "Fletcher16":
        x = np.frombuffer(data, dtype=np.uint8) if isinstance(data, (bytes, bytearray, memoryview)) \
            else np.ascontiguousarray(data).reshape(-1).view(np.uint8)
        step = _ROW * _MAX_ROWS
        for start in range(0, x.size, step):
            self._update(x[start:start + step])
        return self

    def _update(self, x):
        m = x.size
        full = m - m % _ROW
        total = weighted = 0                       # sum(x_t) and sum(t * x_t), mod 255
        if full:
            cols = x[:full].reshape(-1, _ROW).sum(axis=0, dtype=np.uint32)
            total = int(cols.sum(dtype=np.uint64))
            weighted = int(np.dot(cols.astype(np.int64) % _MOD, _COLUMN_WEIGHTS))
        if full < m:
            tail = x[full:].astype(np.int64)
            tail_sum = int(tail.sum())
            total += tail_sum
            weighted += full * tail_sum + int(np.dot(tail, np.arange(tail.size, dtype=np.int64)))
        # s2 gains sum over the piece of (s1 before the piece + running sum) = m * s1 + sum((m - t) x_t)
        self.s2 = (self.s2 + m * self.s1 + m * total - weighted) % _MOD
        self.s1 = (self.s1 + total) % _MOD

    @property
    def value(self) -> int:
        return (self.s2 << 8) | self.s1


def fletcher16(data) -> int:
    """Fletcher-16 of a bytes-like object or of an array's bytes (in memory order)."""
    return Fletcher16().update(data).value


def checksum(result_or_dist, *, inf=None) -> int:
    """Fletcher-16 of a result's canonical distances (see the module docstring).

    Parameters
    ----------
    result_or_dist : Result or ndarray (n, n)
        A :class:`floydwarp.Result` (its negative cycles are taken into account),
        or a distance matrix (NumPy or CuPy).
    inf : scalar, optional
        The unreachable value of a bare matrix (default: the dtype's INF).
    """
    cycles = getattr(result_or_dist, "negative_cycles", None)
    if hasattr(result_or_dist, "dist"):
        dist, inf = result_or_dist.dist, result_or_dist.inf
    else:
        dist = result_or_dist
        inf = inf_of(dist.dtype) if inf is None else inf
    n = int(dist.shape[0])
    rows = max(1, _BLOCK_BYTES // (8 * max(n, 1)))

    def blocks():
        """(block, unreachable, through a negative cycle) for each row block."""
        for start in range(0, n, rows):
            block = to_host(dist[start:start + rows])
            unreachable = ~(block < inf)
            through = None
            if cycles:
                through = (cycles.reach_to[:, start:start + rows].T.astype(np.float32)
                           @ cycles.reach_from.astype(np.float32)) > 0
                through &= ~unreachable
            yield block, unreachable, through

    as_float = np.dtype(dist.dtype).kind == "f" and not all(
        _integral(block, unreachable if through is None else unreachable | through)
        for block, unreachable, through in blocks())
    state = Fletcher16()
    for block, unreachable, through in blocks():
        canon = cast_distances(block, inf, "<f8" if as_float else "<i8", np.inf if as_float else INT64_MAX,
                               unreachable=unreachable)
        if through is not None:
            canon[through] = -np.inf if as_float else INT64_MIN
        state.update(canon)
    return state.value


def format_checksum(value: int) -> str:
    return f"0x{value:04x}"


def _integral(block, special) -> bool:
    """True when the entries not marked special are integers that int64 and float64 hold exactly."""
    vals = np.where(special, 0, block)
    return bool(np.all(vals == np.floor(vals)) and np.all(np.abs(vals) <= 2.0 ** 53))
