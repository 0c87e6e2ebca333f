"""`GraphBatch`: many small graphs as one edge list, checked once, on the host or the device.

Every input form becomes the same arrays (NumPy or CuPy, wherever the input lives):

``sizes``  (B,) vertices of each graph;
``eptr``   (B + 1,) graph g's edges are ``eptr[g] .. eptr[g + 1] - 1``;
``src``, ``dst``  (E,) int32 vertex ids *within* the graph;
``weight`` (E,) the weights as given (None: every edge weighs 1).

NumPy matrices (a list of them, a padded host array) stay matrices until something asks
for the edges: the CPU engine solves them where they lie (``dense``: batch/dense.py).

Conventions are :class:`floydwarp.Graph`'s: parallel edges keep the lightest, a negative
self-loop starts the diagonal below zero, a non-negative one changes nothing; NaN and
infinite weights are refused.  Errors name the graph and the edge (or entry).
"""
from __future__ import annotations

import numpy as np

from ..arrays import array_module, is_device_array, to_host
from ..dlpack import maybe_from_dlpack
from ..errors import FloydwarpError
from ..graph.edge_arrays import edge_stats, weight_input
from ..numeric import WeightStats
from .pyg_layout import (agreeing_batch, check_ptr, device_edges, edge_error, first, graph_of, host_edges, index_array,
                         ptr_of_batch)

#: the arrays a batch .npz file may hold (GraphBatch.load)
NPZ_KEYS = ("edge_index", "edge_weight", "ptr", "batch", "graphs", "sizes")
#: its two forms: PyG arrays, a padded array
NPZ_FORMS = (NPZ_KEYS[:4], NPZ_KEYS[4:])


class GraphBatch:
    """B graphs of up to a few hundred vertices each, as one edge list.

    Build one with :meth:`from_graphs`, :meth:`from_padded` or :meth:`from_pyg`, or let
    :func:`floydwarp.solve_batch` pick the constructor (:meth:`of`).

    >>> import numpy as np, floydwarp as fw
    >>> b = fw.GraphBatch.from_pyg(np.array([[0, 1, 2, 3], [1, 0, 3, 2]]), ptr=np.array([0, 2, 4, 5]))
    >>> b.count, b.sizes.tolist(), b.max_size
    (3, [2, 2, 1], 2)
    """

    def __init__(self, sizes, eptr, src, dst, weight=None, *, labels=None):
        self.sizes = sizes
        self._edges = eptr, src, dst, weight
        #: the host matrices the graphs are read from (batch/dense.py), or None: edges given
        self.dense = None
        #: per-graph vertex labels (lists of graphs only), else None
        self.labels = labels
        host = to_host(sizes)
        self._sizes_host = np.asarray(host, dtype=np.int64)

    @classmethod
    def _of_matrices(cls, source) -> "GraphBatch":
        """The batch of a DenseSource (its edges made when first asked for)."""
        batch = cls(source.sizes, None, None, None)
        batch._edges, batch.dense = None, source
        return batch

    def _checked(self) -> "GraphBatch":
        """This batch with every entry of its matrices checked now (the edge forms were on
        arrival).  Integer matrices hold no bad entry (NaN, -inf): their scan waits until the
        weights' statistics or the edges are asked for, and a hop-count solve needs neither."""
        if self.dense is not None and self.dense.dtype.kind == "f":
            self.dense.scan()
        return self

    # ------------------------------------------------------------------ the edges (made from matrices when asked)
    def _edge_arrays(self):
        if self._edges is None:
            self._edges = self.dense.edges()
        return self._edges

    eptr = property(lambda self: self._edge_arrays()[0])
    src = property(lambda self: self._edge_arrays()[1])
    dst = property(lambda self: self._edge_arrays()[2])
    weight = property(lambda self: self._edge_arrays()[3])

    # ------------------------------------------------------------------ facts
    @property
    def xp(self):
        return np if self.dense is not None else array_module(self.src)

    @property
    def on_device(self) -> bool:
        return self.dense is None and is_device_array(self.src)

    @property
    def count(self) -> int:
        return int(self._sizes_host.size)

    @property
    def host_sizes(self) -> np.ndarray:
        return self._sizes_host

    @property
    def max_size(self) -> int:
        return int(self._sizes_host.max(initial=0))

    @property
    def num_edges(self) -> int:
        return self.dense.num_edges() if self.dense is not None else int(self.src.size)

    def __len__(self):
        return self.count

    def __repr__(self):
        return f"GraphBatch({self.count} graphs, n <= {self.max_size}, {self.num_edges} edges)"

    def weight_stats(self, unweighted: bool = False) -> WeightStats:
        """One bound for every member: the largest graph's n with the batch's weights."""
        n = self.max_size
        if self.dense is not None:
            return self.dense.weight_stats(n, unweighted)
        if self.num_edges == 0:
            return WeightStats(n, 0, 0, True)
        if unweighted or self.weight is None:
            return WeightStats(n, 1, 1, True)
        w = self.weight
        xp = array_module(w)
        if xp is np:
            return edge_stats(n, w)
        integral = w.dtype.kind in "iu" or bool(xp.all(w == xp.floor(w)))
        conv = int if integral else float
        return WeightStats(n, conv(w.min()), conv(w.max()), integral)

    def graph(self, g: int, unweighted: bool = False):
        """Graph ``g`` as a :class:`floydwarp.Graph` (host arrays)."""
        from ..graph import Graph

        a, b = (int(x) for x in to_host(self.eptr[g:g + 2]))
        w = None if unweighted or self.weight is None else to_host(self.weight[a:b])
        labels = None if self.labels is None else self.labels[g]
        return Graph.from_edges(to_host(self.src[a:b]), to_host(self.dst[a:b]), w, n=int(self._sizes_host[g]),
                                labels=labels)

    def to(self, xp) -> "GraphBatch":
        """This batch with its arrays in ``xp`` (numpy or cupy)."""
        if xp is self.xp:
            return self
        move = (lambda a: to_host(a)) if xp is np else xp.asarray
        return GraphBatch(*(None if a is None else move(a) for a in
                            (self.sizes, self.eptr, self.src, self.dst, self.weight)), labels=self.labels)

    # ------------------------------------------------------------------ constructors
    @classmethod
    def of(cls, obj, *, sizes=None, edge_weight=None, weighted=True) -> "GraphBatch":
        """The batch for whatever :func:`floydwarp.solve_batch` was given: a GraphBatch, a
        PyG-style object (``edge_index`` and ``batch`` or ``ptr`` attributes), a batched DGL
        graph, a padded (B, N, N) array, or a list of anything :func:`floydwarp.solve` accepts.
        NumPy matrices are checked as they are read (by the solve, for hop counts), where
        :meth:`from_graphs` and :meth:`from_padded` check every entry of float matrices at once
        (integer ones hold no bad entry).
        ``weighted=False`` (hop counts) reads no weights: a list's sparse values and Graph
        weights, and a PyG or DGL batch's ``edge_weight``, are left out."""
        form = ("batch" if isinstance(obj, GraphBatch)
                else "DGL graph" if hasattr(obj, "batch_num_nodes") and hasattr(obj, "edges")
                else "PyG batch" if hasattr(obj, "edge_index")
                else "list" if isinstance(obj, (list, tuple))
                else "padded" if hasattr(obj, "shape") or hasattr(obj, "__dlpack__") else None)
        if form is None:
            raise FloydwarpError(
                f"cannot make a batch of graphs from {type(obj).__name__}; pass a list of graphs, a padded "
                "(B, N, N) array with sizes=, a GraphBatch, or an object with edge_index and batch or ptr")
        # an argument the form has no use for would be dropped without a word
        if sizes is not None and form != "padded":
            raise FloydwarpError(f"sizes= is for a padded (B, N, N) array; a {form} gives its graphs' sizes itself")
        if edge_weight is not None and form not in ("PyG batch", "DGL graph"):
            raise FloydwarpError(f"edge_weight= is for a PyG or DGL batch; a {form} gives its weights itself")
        if not weighted:
            edge_weight = None
        if form == "batch":
            return obj
        if form == "DGL graph":
            return cls.from_dgl(obj, edge_weight)
        if form == "PyG batch":
            if weighted and edge_weight is None:
                edge_weight = getattr(obj, "edge_weight", None)
            return cls.from_pyg(obj.edge_index, edge_weight, batch=getattr(obj, "batch", None),
                                ptr=getattr(obj, "ptr", None), num_graphs=getattr(obj, "num_graphs", None))
        # matrices are checked as the solve reads them (hop counts need no pass before it)
        if form == "list":
            return cls._listed(obj, np.inf, weighted)
        return cls._padded(obj, sizes, np.inf)

    @classmethod
    def load(cls, path) -> "GraphBatch":
        """A batch from a ``.npz`` file: PyG arrays (``edge_index``, ``ptr`` or ``batch``, optional
        ``edge_weight``) or a padded ``graphs`` (B, N, N) array with optional ``sizes``."""
        from ..io.npy import NPZ_ERRORS

        try:
            data = np.load(path, allow_pickle=False)
        except NPZ_ERRORS as exc:
            raise FloydwarpError(f"{path}: not a .npz file ({exc})") from exc
        if not isinstance(data, np.lib.npyio.NpzFile):          # a .npy file: one bare array
            raise FloydwarpError(f"{path}: not a .npz file (a single {type(data).__name__}); a batch file holds "
                                 f"named arrays: {', '.join(NPZ_KEYS)}")
        try:
            with data:
                arrays = {k: data[k] for k in data.files}
        except NPZ_ERRORS as exc:
            raise FloydwarpError(f"{path}: not a .npz file ({exc})") from exc
        unknown = sorted(set(arrays) - set(NPZ_KEYS))
        if unknown:      # a misspelt edge_weight would otherwise be read as no weights at all
            raise FloydwarpError(f"{path}: unknown array(s) {', '.join(unknown)} in a batch file; it holds "
                                 f"{', '.join(NPZ_KEYS)}")
        forms = [[k for k in keys if k in arrays] for keys in NPZ_FORMS]
        if all(forms):     # one form would be read and the other dropped without a word
            raise FloydwarpError(f"{path}: a batch file holds PyG arrays or a padded array, not both; this one "
                                 f"holds {', '.join(forms[0])} and {', '.join(forms[1])}")
        try:
            if "edge_index" in arrays:
                return cls.from_pyg(arrays["edge_index"], arrays.get("edge_weight"), batch=arrays.get("batch"),
                                    ptr=arrays.get("ptr"))
            if "graphs" in arrays:
                return cls.from_padded(arrays["graphs"], arrays.get("sizes"))
        except FloydwarpError as exc:
            raise FloydwarpError(f"{path}: {exc}") from None
        raise FloydwarpError(f"{path}: a batch file holds edge_index with ptr or batch (PyG), or graphs (B, N, N) "
                             f"with sizes; this one holds {', '.join(arrays) or 'nothing'}")

    @classmethod
    def from_graphs(cls, graphs, *, missing=np.inf) -> "GraphBatch":
        """A batch of anything :func:`floydwarp.solve` accepts (Graph, arrays, sparse, NetworkX);
        matrix entries equal to ``missing`` (and ``+inf``) are "no edge".  NumPy matrices of
        one dtype and SciPy CSR/CSC matrices are read without a Graph each (batch/lists.py)."""
        return cls._listed(graphs, missing)._checked()

    @classmethod
    def _listed(cls, graphs, missing, weighted=True) -> "GraphBatch":
        from .dense import DenseSource
        from .lists import from_list

        found = from_list(graphs, missing, weighted)
        if isinstance(found, DenseSource):
            return cls._of_matrices(found)
        sizes, eptr, src, dst, weight, labels = found
        return cls(sizes, eptr, src, dst, weight, labels=labels)

    @classmethod
    def from_padded(cls, array, sizes=None, *, missing=np.inf) -> "GraphBatch":
        """B weight matrices padded to (B, N, N); graph g is ``array[g, :sizes[g], :sizes[g]]``
        (``sizes`` default: N for every graph).  Entries equal to ``missing`` (and ``+inf``)
        are "no edge"; entries outside a graph's square are ignored."""
        return cls._padded(array, sizes, missing)._checked()

    @classmethod
    def _padded(cls, array, sizes, missing) -> "GraphBatch":
        a = maybe_from_dlpack(array)
        xp = array_module(a)
        a = xp.asarray(a)
        if a.ndim != 3 or a.shape[1] != a.shape[2]:
            raise FloydwarpError(f"a padded batch must have shape (B, N, N); got {tuple(a.shape)}")
        if a.dtype.kind not in "biuf":
            raise FloydwarpError(f"a padded batch has non-numeric dtype {a.dtype}")
        count, size = a.shape[0], a.shape[1]
        sizes = (xp.full(count, size, dtype=xp.int64) if sizes is None
                 else index_array(maybe_from_dlpack(sizes), "sizes", xp))
        if sizes.shape != (count,):
            raise FloydwarpError(f"sizes has {sizes.size} entries for a batch of {count} graphs")
        bad = first(xp, (sizes < 0) | (sizes > size))
        if bad is not None:
            raise FloydwarpError(f"graph {bad}: size {int(sizes[bad])} is out of range 0..{size} (the padded N)")
        if xp is np:
            from .lists import from_padded_host

            return cls._of_matrices(from_padded_host(a, sizes, missing))
        if a.dtype.kind == "b":
            a = a.astype(xp.int64)
        r = xp.arange(size)
        inside = (r[None, :, None] < sizes[:, None, None]) & (r[None, None, :] < sizes[:, None, None])
        edge = inside
        if a.dtype.kind == "f":
            nan = first(xp, (inside & (xp.isnan(a) | (a == -xp.inf))).ravel())
            if nan is not None:
                g, i, j = np.unravel_index(nan, a.shape)
                raise FloydwarpError(f"graph {g}: entry [{i}, {j}] has weight {float(a[g, i, j])}: "
                                     "weights must be finite numbers")
            edge = edge & (a != xp.inf)
        if missing is not None and not (isinstance(missing, float) and np.isnan(missing)):
            edge = edge & (a != missing)
        g, i, j = xp.nonzero(edge)
        eptr = xp.searchsorted(g, xp.arange(count + 1)).astype(xp.int64)
        return cls(sizes.astype(xp.int64), eptr, i.astype(xp.int32), j.astype(xp.int32), a[g, i, j])

    @classmethod
    def from_dgl(cls, graph, edge_weight=None) -> "GraphBatch":
        """A batched DGL graph (``dgl.batch(graphs)``): its ``edges()`` (global vertex ids, each
        graph's edges together), ``batch_num_nodes()`` and, for weights, ``edge_weight``: an
        array, or the name of an ``edata`` field.  Checked and converted as :meth:`from_pyg`."""
        edges = graph.edges()
        if not (isinstance(edges, (tuple, list)) and len(edges) == 2):
            raise FloydwarpError(f"a DGL graph's edges() must give (sources, targets); got {type(edges).__name__}")
        src, dst = (maybe_from_dlpack(a) for a in edges)
        xp = array_module(src)
        src, dst = xp.asarray(src), xp.asarray(dst)
        if src.shape != dst.shape:
            raise FloydwarpError(f"a DGL graph's edges() gave sources of shape {tuple(src.shape)} and targets of "
                                 f"shape {tuple(dst.shape)}")
        sizes = index_array(maybe_from_dlpack(graph.batch_num_nodes()), "batch_num_nodes", xp)
        if isinstance(edge_weight, str):
            if edge_weight not in graph.edata:
                raise FloydwarpError(f"edge_weight={edge_weight!r}: the graph has no such edata field (it has "
                                     f"{', '.join(map(repr, graph.edata.keys())) or 'none'})")
            edge_weight = graph.edata[edge_weight]
        ptr = xp.concatenate([xp.zeros(1, xp.int64), xp.cumsum(sizes)])
        return cls.from_pyg(xp.stack([src, dst]), edge_weight, ptr=ptr)

    @classmethod
    def from_pyg(cls, edge_index, edge_weight=None, *, batch=None, ptr=None, num_graphs=None) -> "GraphBatch":
        """The PyTorch Geometric / DGL layout: ``edge_index`` (2, E) of global vertex ids,
        optional ``edge_weight`` (E,), and either ``batch`` (each vertex's graph, sorted) or
        ``ptr`` (B + 1 offsets of each graph's first vertex).  NumPy, CuPy or any DLPack tensor
        (PyTorch, JAX); the batch stays on the device it arrived on."""
        ei = maybe_from_dlpack(edge_index)
        xp = array_module(ei)
        ei = xp.asarray(ei)
        if ei.ndim != 2 or ei.shape[0] != 2:
            raise FloydwarpError(f"edge_index must have shape (2, E); got {tuple(ei.shape)}")
        src, dst = index_array(ei[0], "edge_index", xp), index_array(ei[1], "edge_index", xp)
        if batch is None and ptr is None:
            raise FloydwarpError("give batch= (each vertex's graph) or ptr= (graph offsets), or both (PyG's Batch)")
        if ptr is not None:
            ptr = index_array(maybe_from_dlpack(ptr), "ptr", xp)
            check_ptr(xp, ptr, num_graphs)
            nodes = int(ptr[-1])
            node_graph = None if batch is None else agreeing_batch(xp, index_array(maybe_from_dlpack(batch),
                                                                                        "batch", xp), ptr)
        else:
            node_graph = index_array(maybe_from_dlpack(batch), "batch", xp)
            ptr = ptr_of_batch(xp, node_graph, num_graphs)
            nodes = int(node_graph.size)
        weight = None
        if edge_weight is not None:
            weight = xp.asarray(maybe_from_dlpack(edge_weight))
            if weight.ndim == 2 and weight.shape[1] == 1:
                weight = weight[:, 0]
            if weight.shape != src.shape:
                raise FloydwarpError(f"edge_weight has shape {tuple(weight.shape)} but edge_index has "
                                     f"{src.size} edges")
            if weight.dtype.kind == "b":
                weight = weight.astype(xp.int64)
            if weight.dtype.kind not in "iuf":
                raise FloydwarpError(f"edge_weight must be numbers; got dtype {weight.dtype}")
            if xp is np:            # float16 and other byte orders widened, as the kernels read them
                weight = weight_input(weight)
        if xp is np:
            local_src, local_dst, eptr, order, code, bad = host_edges(src, dst, ptr)
        else:
            local_src, local_dst, eptr, order, code, bad = device_edges(xp, src, dst, ptr, node_graph, nodes)
        if code:
            raise edge_error(code, bad, src, dst, ptr, nodes)
        if weight is not None and weight.dtype.kind == "f":
            bad = first(xp, ~xp.isfinite(weight))
            if bad is not None:
                u, v = int(src[bad]), int(dst[bad])
                g = graph_of(ptr, u)
                start = int(ptr[g])
                raise FloydwarpError(f"edge {bad} (graph {g}, {u - start} -> {v - start}) has weight "
                                     f"{float(weight[bad])}: weights must be finite numbers")
        if order is not None:
            weight = None if weight is None else weight[order]
        return cls(xp.diff(ptr), eptr, local_src, local_dst, weight)
