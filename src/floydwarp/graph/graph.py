"""`Graph`: n vertices and weighted directed edges, normalized once.

A graph keeps the form it arrived in -- an edge list or a dense matrix -- so
that a dense input of a billion entries is never expanded into an edge list
and an edge list is never expanded before a solver asks for its matrix.
Either form answers the same questions: n, edge count, weight statistics,
and the initial Floyd-Warshall matrix in a given dtype.

Conventions, the same for every constructor:

* parallel edges keep the smallest weight;
* a negative self-loop is a negative cycle (it starts the diagonal below
  zero); a non-negative self-loop cannot shorten anything and is dropped;
* NaN weights, ``-inf`` weights, out-of-range vertex ids and non-square
  matrices are refused with a message that names them.
"""
from __future__ import annotations

import functools
import math
from typing import Any, Sequence

import numpy as np

from ..arrays import array_module, is_device_array, to_host
from ..cpu import team
from ..errors import FloydwarpError
from ..numeric import WeightStats


#: The most vertices a graph may have: predecessors are int32 vertex ids, and the n x n
#: result of more vertices, even in int16, has more bytes than a NumPy array can address
#: (2 n**2 > 2**63).  Readers check a file's declared size against it before allocating.
MAX_VERTICES = 2 ** 31 - 1


def check_vertex_count(n: int, where: str = "") -> int:
    """``n``, or a FloydwarpError (prefixed by ``where``) when no graph can have that many vertices."""
    if n > MAX_VERTICES:
        prefix = f"{where}: " if where else ""
        raise FloydwarpError(f"{prefix}{n} vertices is more than any all-pairs result can hold "
                             f"(at most {MAX_VERTICES}: predecessors are int32 and an n x n matrix "
                             f"needs 2 n**2 bytes even as int16)")
    return n


class Graph:
    """A weighted directed graph on vertices ``0 .. n-1`` (optionally labelled).

    Examples
    --------
    >>> import floydwarp as fw
    >>> g = fw.Graph.from_edges([0, 1, 1], [1, 2, 2], [4, 3, 1])
    >>> g.n, g.num_edges
    (3, 2)
    >>> g.to_matrix("int32").tolist()
    [[0, 4, 1073741823], [1073741823, 0, 1], [1073741823, 1073741823, 0]]
    """

    def __init__(self, n: int, *, edges=None, dense=None, missing=None, labels: Sequence[Any] | None = None):
        if (edges is None) == (dense is None):
            raise TypeError("Graph needs exactly one of edges= or dense=; use a Graph.from_* constructor")
        self.n = check_vertex_count(int(n))
        self._edges = edges          # (src, dst, weight) with duplicates and self-loops removed
        # (matrix, mask or None): an entry is absent where masked, equal to ``missing`` or +inf
        self._dense = dense
        self._missing = missing
        self.labels = None if labels is None else list(labels)
        if self.labels is not None and len(self.labels) != self.n:
            raise FloydwarpError(f"{len(self.labels)} labels given for {self.n} vertices")
        self._stats = None
        self._num_edges = None
        self._csr = {}
        self._sorted = False                    # edges known to be sorted by (source, target)

    # ------------------------------------------------------------------ constructors
    @classmethod
    def from_edges(cls, src, dst, weight=None, n: int | None = None, labels=None) -> "Graph":
        """Build a graph from parallel arrays of edge sources, targets and weights.

        ``weight`` defaults to 1 for every edge; ``n`` defaults to one more than
        the largest vertex id.
        """
        src = _index_input(src, "src")
        dst = _index_input(dst, "dst")
        if src.shape != dst.shape:
            raise FloydwarpError(f"src has {src.size} entries but dst has {dst.size}")
        w = np.ones(src.shape, dtype=np.int64) if weight is None else _weight_input(weight)
        if w.shape != src.shape:
            raise FloydwarpError(f"weight has {w.size} entries but src and dst have {src.size}")
        if n is None:
            n = int(max(src.max(initial=-1), dst.max(initial=-1))) + 1
        return cls._from_edge_arrays(n, src, dst, w, _new_edge_arrays(src.size, w.dtype), labels)

    @classmethod
    def _from_edge_arrays(cls, n, src, dst, w, out, labels=None) -> "Graph":
        """The graph of 1-D edge arrays of one length, ids of an integer type and weights the
        Numba passes read, converted into ``out`` = (int64 ids, int64 ids, int64 or float64
        weights) as they are checked: new arrays, or any of the input arrays where the graph
        may keep them."""
        n = check_vertex_count(int(n))
        if n < 0:
            raise FloydwarpError(f"n must be >= 0, got {n}")
        # ids, weights, self-loops, order and weight statistics in one pass (graph/kernels.py)
        m = src.size
        parts = team.run(numba_passes().edge_scan, m, src, dst, w, n, *out, threads=team.shares(m, m))
        (bad_src, bad_srcs, bad_dst, bad_dsts, bad_w, dropped, ordered, _, _, lo, hi, integral,
         kept) = parts[0] if len(parts) == 1 else _joined_edge_scans(parts)
        if bad_src >= 0 or bad_dst >= 0:
            for name, ids, i, count in (("src", src, bad_src, bad_srcs), ("dst", dst, bad_dst, bad_dsts)):
                if i >= 0:
                    raise FloydwarpError(
                        f"edge {i}: {name} vertex id {int(ids[i])} is out of range 0..{n - 1} "
                        f"({count} edge(s) out of range)")
        if bad_w >= 0:
            raise FloydwarpError(f"edge {bad_w} ({int(src[bad_w])} -> {int(dst[bad_w])}) has weight "
                                 f"{float(w[bad_w])}: weights must be finite numbers")
        edges = out
        if dropped:                             # the scan moved the kept edges to the front of each share
            edges = _kept_edges(parts, m, *edges)
        if ordered:                             # the scanned edges are the graph's: their statistics hold
            stats = _stats_of_kept(n, lo, hi, integral, kept)
        else:
            edges, stats = _sorted_lightest_edges(n, edges)
        graph = cls(n, edges=edges, labels=labels)
        graph._sorted, graph._stats = True, stats           # by (src, dst): in order already, or sorted
        return graph

    @classmethod
    def _from_generated(cls, n, edges, stats: WeightStats, by_source: bool) -> "Graph":
        """The graph of a generator's ``edges``: distinct, off the diagonal, int64 ids, int64 or
        float64 weights, whose statistics the generator kept (``stats``), so nothing is scanned
        again; ``by_source``: sorted by source already."""
        graph = cls(n, edges=edges)
        graph._stats, graph._sorted = stats, by_source
        return graph

    @classmethod
    def from_dense(cls, matrix, missing=np.inf, labels=None) -> "Graph":
        """Build a graph from an n x n weight matrix.

        Entries equal to ``missing`` (and ``+inf``) are "no edge"; every other
        entry is an edge, zeros included unless ``missing=0``.  The diagonal
        holds self-loops.  NumPy masked arrays treat masked entries as missing.
        CuPy arrays stay on the device.
        """
        mask, xp = None, np
        if type(matrix) is not np.ndarray:        # a plain NumPy array needs none of this
            if np.ma.isMaskedArray(matrix):
                mask = np.ma.getmaskarray(matrix)
                matrix = np.asarray(matrix.data)
            elif not hasattr(matrix, "__array_namespace__") and not hasattr(matrix, "shape"):
                matrix = np.asarray(matrix)
            xp = array_module(matrix)
            matrix = xp.asarray(matrix)
        if matrix.ndim != 2 or matrix.shape[0] != matrix.shape[1]:
            raise FloydwarpError(f"a weight matrix must be square (n x n); got shape {tuple(matrix.shape)}")
        if matrix.dtype.kind not in "biuf":
            raise FloydwarpError(f"weight matrix has non-numeric dtype {matrix.dtype}")
        if matrix.dtype.kind == "b":
            matrix = matrix.astype(xp.int64)
        elif xp is np and not numba_readable(matrix.dtype):
            matrix = matrix.astype(np.float64 if matrix.dtype.kind == "f" else np.int64)
        graph = cls(matrix.shape[0], dense=(matrix, mask), missing=missing_value(missing, matrix.dtype),
                    labels=labels)
        graph.weight_stats()            # one pass: refuses NaN and -inf, keeps the statistics
        return graph

    @classmethod
    def from_scipy(cls, sparse, labels=None) -> "Graph":
        """Build a graph from a SciPy sparse matrix; explicit zeros are zero-weight edges."""
        import scipy.sparse as sp

        if not sp.issparse(sparse):
            raise FloydwarpError(f"from_scipy needs a SciPy sparse matrix, got {type(sparse).__name__}")
        return cls._from_sparse(sparse, labels)

    @classmethod
    def _from_sparse(cls, sparse, labels=None) -> "Graph":
        """:meth:`from_scipy` of a matrix known to be a SciPy sparse one."""
        shape = sparse.shape
        if len(shape) != 2 or shape[0] != shape[1]:
            raise FloydwarpError(f"a sparse graph must be square (n x n); got shape {shape}")
        n = shape[0]
        # the stored entries as they are, read in one pass (tocoo() builds a new matrix: 20 us
        # of a small solve; NumPy's repeat of the row ids 3 us)
        fmt = sparse.format
        if fmt in ("csr", "csc"):
            indices = sparse.indices
            src, dst = np.empty(indices.size, np.int64), np.empty(indices.size, np.int64)
            m = numba_passes().compressed_pairs(sparse.indptr, indices, fmt == "csr", src, dst)
            if m < 0:
                raise FloydwarpError(f"malformed {fmt} matrix: its offsets do not rise from 0 to at most its "
                                     f"{indices.size} stored entries")
            data = sparse.data
            if m < indices.size:
                src, dst, data = src[:m], dst[:m], data[:m]
            own = (src, dst)                    # made here: the graph keeps them
        else:
            coo = sparse if fmt == "coo" else sparse.tocoo()
            src, dst, data = _index_input(coo.row, "row"), _index_input(coo.col, "col"), coo.data
            own = (np.empty(src.size, np.int64), np.empty(src.size, np.int64))
        w = _weight_input(data)
        if w.shape != src.shape:
            raise FloydwarpError(f"the sparse matrix holds {w.size} values for {src.size} stored entries")
        return cls._from_edge_arrays(n, src, dst, w, (*own, np.empty(w.size, _weight_dtype(w.dtype))), labels)

    @classmethod
    def from_networkx(cls, G, weight: str | None = "weight", nodelist=None, default_weight=1) -> "Graph":
        """Build a graph from a NetworkX graph; node labels are kept.

        Undirected graphs become both directions; multigraphs keep the lightest
        parallel edge; edges without the ``weight`` attribute weigh
        ``default_weight`` (``weight=None`` makes every edge weigh it).
        """
        nodes = list(G.nodes) if nodelist is None else list(nodelist)
        index = {v: i for i, v in enumerate(nodes)}
        if len(index) != len(nodes):
            raise FloydwarpError("nodelist contains duplicate nodes")
        src, dst, w = [], [], []
        for u, v, data in G.edges(data=True):
            if u not in index or v not in index:
                continue  # NetworkX semantics: nodelist selects a subgraph
            wt = default_weight if weight is None else data.get(weight, default_weight)
            src.append(index[u]); dst.append(index[v]); w.append(wt)
            if not G.is_directed():
                src.append(index[v]); dst.append(index[u]); w.append(wt)
        return cls.from_edges(np.asarray(src, dtype=np.int64), np.asarray(dst, dtype=np.int64),
                              np.asarray(w) if w else np.zeros(0), n=len(nodes), labels=nodes)

    # ------------------------------------------------------------------ queries
    @property
    def is_dense(self) -> bool:
        return self._dense is not None

    @property
    def num_edges(self) -> int:
        """Number of distinct edges (self-loops that cannot shorten anything excluded)."""
        if self._edges is not None:
            return int(self._edges[0].size)
        if self._num_edges is None:
            self.weight_stats()
        return self._num_edges

    def missing_mask(self, lo: int = 0, hi: int | None = None):
        """A dense graph's "no edge" mask (NumPy or CuPy, like its matrix), of rows lo..hi-1."""
        matrix, mask = self._dense
        matrix = matrix[lo:hi]
        xp = array_module(matrix)
        absent = xp.zeros(matrix.shape, dtype=bool) if mask is None else xp.array(mask[lo:hi], dtype=bool)
        if matrix.dtype.kind == "f":
            absent = absent | (matrix == xp.inf)
        if self._missing is not None:
            absent = absent | (matrix == self._missing)
        return absent

    def edges(self):
        """``(src, dst, weight)`` host arrays of the distinct edges."""
        if self._edges is not None:
            return self._edges
        matrix = to_host(self._dense[0])
        if numba_readable(matrix.dtype):          # one pass (graph/kernels.py), where NumPy makes seven
            m = self.num_edges
            src, dst, w = np.empty(m, np.int64), np.empty(m, np.int64), np.empty(m, matrix.dtype)
            numba_passes().dense_edges(matrix, *self._absent_rule(), src, dst, w)
            return src, dst, w
        missing = to_host(self.missing_mask())
        src, dst = np.nonzero(~missing)
        w = matrix[src, dst]
        keep = (src != dst) | (w < 0)
        return src[keep], dst[keep], w[keep]

    def csr(self, reverse: bool = False):
        """``(indptr, indices)``: every vertex's out-neighbours (``reverse``: in-neighbours) in
        ascending order, int64 offsets and int32 ids on the host -- the adjacency of the
        breadth-first engines (a vertex's neighbours ``indices[indptr[v]:indptr[v + 1]]``).
        Built once per graph and direction."""
        cache = self._csr
        if reverse not in cache:
            # sorted by (src, dst): a dense graph's edges come so
            src, dst, _ = self.edges() if self._edges is None else self._sorted_edges()
            keys, values = (dst, src) if reverse else (src, dst)
            indptr, indices = np.empty(self.n + 1, np.int64), np.empty(keys.size, np.int32)
            numba_passes().bucket_by(keys, values, indptr, indices)
            cache[reverse] = indptr, indices
        return cache[reverse]

    def adjacency(self):
        """The edge structure as a SciPy CSR matrix of ones (for reachability)."""
        import scipy.sparse as sp

        src, dst, _ = self.edges()
        return sp.csr_matrix((np.ones(src.size, dtype=np.int8), (src, dst)), shape=(self.n, self.n))

    def weight_stats(self) -> WeightStats:
        """Smallest and largest weight and whether all weights are integers."""
        if self._stats is None:
            if self._edges is not None:
                self._stats = _edge_stats(self.n, self._edges[2])
            elif is_device_array(self._dense[0]):
                self._stats, self._num_edges = self._device_stats()
            else:
                self._stats, self._num_edges = self._host_stats()
        return self._stats

    @classmethod
    def _from_scanned(cls, matrix, parts) -> "Graph":
        """The graph of a host float64 matrix with ``inf`` for no edge, written by a Numba
        pass that returned :func:`~floydwarp.graph.kernels.dense_scan`'s answers for it
        (``parts``, one per row range in order), so it is not read again."""
        graph = cls(matrix.shape[0], dense=(matrix, None), missing=None)
        graph._stats, graph._num_edges = graph._stats_of(parts)
        return graph

    def _host_stats(self):
        """Validation and statistics of a host matrix in one parallel pass (graph/kernels.py)."""
        matrix, n = self._dense[0], self.n
        return self._stats_of(team.run(numba_passes().dense_scan, n, matrix, *self._absent_rule(),
                                       threads=team.shares(n, n * n)))

    def _stats_of(self, parts):
        """(WeightStats, edge count) from dense_scan's answers, or the error for a bad entry."""
        matrix = self._dense[0]
        edges, present, lo, hi, integral, bad_i, bad_j = parts[0] if len(parts) == 1 else _joined_scans(parts)
        if bad_i >= 0:
            raise FloydwarpError(f"matrix entry [{bad_i}, {bad_j}] has weight {float(matrix[bad_i, bad_j])}: "
                                 f"weights must be finite numbers")
        if not present:
            return WeightStats(self.n, 0, 0, True), 0
        conv = int if integral else float
        return WeightStats(self.n, conv(lo), conv(hi), bool(integral)), int(edges)

    def _absent_rule(self):
        """The arguments after the matrix of the Numba passes: (mask, missing, use_missing)."""
        matrix, mask = self._dense
        mask = _NO_MASK if mask is None else np.asarray(mask, dtype=np.bool_)
        missing = self._missing
        return mask, matrix.dtype.type(0 if missing is None else missing), missing is not None

    def device_bands(self):
        """``(lo, hi)`` row bands of a device matrix whose temporaries (masks, casts: ~10 bytes
        an entry) stay near DEVICE_BAND_ENTRIES entries, so that a matrix of half the
        device's memory can still be read."""
        step = max(1, DEVICE_BAND_ENTRIES // max(self.n, 1))
        return [(lo, min(lo + step, self.n)) for lo in range(0, self.n, step)]

    def _device_stats(self):
        matrix, _ = self._dense
        xp = array_module(matrix)
        n = self.n
        low = high = None
        integral, edges = True, 0
        for lo, hi in self.device_bands():
            band, missing = matrix[lo:hi], self.missing_mask(lo, hi)
            _refuse_bad_weights(xp.where(missing, 0, band), lambda i, lo=lo: f"matrix entry [{lo + i // n}, {i % n}]")
            w = band[~missing]
            rows = xp.arange(hi - lo)
            diagonal = band[rows, rows + lo]
            edges += int(w.size) - int(((~missing[rows, rows + lo]) & (diagonal >= 0)).sum())   # less self-loops
            if w.size:
                integral = integral and (w.dtype.kind in "iu" or bool(xp.all(w == xp.floor(w))))
                low = w.min() if low is None else xp.minimum(low, w.min())
                high = w.max() if high is None else xp.maximum(high, w.max())
        if low is None:
            return WeightStats(n, 0, 0, True), 0
        conv = int if integral else float
        return WeightStats(n, conv(low), conv(high), integral), edges

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
        from ..numeric import cast_distances, inf_of

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
            out[r, c] = xp.minimum(out[r, c], 0)
            return out
        out = xp.full((hi - lo, self.n), inf, dtype=dtype)
        out[xp.asarray(rows - lo), xp.asarray(rows)] = 0
        src, dst, w = self._edges_of_rows(lo, hi)
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
        row0, col0 = _int64_vector(row0), _int64_vector(col0)
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

    def _sorted_edges(self):
        """The edges, sorted by (source, target) (kept sorted once sorted)."""
        if not self._sorted:
            src, dst, w = self._edges
            if not numba_passes().edges_in_order(src, dst, self.n):
                self._edges = _new_edge_arrays(src.size, w.dtype)
                _sort_edges(self.n, (src, dst, w), _new_edge_arrays(src.size, w.dtype), self._edges)
            self._sorted = True
        return self._edges

    def _edges_of_rows(self, lo, hi):
        """The edges leaving vertices lo..hi-1."""
        src, dst, w = self._sorted_edges()
        a, b = np.searchsorted(src, [lo, hi])
        return src[a:b], dst[a:b], w[a:b]

    def __repr__(self):
        return f"Graph(n={self.n}, edges={self.num_edges})"


# ---------------------------------------------------------------------- helpers
#: entries of a device matrix read at a time (Graph.device_bands)
DEVICE_BAND_ENTRIES = 1 << 27
#: the Numba passes' "no mask"
_NO_MASK = np.zeros((0, 0), np.bool_)
#: their "no predecessors"
_NO_PRED = np.zeros((0, 0, 0, 0), np.int32)


def _int64_vector(a) -> np.ndarray:
    """``a`` as an int64 NumPy array (itself when it is one already)."""
    return a if type(a) is np.ndarray and a.dtype == np.int64 else np.asarray(a, dtype=np.int64)


def _index_input(a, name):
    """Vertex ids as a 1-D array of an integer type the Numba passes read: the caller's array
    itself where it is one (the edge scan converts as it reads), else a new int64 array
    (integral floats, other byte orders)."""
    arr = np.asarray(a)
    if arr.ndim != 1:
        raise FloydwarpError(f"{name} must be a 1-D array of vertex ids; got shape {arr.shape}")
    if arr.size == 0:
        return arr.astype(np.int64)
    if arr.dtype.kind == "f":
        if not np.all(np.isfinite(arr)) or not np.all(arr == np.floor(arr)):
            i = int(np.flatnonzero(~np.isfinite(arr) | (arr != np.floor(arr)))[0])
            raise FloydwarpError(f"edge {i}: {name} vertex id {arr[i]!r} is not an integer")
    elif arr.dtype.kind not in "iu":
        raise FloydwarpError(f"{name} vertex ids must be integers; got dtype {arr.dtype}")
    return arr if arr.dtype.kind in "iu" and numba_readable(arr.dtype) else arr.astype(np.int64)


def _weight_input(a):
    """Edge weights as an array the Numba passes read: the caller's array itself where it is
    one, else a new int64 (booleans, other byte orders) or float64 array."""
    arr = np.asarray(a)
    if arr.dtype.kind in "iuf" and numba_readable(arr.dtype):
        return arr
    if arr.dtype.kind in "biu":
        return arr.astype(np.int64)
    try:
        return arr.astype(np.float64)
    except (TypeError, ValueError) as exc:
        raise FloydwarpError(f"edge weights must be numbers; got dtype {arr.dtype}") from exc


def _weight_dtype(dtype):
    """The type a graph keeps weights of ``dtype`` in: float64 for reals, else int64."""
    return np.dtype(np.float64 if dtype.kind == "f" else np.int64)


def _new_edge_arrays(m, weight_dtype):
    """New (src, dst, weight) arrays for m edges, as a graph keeps them."""
    return np.empty(m, np.int64), np.empty(m, np.int64), np.empty(m, _weight_dtype(weight_dtype))


@functools.cache
def numba_passes():
    from . import kernels

    return kernels


def numba_readable(dtype) -> bool:
    """True for the dtypes the Numba passes read as they are (not float16, not byte-swapped)."""
    return dtype.isnative and (dtype.kind in "iu" or dtype.char in "fd")


def missing_value(missing, dtype):
    """``missing`` as a value of the matrix dtype, or None when no entry can equal it
    (NaN, +inf -- absent anyway in floats --, or a value an integer dtype cannot hold)."""
    if missing is None:
        return None
    value = float(missing)
    if math.isnan(value) or value == math.inf:
        return None
    if dtype.kind in "iu":
        if math.isinf(value):
            return None
        info = np.iinfo(dtype)
        if not value.is_integer() or not info.min <= value <= info.max:
            return None
        return dtype.type(int(value))
    return dtype.type(missing)


def _joined_scans(parts):
    """One answer of dense_scan (graph/kernels.py) from those of consecutive row ranges: the
    first bad entry in row order, else the counts summed and the extremes of all."""
    edges, present, lo, hi, integral = 0, False, 0, 0, True
    for part_edges, part_present, a, b, whole, bad_i, bad_j in parts:
        if bad_i >= 0:
            return edges, present, lo, hi, integral, bad_i, bad_j
        edges += part_edges
        if part_present:
            lo, hi = (min(lo, a), max(hi, b)) if present else (a, b)
            present = True
        integral = integral and whole
    return edges, present, lo, hi, integral, -1, -1


def _joined_edge_scans(parts):
    """One answer of edge_scan (graph/kernels.py) from those of consecutive edge ranges."""
    bad_src = bad_dst = bad_w = -1
    bad_srcs = bad_dsts = dropped = 0
    ordered, kept, integral = True, False, True
    first_key = last_key = -1
    lo = hi = 0
    for p_bad_src, p_bad_srcs, p_bad_dst, p_bad_dsts, p_bad_w, p_dropped, p_ordered, p_first, p_last, p_lo, p_hi, \
            p_integral, p_kept in parts:
        bad_src = p_bad_src if bad_src < 0 else bad_src
        bad_dst = p_bad_dst if bad_dst < 0 else bad_dst
        bad_w = p_bad_w if bad_w < 0 else bad_w
        bad_srcs, bad_dsts, dropped = bad_srcs + p_bad_srcs, bad_dsts + p_bad_dsts, dropped + p_dropped
        ordered = ordered and p_ordered
        if p_kept:
            if kept:
                ordered = ordered and last_key < p_first
                lo, hi = min(lo, p_lo), max(hi, p_hi)
            else:
                first_key, lo, hi, kept = p_first, p_lo, p_hi, True
            last_key = p_last
            integral = integral and p_integral
    return (bad_src, bad_srcs, bad_dst, bad_dsts, bad_w, dropped, ordered, first_key, last_key, lo, hi, integral,
            kept)


def _edge_stats(n, w) -> WeightStats:
    if w.size == 0:
        return WeightStats(n, 0, 0, True)
    if w.dtype.kind in "iu":
        return WeightStats(n, int(w.min()), int(w.max()), True)
    lo, hi, integral = numba_passes().weight_scan(w)
    conv = int if integral else float
    return WeightStats(n, conv(lo), conv(hi), bool(integral))


def _refuse_bad_weights(w, where):
    """Refuse NaN and -inf (+inf is "no edge" only where a matrix says so)."""
    xp = array_module(w)
    if w.dtype.kind != "f":
        return
    bad = xp.isnan(w) | xp.isinf(w)
    if bool(bad.any()):
        flat = int(xp.flatnonzero(bad.ravel())[0])
        value = float(w.ravel()[flat])
        raise FloydwarpError(f"{where(flat)} has weight {value}: weights must be finite numbers")


def _kept_edges(parts, m, src, dst, w):
    """The edges edge_scan kept, from its answers for consecutive shares of the ``m`` edges
    (each share's kept edges lie at its front)."""
    if len(parts) == 1:
        kept = m - parts[0][5]
        return src[:kept], dst[:kept], w[:kept]
    bounds = team.share_bounds(m, len(parts))
    ranges = [(a, b - part[5]) for part, a, b in zip(parts, bounds, bounds[1:])]
    return tuple(np.concatenate([x[a:b] for a, b in ranges]) for x in (src, dst, w))


def _sorted_lightest_edges(n, edges):
    """The graph's edges and weight statistics from its own edge arrays in any order: sorted
    by (source, target) in place, then each run of parallel edges made one of the run's
    smallest weight, written into new arrays (the sort's scratch), both split over the cores."""
    m, kernels = edges[0].size, numba_passes()
    out = _new_edge_arrays(m, edges[2].dtype)
    _sort_edges(n, edges, out, edges)
    parts = team.shares(m, 2 * m)
    bounds = np.asarray(team.share_bounds(m, parts), np.int64)
    at = np.zeros(parts, np.int64)
    if parts > 1:                       # where each part's runs go: after those of the parts before
        team.run(kernels.run_starts, parts, edges[0], edges[1], bounds, at, threads=parts)
        at = np.cumsum(at) - at
    answers = [a for a in team.run(kernels.lightest_parallel_edges, parts, *edges, bounds, at, *out,
                                   threads=parts) if a[3]]          # the parts that wrote edges
    count = sum(a[3] for a in answers)
    stats = _stats_of_kept(n, min((a[0] for a in answers), default=0), max((a[1] for a in answers), default=0),
                           all(a[2] for a in answers), count > 0)
    return tuple(a[:count] for a in out), stats


def _stats_of_kept(n, lo, hi, integral, kept) -> WeightStats:
    """The statistics of the weights a pass kept: the smallest, the largest, whether all are
    integers (and nothing but n when none was kept)."""
    if not kept:
        return WeightStats(n, 0, 0, True)
    conv = int if integral else float
    return WeightStats(n, conv(lo), conv(hi), bool(integral))


def _sort_edges(n, edges, tmp, out):
    """``edges`` (src, dst, weight) sorted by (source, target) into ``out`` (which may be
    ``edges``), by two stable counting sorts, by target into ``tmp`` and then by source, each
    split over the cores in parts whose counts give each part its places: O(n + m), where
    NumPy's argsort of the keys and the gathers after it took 6x as long on 10.7 million
    edges (2-core box), 10x on 16 cores."""
    m, kernels = edges[0].size, numba_passes()
    parts = team.shares(m, 4 * m)
    counts = np.empty((parts, n), np.int64)
    if parts == 1:
        kernels.sort_edges_in_one_part(*edges, n, *tmp, *out, counts)
        return
    bounds = np.asarray(team.share_bounds(m, parts), np.int64)
    for keys, source, into in ((edges[1], edges, tmp), (tmp[0], tmp, out)):
        team.run(kernels.key_counts, parts, keys, bounds, counts, threads=parts)
        kernels.key_places(counts)
        team.run(kernels.scatter_by_key, parts, keys, bounds, counts, *source, *into, threads=parts)
