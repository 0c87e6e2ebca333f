"""The Floyd-Warshall start matrix of a `Graph` (weights, INF for no edge, 0 or a negative
self-loop on the diagonal), whole, by bands of rows or as tiles, from either form a graph
keeps: the methods of :class:`StartMatrix`, which `Graph` inherits."""
from __future__ import annotations

import numpy as np

from .. import team
from ..arrays import array_module, is_device_array, to_host
from .edge_arrays import int64_vector, numba_passes

#: the start passes' "no predecessors"
_NO_PRED = np.zeros((0, 0, 0, 0), np.int32)


class StartMatrix:
    """`Graph`'s start-matrix writers (they read its ``n``, ``_dense``, ``_absent_rule()``,
    ``missing_mask()``, ``_sorted_edges()`` and ``edges_of_rows()``)."""

    def to_matrix(self, dtype, inf=None, xp=None):
        """The initial Floyd-Warshall matrix: weights, INF for no edge, 0 (or a negative self-loop) on the diagonal."""
        return self.matrix_rows(0, self.n, dtype, inf, xp)

    def write_matrix(self, out, inf, band_bytes=64 << 20):
        """Write :meth:`to_matrix` into the host n x n array ``out`` (C-ordered rows, its own
        dtype), in place: a host graph by one pass over bands of about ``band_bytes`` spread
        over the cores, with no temporaries (so the fresh pages of a large ``out`` are faulted
        in on every core), a device graph a band at a time through host memory."""
        n = self.n
        band = max(1, band_bytes // max(1, n * out.itemsize))
        if self._dense is not None and is_device_array(self._dense[0]):
            for lo in range(0, n, band):
                hi = min(n, lo + band)
                out[lo:hi] = to_host(self.matrix_rows(lo, hi, out.dtype, inf))
            return
        whole = n - n % band                     # the whole bands as the tile rows of one pass, then the rest
        if whole:
            self.fill_start(out[:whole].reshape(whole // band, 1, band, n), np.arange(0, whole, band), [0], inf)
        if whole < n:
            self.write_rows(out[whole:], whole, inf)

    def write_rows(self, out, lo: int, inf):
        """Write rows ``lo ..`` of :meth:`to_matrix` of a host graph into the host array ``out``
        (those rows, C-ordered, in its own dtype) in place, in one pass."""
        self.fill_start(out.reshape(1, 1, out.shape[0], self.n), [lo], [0], inf)

    def matrix_rows(self, lo: int, hi: int, dtype, inf=None, xp=None):
        """Rows lo..hi-1 of :meth:`to_matrix` without building the rest, so that a matrix
        larger than memory can be written out a band of rows at a time."""
        from ..casts import cast_distances
        from ..numeric import inf_of

        dtype = np.dtype(dtype)
        inf = inf_of(dtype) if inf is None else inf
        on_device = self._dense is not None and is_device_array(self._dense[0])
        if not on_device and (self._dense is not None or xp is None or xp is np):
            out = np.empty((hi - lo, self.n), dtype)
            self.write_rows(out, lo, inf)
            return out if xp is None or xp is np else xp.asarray(out)
        rows = np.arange(lo, hi)
        if on_device:
            matrix = self._dense[0]
            mxp = array_module(matrix)
            xp = mxp if xp is None else xp
            band, gone = matrix[lo:hi], self.missing_mask(lo, hi)
            # weights the dtype choice has checked; cast before inserting INF (a float64 round trip
            # would round int64's INF up past the overflow-safe value)
            out = xp.asarray(cast_distances(band, None, dtype, inf, unreachable=gone))
            r, c = xp.asarray(rows - lo), xp.asarray(rows)
            # the diagonal holds a negative self-loop, else 0, told from the entries as given:
            # the dtype choice skips non-negative self-loops, whose cast could wrap negative
            loop = (band[r, c] < 0) & ~gone[r, c]
            out[r, c] = xp.where(loop, out[r, c], xp.zeros((), dtype=out.dtype))
            return out
        out = xp.full((hi - lo, self.n), inf, dtype=dtype)
        out[xp.asarray(rows - lo), xp.asarray(rows)] = 0
        src, dst, w = self.edges_of_rows(lo, hi)
        # edges are distinct (no write conflicts); a negative self-loop overrides the 0
        out[xp.asarray(src - lo), xp.asarray(dst)] = xp.asarray(w).astype(dtype)
        return out

    def fill_start(self, out, row0, col0, inf, pred=None, col_tile=None):
        """Write the start matrix into host arrays in one parallel pass (graph/kernels.py):
        entry ``(row0[li] + r, col0[lj] + c)`` into ``out[li, lj, r, c]`` and, when given, its
        initial predecessor into ``pred[li, lj, r, c]``; indices past n are padding (INF, 0 on
        the diagonal).  ``col0`` holds multiples of the tile width ``out.shape[3]``;
        ``col_tile`` is its ``tiling.column_tiles`` where the caller keeps it (built here
        when not given)."""
        kernels = numba_passes()
        row0, col0 = int64_vector(row0), int64_vector(col0)
        with_pred = pred is not None
        pred = pred if with_pred else _NO_PRED
        if self._dense is not None:
            matrix = to_host(self._dense[0])
            rows = out.shape[0] * out.shape[2]
            team.run(kernels.dense_tiles, rows, matrix, *self._absent_rule(), row0, col0, inf, out, pred, with_pred,
                     threads=team.shares(rows, out.size))
            return
        src, dst, w = self._sorted_edges()
        if col_tile is None:
            from ..tiling import column_tiles
            col_tile = column_tiles(self.n, col0, out.shape[3])
        team.run(kernels.edge_tiles, out.shape[0], src, dst, w, self.n, row0, col0, col_tile, inf, out,
                 pred, with_pred, threads=team.shares(out.shape[0], out.size + src.size))
