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

from ..arrays import array_module, to_host
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

    def __init__(self, n: int, *, edges=None, dense=None, labels: Sequence[Any] | None = None):
        if (edges is None) == (dense is None):
            raise TypeError("Graph needs exactly one of edges= or dense=; use a Graph.from_* constructor")
        self.n = check_vertex_count(int(n))
        self._edges = edges          # (src, dst, weight) with duplicates and self-loops removed
        self._dense = dense          # (matrix, missing mask)
        self.labels = None if labels is None else list(labels)
        if self.labels is not None and len(self.labels) != self.n:
            raise FloydwarpError(f"{len(self.labels)} labels given for {self.n} vertices")
        self._stats = None

    # ------------------------------------------------------------------ constructors
    @classmethod
    def from_edges(cls, src, dst, weight=None, n: int | None = None, labels=None) -> "Graph":
        """Build a graph from parallel arrays of edge sources, targets and weights.

        ``weight`` defaults to 1 for every edge; ``n`` defaults to one more than
        the largest vertex id.
        """
        src = _as_index_array(src, "src")
        dst = _as_index_array(dst, "dst")
        if src.shape != dst.shape:
            raise FloydwarpError(f"src has {src.size} entries but dst has {dst.size}")
        w = np.ones(src.shape, dtype=np.int64) if weight is None else _as_weight_array(weight)
        if w.shape != src.shape:
            raise FloydwarpError(f"weight has {w.size} entries but src and dst have {src.size}")
        if n is None:
            n = int(max(src.max(initial=-1), dst.max(initial=-1))) + 1
        n = check_vertex_count(int(n))
        if n < 0:
            raise FloydwarpError(f"n must be >= 0, got {n}")
        for name, ids in (("src", src), ("dst", dst)):
            bad = np.flatnonzero((ids < 0) | (ids >= n))
            if bad.size:
                i = int(bad[0])
                raise FloydwarpError(
                    f"edge {i}: {name} vertex id {int(ids[i])} is out of range 0..{n - 1} "
                    f"({bad.size} edge(s) out of range)")
        _refuse_bad_weights(w, lambda i: f"edge {i} ({int(src[i])} -> {int(dst[i])})")
        return cls(n, edges=_dedupe_edges(n, src, dst, w), labels=labels)

    @classmethod
    def from_dense(cls, matrix, missing=np.inf, labels=None) -> "Graph":
        """Build a graph from an n x n weight matrix.

        Entries equal to ``missing`` (and ``+inf``) are "no edge"; every other
        entry is an edge, zeros included unless ``missing=0``.  The diagonal
        holds self-loops.  NumPy masked arrays treat masked entries as missing.
        CuPy arrays stay on the device.
        """
        if np.ma.isMaskedArray(matrix):
            mask = np.ma.getmaskarray(matrix)
            matrix = np.asarray(matrix.data)
        else:
            mask = None
            if not hasattr(matrix, "__array_namespace__") and not hasattr(matrix, "shape"):
                matrix = np.asarray(matrix)
        xp = array_module(matrix)
        matrix = xp.asarray(matrix)
        if matrix.ndim != 2 or matrix.shape[0] != matrix.shape[1]:
            raise FloydwarpError(f"a weight matrix must be square (n x n); got shape {tuple(matrix.shape)}")
        if matrix.dtype.kind not in "biuf":
            raise FloydwarpError(f"weight matrix has non-numeric dtype {matrix.dtype}")
        if matrix.dtype.kind == "b":
            matrix = matrix.astype(xp.int64)
        missing_mask = xp.zeros(matrix.shape, dtype=bool) if mask is None else xp.asarray(mask)
        if matrix.dtype.kind == "f":
            missing_mask = missing_mask | (matrix == xp.inf)
        if missing is not None and not (isinstance(missing, float) and np.isnan(missing)):
            missing_mask = missing_mask | (matrix == missing)
        _refuse_bad_weights(
            xp.where(missing_mask, 0, matrix),
            lambda i: f"matrix entry [{i // matrix.shape[0]}, {i % matrix.shape[0]}]")
        return cls(matrix.shape[0], dense=(matrix, missing_mask), labels=labels)

    @classmethod
    def from_scipy(cls, sparse, labels=None) -> "Graph":
        """Build a graph from a SciPy sparse matrix; explicit zeros are zero-weight edges."""
        import scipy.sparse as sp

        if not sp.issparse(sparse):
            raise FloydwarpError(f"from_scipy needs a SciPy sparse matrix, got {type(sparse).__name__}")
        if sparse.ndim != 2 or sparse.shape[0] != sparse.shape[1]:
            raise FloydwarpError(f"a sparse graph must be square (n x n); got shape {sparse.shape}")
        coo = sparse.tocoo()
        return cls.from_edges(coo.row, coo.col, coo.data, n=sparse.shape[0], labels=labels)

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
        matrix, missing = self._dense
        xp = array_module(matrix)
        off = ~missing
        diag = xp.diagonal(off) & (xp.diagonal(matrix) >= 0)
        return int(off.sum()) - int(diag.sum())

    def edges(self):
        """``(src, dst, weight)`` host arrays of the distinct edges."""
        if self._edges is not None:
            return self._edges
        matrix, missing = (to_host(a) for a in self._dense)
        src, dst = np.nonzero(~missing)
        w = matrix[src, dst]
        keep = (src != dst) | (w < 0)
        return src[keep], dst[keep], w[keep]

    def adjacency(self):
        """The edge structure as a SciPy CSR matrix of ones (for reachability)."""
        import scipy.sparse as sp

        src, dst, _ = self.edges()
        return sp.csr_matrix((np.ones(src.size, dtype=np.int8), (src, dst)), shape=(self.n, self.n))

    def weight_stats(self) -> WeightStats:
        """Smallest and largest weight and whether all weights are integers."""
        if self._stats is None:
            if self._edges is not None:
                w = self._edges[2]
                xp = np
            else:
                matrix, missing = self._dense
                xp = array_module(matrix)
                w = matrix[~missing]
            if w.size == 0:
                self._stats = WeightStats(self.n, 0, 0, True)
            else:
                integral = w.dtype.kind in "iu" or bool(xp.all(w == xp.floor(w)))
                lo, hi = w.min(), w.max()
                conv = int if integral else float
                self._stats = WeightStats(self.n, conv(lo), conv(hi), integral)
        return self._stats

    def to_matrix(self, dtype, inf=None, xp=None):
        """The initial Floyd-Warshall matrix: weights, INF for no edge, 0 (or a negative self-loop) on the diagonal."""
        return self.matrix_rows(0, self.n, dtype, inf, xp)

    def matrix_rows(self, lo: int, hi: int, dtype, inf=None, xp=None):
        """Rows lo..hi-1 of :meth:`to_matrix` without building the rest, so that a matrix
        larger than memory can be written out a band of rows at a time."""
        from ..numeric import cast_distances, inf_of

        dtype = np.dtype(dtype)
        inf = inf_of(dtype) if inf is None else inf
        rows = np.arange(lo, hi)
        if self._dense is not None:
            matrix, missing = self._dense
            mxp = array_module(matrix)
            xp = mxp if xp is None else xp
            band, gone = matrix[lo:hi], missing[lo:hi]
            # weights the dtype choice has checked; cast before inserting INF (a float64 round trip
            # would round int64's INF up past the overflow-safe value)
            out = xp.asarray(cast_distances(band, None, dtype, inf, unreachable=gone))
            r, c = xp.asarray(rows - lo), xp.asarray(rows)
            out[r, c] = xp.minimum(out[r, c], 0)
            return out
        xp = np if xp is None else xp
        out = xp.full((hi - lo, self.n), inf, dtype=dtype)
        out[xp.asarray(rows - lo), xp.asarray(rows)] = 0
        src, dst, w = self._edges_of_rows(lo, hi)
        # edges are distinct (no write conflicts); a negative self-loop overrides the 0
        out[xp.asarray(src - lo), xp.asarray(dst)] = xp.asarray(w).astype(dtype)
        return out

    def _edges_of_rows(self, lo, hi):
        """The edges leaving vertices lo..hi-1 (edges kept sorted by source for this)."""
        src, dst, w = self._edges
        if src.size and np.any(src[1:] < src[:-1]):
            order = np.argsort(src, kind="stable")
            self._edges = src, dst, w = src[order], dst[order], w[order]
        a, b = np.searchsorted(src, [lo, hi])
        return src[a:b], dst[a:b], w[a:b]

    def __repr__(self):
        return f"Graph(n={self.n}, edges={self.num_edges})"


# ---------------------------------------------------------------------- helpers
def _as_index_array(a, name):
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
    return arr.astype(np.int64)


def _as_weight_array(a):
    arr = np.asarray(a)
    if arr.dtype.kind == "b":
        arr = arr.astype(np.int64)
    if arr.dtype.kind not in "iuf":
        try:
            arr = arr.astype(np.float64)
        except (TypeError, ValueError) as exc:
            raise FloydwarpError(f"edge weights must be numbers; got dtype {arr.dtype}") from exc
    return arr.astype(np.int64) if arr.dtype.kind in "iu" else arr.astype(np.float64)


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


def _dedupe_edges(n, src, dst, w):
    """Keep the lightest of parallel edges; drop self-loops that cannot shorten anything."""
    keep = (src != dst) | (w < 0)
    src, dst, w = src[keep], dst[keep], w[keep]
    if src.size == 0:
        return src, dst, w
    key = src * n + dst
    order = np.argsort(key, kind="stable")
    key, src, dst, w = key[order], src[order], dst[order], w[order]
    starts = np.flatnonzero(np.r_[True, key[1:] != key[:-1]])
    return src[starts], dst[starts], np.minimum.reduceat(w, starts)
