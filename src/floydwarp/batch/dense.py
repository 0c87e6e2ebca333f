"""Dense matrices read in place: a batch that is solved from its matrices, not from edges.

A list of B NumPy matrices, or a padded (B, N, N) host array, is a :class:`DenseSource`:
the address of each matrix (``addresses[g]``; row ``i`` of graph g at ``addresses[g] + i *
rows[g]`` entries) and its size.  The CPU engine reads each graph's start matrix straight
from there into the rows it solves in (kernels.solve_dense): one pass over the matrices.
Turning them into edges took two passes (checks and counts, then the edges) over every
byte before the solve read the edges: 8 bytes an entry of a float64 matrix, where a PyG
batch hands over about 1 KB of edges a molecule.

What the solve needs beforehand is a pass only for weights (their statistics pick the
dtype: :meth:`DenseSource.scan`, which refuses NaN and ``-inf``); hop counts need only to
know that some edge exists, found at the first one (:meth:`DenseSource.any_edge`), and
the solve refuses a bad entry itself.  The edges are made only when asked for (the GPU
engine, predecessors, a graph redone for a negative cycle, :attr:`GraphBatch.src`...).

Graph's rules (graph.py): an entry is no edge when it is ``+inf`` or equals ``missing``;
NaN and ``-inf`` are refused, naming the graph and the entry; a non-negative self-loop
changes nothing and is dropped.
"""
from __future__ import annotations

import numpy as np

from ..errors import FloydwarpError
from ..numeric import WeightStats


class DenseSource:
    """B matrices of one dtype read in place (``like``: an empty array of it), kept alive by
    ``keep``; ``entry`` names an entry in errors ("entry", "matrix entry")."""

    def __init__(self, like, addresses, rows, sizes, missing, entry, keep):
        from ..graph.edge_arrays import numba_readable

        if not numba_readable(like.dtype):
            raise FloydwarpError(f"cannot read weight matrices of dtype {like.dtype}")
        self.like, self.addresses, self.rows, self.sizes = like, addresses, rows, sizes
        self.missing, self.use_missing = _missing(missing, like.dtype)
        self._missing_cell = np.array([self.missing], like.dtype)     # read by address (addressed)
        self.entry, self._keep = entry, keep
        self._scanned = self._edges = None

    @property
    def dtype(self) -> np.dtype:
        return self.like.dtype

    def reader(self, lo=0, hi=None):
        """The arguments that read graphs ``lo .. hi - 1`` (convert.py's passes)."""
        part = slice(lo, hi)
        return (self.addresses[part], self.rows[part], self.sizes[part], self.like, self.missing,
                self.use_missing)

    def addressed(self, lo=0, hi=None):
        """:meth:`reader`'s arguments as the solve and the scan take them (kernels.solve_dense,
        kernels.scan_dense): the no-edge value by its address, the dtype left to the loader."""
        part = slice(lo, hi)
        return self.addresses[part], self.rows[part], self.sizes[part], self._missing_cell.ctypes.data, \
            self.use_missing

    def scan(self):
        """``(counts, low, high, whole)`` per graph (kernels.scan_dense, or convert.dense_scan for
        64-bit integers), once; refuses NaN and -inf."""
        if self._scanned is None:
            from .convert import dense_scan
            from .kernels import scan_dense
            from .steps import load_dense

            count, dtype = self.sizes.size, self.dtype
            # kernels.scan_dense where a wide dtype holds every entry besides its largest value:
            # float64, or signed integers twice the matrices' width (the fewer bytes, the more
            # entries a vector of the scan takes)
            fast = dtype.kind == "f" or dtype.itemsize < 8
            wide = np.dtype(np.float64 if dtype.kind == "f" else f"i{2 * dtype.itemsize}" if fast else dtype)
            info = None if wide.kind == "f" else np.iinfo(wide)
            top, bottom = (wide.type(np.inf), wide.type(-np.inf)) if info is None else (wide.type(info.max),
                                                                                      wide.type(info.min))
            counts, bad = np.empty(count, np.int64), np.empty(count, np.int64)
            low, high, whole = np.empty(count, wide), np.empty(count, wide), np.empty(count, bool)
            if fast:
                scan_dense(load_dense(wide, dtype), *self.addressed(), top, bottom, counts, bad, low, high, whole)
            else:
                dense_scan(*self.reader(), top, bottom, counts, bad, low, high, whole)
            self.refuse(bad)
            self._scanned = counts, low, high, whole
        return self._scanned

    def any_edge(self) -> bool:
        if self._scanned is not None:
            return bool(self._scanned[0].any())
        from .convert import any_dense_edge

        return bool(any_dense_edge(*self.reader()))

    def weight_stats(self, n, unweighted) -> WeightStats:
        """GraphBatch.weight_stats of the edges these matrices hold (n: the largest graph's)."""
        if unweighted:
            return WeightStats(n, 1, 1, True) if self.any_edge() else WeightStats(n, 0, 0, True)
        counts, low, high, whole = self.scan()
        has = counts > 0
        if not has.any():
            return WeightStats(n, 0, 0, True)
        integral = bool(whole[has].all())
        conv = int if integral else float
        return WeightStats(n, conv(low[has].min()), conv(high[has].max()), integral)

    def num_edges(self) -> int:
        return int(self.scan()[0].sum())

    def edges(self):
        """``(eptr, src, dst, weight)`` of every graph, made once (convert.dense_edges)."""
        if self._edges is None:
            from .convert import dense_edges

            counts = self.scan()[0]
            eptr = np.zeros(counts.size + 1, np.int64)
            np.cumsum(counts, out=eptr[1:])
            edges = int(eptr[-1])
            src, dst, weight = np.empty(edges, np.int32), np.empty(edges, np.int32), np.empty(edges, self.dtype)
            dense_edges(*self.reader(), eptr, src, dst, weight)
            self._edges = eptr, src, dst, weight
        return self._edges

    def refuse(self, bad, lo=0):
        """The error for the first graph with ``bad[g] >= 0`` (entry ``i * n + j`` of graph ``lo + g``), if any."""
        flagged = np.flatnonzero(bad >= 0)
        if not flagged.size:
            return
        g = lo + int(flagged[0])
        i, j = divmod(int(bad[g - lo]), int(self.sizes[g]))
        itemsize = self.dtype.itemsize
        raw = _entry_bytes(self.addresses[g], (i * int(self.rows[g]) + j) * itemsize, itemsize)
        value = float(np.frombuffer(raw, self.dtype)[0])
        raise FloydwarpError(f"graph {g}: {self.entry} [{i}, {j}] has weight {value}: weights must be finite numbers")


def _entry_bytes(address, offset, itemsize):
    """The bytes of one entry of a matrix read in place (for an error message)."""
    import ctypes

    return ctypes.string_at(int(address) + offset, itemsize)


def _missing(missing, dtype):
    """``(missing as a value of dtype, whether any entry can equal it)``: +inf and NaN need no
    second rule (+inf is absent anyway), nor a value an integer dtype cannot hold."""
    from ..graph.dense_arrays import missing_value

    value = missing_value(missing, dtype)
    return (dtype.type(0), False) if value is None else (value, True)
