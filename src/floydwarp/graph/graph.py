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

from typing import Any, Sequence

import numpy as np

from .. import team
from ..arrays import array_module, is_device_array, to_host
from ..errors import FloydwarpError
from ..numeric import WeightStats
from ..options import count
from .dense_arrays import NO_MASK, missing_value, refuse_bad_weights, scanned_stats
from .edge_arrays import (attribute_weights, compressed_index, edge_passes, edge_stats, index_input, new_edge_arrays,
                          numba_passes, numba_readable, scan_edges, sort_edges, weight_dtype, weight_input)
from .start import StartMatrix


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


class Graph(StartMatrix):
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

    def __init__(self, n: int, *, edges=None, dense=None, missing=None, labels: Sequence[Any] | None = None,
                 sorted: bool = False, stats: WeightStats | None = None, num_edges: int | None = None):
        """The graph of ``edges`` = (src, dst, weight) as it keeps them (distinct, off the diagonal
        but for negative self-loops, int64 ids, int64 or float64 weights -- or, drawn on the GPU,
        CuPy arrays of int32 ids and int64 weights; ``sorted``: by (source, target)) or of
        ``dense`` = (matrix, mask or None), an entry absent where masked, equal to ``missing`` or
        +inf.  ``stats`` (and a dense graph's ``num_edges``), when known, are not computed again.
        Nothing is checked here: use a ``Graph.from_*`` constructor."""
        if (edges is None) == (dense is None):
            raise TypeError("Graph needs exactly one of edges= or dense=; use a Graph.from_* constructor")
        self.n = check_vertex_count(int(n))
        self._edges = edges
        self._device_edges = None               # the edges drawn on the GPU (device_edges)
        if edges is not None and is_device_array(edges[0]):     # on the host only when asked for
            self._edges, self._device_edges = None, edges
            num_edges = int(edges[0].size)
        self._dense = dense
        self._missing = missing
        self._labels = None if labels is None else labels if isinstance(labels, range) else list(labels)
        if self._labels is not None and len(self._labels) != self.n:
            raise FloydwarpError(f"{len(self._labels)} labels given for {self.n} vertices")
        if self._labels is not None and not isinstance(self._labels, range):
            _refuse_repeated(self._labels)
        self._stats = stats
        self._num_edges = num_edges
        self._csr = {}
        self._sorted = sorted                   # edges known to be sorted by (source, target)

    # ------------------------------------------------------------------ constructors
    @classmethod
    def from_edges(cls, src, dst, weight=None, n: int | None = None, labels=None, *, sorted: bool = False,
                   stats: WeightStats | None = None) -> "Graph":
        """Build a graph from parallel arrays of edge sources, targets and weights.

        ``weight`` defaults to 1 for every edge; ``n`` defaults to one more than
        the largest vertex id.

        ``stats`` is for code that made the edges itself (the generators): with it the arrays
        are the graph's as they are -- distinct, off the diagonal but for negative self-loops,
        int64 ids in ``0 .. n-1``, int64 or float64 weights, whose statistics ``stats`` holds --
        and no pass reads them; ``sorted=True`` says they are also in (source, target) order.
        Without ``stats`` every edge is checked, and the edges sorted, here.
        """
        if stats is not None:
            return cls._of_own_edges(src, dst, weight, n, labels, sorted, stats)
        if sorted:
            raise TypeError("sorted=True describes edges given with their stats= (without, they are sorted here)")
        src = index_input(src, "src")
        dst = index_input(dst, "dst")
        if src.shape != dst.shape:
            raise FloydwarpError(f"src has {src.size} entries but dst has {dst.size}")
        w = np.ones(src.shape, dtype=np.int64) if weight is None else weight_input(weight)
        if w.shape != src.shape:
            raise FloydwarpError(f"weight has {w.size} entries but src and dst have {src.size}")
        # one more than the largest id (``initial=-1`` overflowed unsigned ids); int() would take 2.5 or "3"
        n = max((int(a.max()) + 1 for a in (src, dst) if a.size), default=0) if n is None else count(n, "n")
        return cls._of_scanned_edges(n, src, dst, w, new_edge_arrays(src.size, w.dtype), labels)

    @classmethod
    def _of_scanned_edges(cls, n, src, dst, w, out, labels=None) -> "Graph":
        """The graph of checked edge arrays (:func:`~floydwarp.graph.edge_arrays.scan_edges`
        into ``out``)."""
        n = check_vertex_count(int(n))
        if n < 0:
            raise FloydwarpError(f"n must be >= 0, got {n}")
        edges, stats = scan_edges(n, src, dst, w, out)
        return cls(n, edges=edges, labels=labels, sorted=True, stats=stats)   # by (src, dst): in order, or sorted

    @classmethod
    def _of_own_edges(cls, src, dst, weight, n, labels, sorted, stats) -> "Graph":
        """:meth:`from_edges` of edges in the graph's own form (``stats`` given): only their
        types, lengths and ``n`` are checked, in O(1).  CuPy arrays (int32 ids, int64 weights:
        ``generate.erdos_renyi(device=True)``) stay on the device."""
        on_device = is_device_array(src)
        edges = (src, dst, weight) if on_device else tuple(np.asarray(a) for a in (src, dst, weight))
        ids, weights = ((np.int32,), (np.int64,)) if on_device else ((np.int64,), (np.int64, np.float64))
        if edges[0].dtype not in ids or edges[1].dtype not in ids or edges[2].dtype not in weights \
                or not edges[0].shape == edges[1].shape == edges[2].shape or edges[0].ndim != 1 or n is None:
            raise TypeError("edges given with stats= are int64 src and dst and int64 or float64 weights of one "
                            "length (on a GPU: int32 ids, int64 weights), with n")
        return cls(n, edges=edges, labels=labels, sorted=sorted, stats=stats)

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
                try:
                    matrix = np.asarray(matrix)
                except ValueError as exc:           # ragged nested lists
                    raise FloydwarpError(f"a weight matrix must be an n x n array of numbers ({exc})") from None
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
        shape = sparse.shape
        if len(shape) != 2 or shape[0] != shape[1]:
            raise FloydwarpError(f"a sparse graph must be square (n x n); got shape {shape}")
        n = shape[0]
        # the stored entries as they are, read in one pass (tocoo() builds a new matrix: 20 us
        # of a small solve; NumPy's repeat of the row ids 3 us)
        fmt = sparse.format
        if fmt in ("csr", "csc"):
            indptr, indices = (compressed_index(getattr(sparse, part), part, fmt) for part in ("indptr", "indices"))
            if indptr.size != n + 1:            # else rows were read as others' or dropped without a word
                raise FloydwarpError(f"malformed {fmt} matrix: its indptr has {indptr.size} entries for "
                                     f"{n} {'rows' if fmt == 'csr' else 'columns'} (n + 1 = {n + 1})")
            src, dst = np.empty(indices.size, np.int64), np.empty(indices.size, np.int64)
            m = numba_passes().compressed_pairs(indptr, indices, fmt == "csr", src, dst)
            if m < 0:
                raise FloydwarpError(f"malformed {fmt} matrix: its offsets do not rise from 0 to at most its "
                                     f"{indices.size} stored entries")
            data = sparse.data
            if m < indices.size:
                src, dst, data = src[:m], dst[:m], data[:m]
            own = (src, dst)                    # made here: the graph keeps them
        else:
            coo = sparse if fmt == "coo" else sparse.tocoo()
            src, dst, data = index_input(coo.row, "row"), index_input(coo.col, "col"), coo.data
            own = (np.empty(src.size, np.int64), np.empty(src.size, np.int64))
        w = weight_input(data)
        if w.shape != src.shape:
            raise FloydwarpError(f"the sparse matrix holds {w.size} values for {src.size} stored entries")
        return cls._of_scanned_edges(n, src, dst, w, (*own, np.empty(w.size, weight_dtype(w.dtype))), labels)

    @classmethod
    def from_networkx(cls, G, weight: str | None = "weight", nodelist=None, default_weight=1) -> "Graph":
        """Build a graph from a NetworkX graph; node labels are kept.

        Undirected graphs become both directions; multigraphs keep the lightest
        parallel edge; edges without the ``weight`` attribute weigh
        ``default_weight`` (``weight=None`` makes every edge weigh it).
        """
        if not all(hasattr(G, name) for name in ("nodes", "edges", "is_directed")):
            raise FloydwarpError(f"from_networkx needs a NetworkX graph, got {type(G).__name__}")
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
        return cls.from_edges(np.asarray(src, dtype=np.int64), np.asarray(dst, dtype=np.int64), attribute_weights(w),
                              n=len(nodes), labels=nodes)

    # ------------------------------------------------------------------ queries
    @property
    def labels(self) -> list | None:
        """The vertices' labels, a list (None: the vertices are 0 .. n-1).  Labels given as a
        ``range`` (a DIMACS file's ids 1..n) become the list on first use: a file header's n
        costs nothing before a run's size checks refuse it (``p sp 1000000000 0`` ran out of memory)."""
        if isinstance(self._labels, range):
            self._labels = list(self._labels)
        return self._labels

    @property
    def is_dense(self) -> bool:
        return self._dense is not None

    @property
    def dense(self):
        """A dense graph's weight matrix as it was given (NumPy -- a read-only view -- or CuPy),
        or None for an edge list.  Which entries are no edge: :meth:`missing_mask`."""
        if self._dense is None:
            return None
        matrix = self._dense[0]
        if type(matrix) is not np.ndarray:
            return matrix
        view = matrix.view()
        view.flags.writeable = False
        return view

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
        if self._edges is None and self._device_edges is not None:
            self._edges = tuple(to_host(a).astype(np.int64, copy=False) for a in self._device_edges)
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

    def device_edges(self):
        """The edges as CuPy arrays (int32 ids, int64 weights) of a graph drawn on the GPU
        (``generate.erdos_renyi(device=True)``), else None: a GPU solve builds its start matrix
        from them, with nothing copied from the host."""
        return self._device_edges

    def csr(self, reverse: bool = False):
        """``(indptr, indices)``: every vertex's out-neighbours (``reverse``: in-neighbours) in
        ascending order, int64 offsets and int32 ids on the host -- the adjacency of the
        breadth-first engines (a vertex's neighbours ``indices[indptr[v]:indptr[v + 1]]``).
        Built once per graph and direction."""
        cache = self._csr
        if reverse not in cache:
            # sorted by (src, dst): a dense graph's edges come so
            src, dst, _ = self.edges() if self._dense is not None else self._sorted_edges()
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
                self._stats = edge_stats(self.n, self._edges[2])
            elif is_device_array(self._dense[0]):
                self._stats, self._num_edges = self._device_stats()
            else:
                self._stats, self._num_edges = self._host_stats()
        return self._stats

    @classmethod
    def from_scanned(cls, matrix, scans) -> "Graph":
        """The graph of a host float64 matrix (``inf``: no edge) that a pass of graph/kernels.py
        wrote and checked as it went (floyd_warshall's reader): ``scans`` are the pass's
        :func:`~floydwarp.graph.kernels.dense_scan` answers, one per row range in order, which
        hold the weights' statistics and edge count, so the matrix is not read again."""
        stats, count = scanned_stats(matrix, scans)
        return cls(matrix.shape[0], dense=(matrix, None), missing=None, stats=stats, num_edges=count)

    def _host_stats(self):
        """Validation and statistics of a host matrix in one parallel pass (graph/kernels.py)."""
        matrix, n = self._dense[0], self.n
        return scanned_stats(matrix, team.run(numba_passes().dense_scan, n, matrix, *self._absent_rule(),
                                               threads=team.shares(n, n * n)))

    def _absent_rule(self):
        """The arguments after the matrix of the Numba passes: (mask, missing, use_missing)."""
        matrix, mask = self._dense
        mask = NO_MASK if mask is None else np.asarray(mask, dtype=np.bool_)
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
            refuse_bad_weights(xp.where(missing, 0, band), lambda i, lo=lo: f"matrix entry [{lo + i // n}, {i % n}]")
            kept = ~missing
            rows = xp.arange(hi - lo)
            kept[rows, rows + lo] &= band[rows, rows + lo] < 0        # dropped self-loops: no edge, no weight
            w = band[kept]
            edges += int(w.size)
            if w.size:
                integral = integral and (w.dtype.kind in "iu" or bool(xp.all(w == xp.floor(w))))
                low = w.min() if low is None else xp.minimum(low, w.min())
                high = w.max() if high is None else xp.maximum(high, w.max())
        if low is None:
            return WeightStats(n, 0, 0, True), 0
        conv = int if integral else float
        return WeightStats(n, conv(low), conv(high), integral), edges

    def _sorted_edges(self):
        """The edges, sorted by (source, target) (kept sorted once sorted; a GPU-drawn graph's
        come to the host here, in order already)."""
        edges = self.edges()
        if self._sorted:
            return edges
        src, dst, w = edges
        if not edge_passes().edges_in_order(src, dst, self.n):
            edges = new_edge_arrays(src.size, w.dtype)
            sort_edges(self.n, (src, dst, w), new_edge_arrays(src.size, w.dtype), edges)
        self._edges, self._sorted = edges, True
        return edges

    def edges_of_rows(self, lo, hi):
        """The edges leaving vertices lo..hi-1, sorted by (source, target) (the graph keeps its
        edges sorted once asked)."""
        src, dst, w = self._sorted_edges()
        a, b = np.searchsorted(src, [lo, hi])
        return src[a:b], dst[a:b], w[a:b]

    def __repr__(self):
        return f"Graph(n={self.n}, edges={self.num_edges})"


#: entries of a device matrix read at a time (Graph.device_bands)
DEVICE_BAND_ENTRIES = 1 << 27


def _refuse_repeated(labels):
    """Labels name vertices: a repeated one would name only one of its vertices, and an
    unhashable one none (a Result looks them up in a dict)."""
    first = {}
    for i, label in enumerate(labels):
        try:
            j = first.setdefault(label, i)
        except TypeError:
            raise FloydwarpError(f"label {label!r} (vertex {i}) cannot name a vertex: labels must be "
                                 "hashable") from None
        if j != i:
            raise FloydwarpError(f"label {label!r} names vertices {j} and {i}: labels must be distinct")
