"""Drop-ins for Graphormer's preprocessing (``graphormer/data/algos.pyx``, ``wrapper.py`` and
``collator.py`` of microsoft/Graphormer): the same arrays, bit for bit, batched, on the CPU
or the GPU.

:func:`floyd_warshall` and :func:`gen_edge_input` return exactly what ``algos.floyd_warshall``
and ``algos.gen_edge_input`` return for one graph (int64 arrays; 510 for "unreachable" in
both the distances and the path matrix, -1 where no vertex lies between, -1 in the edge
input past a path's end).  :func:`shortest_paths` does the first for a whole batch at once,
and :func:`collate` produces the collator's shortest-path tensors for a batch straight from
its edges: ``spatial_pos`` (distance + 1, 0 padding), ``edge_input`` (the features of each
path's first ``multi_hop_max_dist`` edges + 1, 0 padding) and ``attn_bias`` (-inf where
the distance reaches ``spatial_pos_max`` and on padding columns).

Graphormer's rules, kept: the adjacency's non-zero entries are the edges and their weights
(a boolean adjacency: every edge weighs 1), the diagonal is ignored, anything 510 or
farther is 510.  Refused with a :class:`FloydwarpError` where Graphormer's code would do
something else than it means to: negative weights (its 510 for "no edge" would then be an
edge), non-integer adjacency dtypes (it casts with ``casting='safe'``), path matrices that
spell no path, and edge inputs longer than ``max_dist`` (IndexError there).  A graph of no
vertex gives empty arrays (Graphormer's code fails on it).

How the path matrix is computed, and why any exact run gives Graphormer's: graphormer_kernels.py.
"""
from __future__ import annotations

import math
import numbers

import numpy as np

from ..errors import FloydwarpError
from ..options import count
from .graphormer_kernels import UNREACHABLE
from .tensors import array_of, handed_back, host, is_torch

#: Graphormer's ``convert_to_single_emb`` offset between features
SINGLE_EMB_OFFSET = 512
#: the most vertices the uint16 rows take (pivot + 1 below 65535)
MAX_VERTICES = 65534


def floyd_warshall(adjacency_matrix):
    """``(M, path)``: exactly Graphormer's ``algos.floyd_warshall(adjacency_matrix)``.

    >>> import numpy as np
    >>> from floydwarp.learn import graphormer
    >>> adj = np.array([[0, 1, 0], [1, 0, 1], [0, 1, 0]], dtype=bool)
    >>> M, path = graphormer.floyd_warshall(adj)
    >>> M.tolist(), path.tolist()
    ([[0, 1, 2], [1, 0, 1], [2, 1, 0]], [[-1, -1, 1], [-1, -1, -1], [1, -1, -1]])
    """
    from ..batch.vectors import lanes
    from .graphormer_kernels import paths_serial

    adj = _adjacency(adjacency_matrix, 0)
    n = adj.shape[0]
    src, dst = np.nonzero(adj)
    w = adj[src, dst].astype(np.int64)
    if w.size and w.min() < 0:
        raise FloydwarpError(f"the adjacency matrix holds the weight {int(w.min())}: {_NON_NEGATIVE}")
    rows = _rows(n, weighted=bool((w != 1).any()))
    dist, path = np.empty((1, n, n), np.int64), np.empty((1, n, n), np.int64)
    paths_serial(np.array([n], np.int64), np.array([0, w.size], np.int64), src, dst, w, _inf(rows), lanes(rows),
                 dist, path, 0, UNREACHABLE, np.empty(1, np.int64))
    return dist[0], path[0]


def gen_edge_input(max_dist, path, edge_feat):
    """Exactly Graphormer's ``algos.gen_edge_input(max_dist, path, edge_feat)``: (n, n,
    max_dist, F) int64, entry [i, j, t] the features ``edge_feat[a, b]`` of the t-th edge
    (a, b) of the path i -> j that ``path`` spells, -1 elsewhere."""
    from .graphormer_kernels import edge_input

    path = _integers(host(path), "path")
    feat = _integers(host(edge_feat), "edge_feat")
    if path.ndim != 2 or path.shape[0] != path.shape[1]:
        raise FloydwarpError(f"path must be a square (n, n) matrix; got shape {path.shape}")
    n = path.shape[0]
    if feat.ndim < 2 or feat.shape[:2] != (n, n):
        raise FloydwarpError(f"edge_feat must have shape (n, n, F) for n = {n}; got {feat.shape}")
    limit = count(max_dist, "max_dist")
    # F spelled out: reshape's -1 cannot be inferred from n = 0 (the empty (0, 0, max_dist, F) result)
    feat = feat.reshape(n, n, math.prod(feat.shape[2:]))
    out = np.full((n, n, limit, feat.shape[2]), -1, dtype=np.int64)
    bad = np.empty(n, np.int64)
    edge_input(np.ascontiguousarray(path, dtype=np.int64), np.ascontiguousarray(feat, dtype=np.int64), out, bad)
    rows = np.flatnonzero(bad >= 0)
    if rows.size:
        i = int(rows[0])
        too_long, j = int(bad[i]) % 2, int(bad[i]) // 2
        if too_long:
            raise FloydwarpError(f"the path {i} -> {j} has more than max_dist = {limit} edges")
        raise FloydwarpError(f"path[{i}, {j}] does not spell a path: a pivot on it is not a vertex "
                             f"0..{n - 1}, or the pivots go round in a circle")
    return out


def shortest_paths(graphs, *, sizes=None, backend="auto"):
    """``(M, path, sizes)``: :func:`floyd_warshall` of every graph of a batch at once, as
    (B, N, N) int64 arrays padded with 510 (graph g is ``M[g, :sizes[g], :sizes[g]]``).

    ``graphs``: adjacency matrices (a list, or a padded (B, N, N) array with ``sizes``), or
    edges: a PyTorch Geometric ``Data``/``Batch`` (or any object with ``edge_index`` and
    ``ptr``/``batch``) or a list of ``Data``.  Tensors on a GPU stay there (``backend=
    "auto"``) and the results are tensors of the input's kind on its device."""
    work = _Work.of(graphs, sizes, backend)
    dist, path, _ = work.paths(shift=0, pad=UNREACHABLE, path_dtype=np.int64)
    return work.out(dist), work.out(path), work.sizes


def collate(graphs, *, edge_attr=None, multi_hop_max_dist=20, spatial_pos_max=20, single_embedding=True,
            backend="auto") -> dict:
    """The shortest-path tensors of Graphormer's ``collator`` for a batch, computed from its
    edges in one call (what ``preprocess_item`` per graph and the collator's padding build):

    ``spatial_pos`` (B, N, N) int64: distance + 1 (511 unreachable), 0 padding;
    ``edge_input`` (B, N, N, D, F) int64: for the t-th edge of the path i -> j (t < D =
    the smallest of ``multi_hop_max_dist`` and the batch's largest distance), its features
    + 1; 0 elsewhere (omitted when there are no edge features);
    ``attn_bias`` (B, N + 1, N + 1) float32: 0, with -inf where a distance reaches
    ``spatial_pos_max`` and on the padding columns.

    ``edge_attr`` (E, F) or (E,): integer edge features (default: ``graphs.edge_attr``);
    with ``single_embedding`` they go through Graphormer's ``convert_to_single_emb`` and
    ``+ 1`` first, as ``preprocess_item`` does.  Of parallel edges the last one listed gives
    the features.  ``graphs``: as :func:`shortest_paths` takes edges (adjacency matrices have
    no edge order to take features from)."""
    limit = count(multi_hop_max_dist, "multi_hop_max_dist")
    far = _real(spatial_pos_max, "spatial_pos_max")
    if not isinstance(single_embedding, (bool, np.bool_)):
        raise FloydwarpError(f"single_embedding must be True or False; got {single_embedding!r}")
    work = _Work.of(graphs, None, backend, edges_only=True)
    spatial, path, top = work.paths(shift=1, pad=0, path_dtype=np.int16 if work.size <= 32767 else np.int32)
    out = {"spatial_pos": work.out(spatial), "attn_bias": work.out(_attn_bias(work, spatial, far))}
    if edge_attr is None:
        edge_attr = _edge_attr_of(work.source)
    if edge_attr is not None:
        feat = _edge_features(edge_attr, work.batch, single_embedding)
        depth = min(limit, int(top.max())) if work.count else 0
        out["edge_input"] = work.out(work.edge_inputs(path, feat, depth))
    return out


def convert_to_single_emb(x, offset: int = SINGLE_EMB_OFFSET):
    """Graphormer's ``convert_to_single_emb``: feature f of every row shifted by ``1 + f *
    offset`` (int64)."""
    offset = count(offset, "offset")
    x = _integers(np.asarray(x), "edge_attr").astype(np.int64)
    if x.ndim not in (1, 2):
        raise FloydwarpError(f"convert_to_single_emb takes features of shape (E,) or (E, F); got {x.shape}")
    x = x[:, None] if x.ndim == 1 else x
    return x + (1 + np.arange(x.shape[1], dtype=np.int64) * offset)


# ---------------------------------------------------------------------- the batch
class _Work:
    """One batch for the kernels: its GraphBatch, where it runs, and how results go back."""

    def __init__(self, batch, source, weighted, torch_out, backend):
        self.batch, self.source, self.weighted, self.torch_out = batch, source, weighted, torch_out
        self.backend = backend
        self.sizes = batch.host_sizes.copy()
        self.count, self.size = batch.count, batch.max_size
        if self.size > MAX_VERTICES:
            raise FloydwarpError(f"graph {int(np.argmax(self.sizes))} has {self.size} vertices; Graphormer's "
                                 f"path matrix is computed for graphs of at most {MAX_VERTICES}")

    @classmethod
    def of(cls, graphs, sizes, backend, edges_only=False):
        from ..batch import GraphBatch
        from ..batch.engines import resolve

        torch_out = False
        edges = hasattr(graphs, "edge_index") or (isinstance(graphs, (list, tuple)) and graphs
                                                  and hasattr(graphs[0], "edge_index"))
        if sizes is not None and (edges or isinstance(graphs, (list, tuple))):     # else dropped without a word
            raise FloydwarpError("sizes= is for a padded (B, N, N) adjacency; a list or a PyG batch gives its "
                                 "graphs' sizes itself")
        if edges:
            batch, torch_out = _edge_batch(graphs)
            weighted = False
        elif edges_only:
            raise FloydwarpError("collate needs edges (a PyG Data/Batch or a list of Data): an adjacency matrix "
                                 "has no edge order to take edge features from")
        elif isinstance(graphs, (list, tuple)):
            batch = GraphBatch.from_graphs([_adjacency(a, g) for g, a in enumerate(graphs)], missing=0)
            weighted = True
        else:
            torch_out = is_torch(graphs)
            array = array_of(graphs)
            _adjacency_dtype(array.dtype, "the padded adjacency")
            batch = GraphBatch.from_padded(array, sizes, missing=0)
            weighted = True
        engine = resolve(backend, batch.on_device)
        if weighted:
            stats = batch.weight_stats()
            if stats.has_negative:
                raise FloydwarpError(f"an adjacency matrix holds the weight {stats.min_weight}: {_NON_NEGATIVE}")
            weighted = stats.max_weight != 1
        return cls(batch, graphs, weighted, torch_out, engine.name)

    def out(self, array):
        return handed_back(array, self.torch_out)

    def paths(self, *, shift, pad, path_dtype):
        """``(distances, path, top)``: :func:`graphormer_kernels.paths` (CPU) or the batch engine's
        last-pivot kernel (GPU, graphormer_gpu.py)."""
        if self.backend == "gpu":
            from .graphormer_gpu import paths

            return paths(self, shift, pad, path_dtype)
        from ..batch.vectors import lanes
        from .graphormer_kernels import paths

        batch = self.batch.to(np)
        rows = _rows(self.size, self.weighted)
        inf = _inf(rows)
        w = batch.weight.astype(np.int64) if self.weighted else None
        dist = np.empty((self.count, self.size, self.size), np.int64)
        path = np.empty((self.count, self.size, self.size), path_dtype)
        top = np.empty(self.count, np.int64)
        paths(batch.sizes, batch.eptr, batch.src, batch.dst, w, inf, lanes(rows), dist, path, shift, pad, top)
        return dist, path, top

    def edge_inputs(self, path, feat, depth):
        if self.backend == "gpu":
            from .graphormer_gpu import edge_inputs

            return edge_inputs(self, path, feat, depth)
        from .graphormer_kernels import edge_inputs

        batch = self.batch.to(np)
        out = np.zeros((self.count, self.size, self.size, depth, feat.shape[1]), np.int64)
        edge_inputs(batch.sizes, path, batch.eptr, batch.src, batch.dst, batch.weight.astype(np.int64), feat, 1, out)
        return out


def _rows(size, weighted):
    """The scratch rows' dtype: uint8 while every distance and pivot + 1 stays below 255."""
    return np.dtype(np.uint8 if not weighted and size <= 254 else np.uint16)


def _inf(rows):
    return rows.type(np.iinfo(rows).max)


_NON_NEGATIVE = "Graphormer's floyd_warshall takes non-negative weights (0 = no edge, 510 = unreachable)"


def _edge_batch(graphs):
    """The GraphBatch of PyG-style edges whose weights are the edges' own numbers (so the
    features can be found after the batch puts the edges in graph order)."""
    from ..batch import GraphBatch

    if isinstance(graphs, (list, tuple)):
        edge_index, ptr = _joined(graphs)
        torch_out = is_torch(graphs[0].edge_index)
    else:
        edge_index = _edge_index(array_of(graphs.edge_index), "edge_index")
        torch_out = is_torch(graphs.edge_index)
        ptr = getattr(graphs, "ptr", None)
        if ptr is None and getattr(graphs, "batch", None) is None:
            ptr = [0, _num_nodes(graphs, edge_index, "num_nodes")]          # one graph (a Data)
    xp = np if isinstance(edge_index, np.ndarray) else __import__("cupy")
    ids = xp.arange(edge_index.shape[1], dtype=xp.int64)
    batch = GraphBatch.from_pyg(edge_index, ids, ptr=None if ptr is None else array_of(ptr),
                                batch=None if ptr is not None else array_of(graphs.batch))
    return batch, torch_out


def _joined(data_list):
    """``(edge_index, ptr)`` of a list of PyG ``Data``: what ``Batch.from_data_list`` builds."""
    parts = [_edge_index(host(d.edge_index), f"graph {g}'s edge_index") for g, d in enumerate(data_list)]
    counts = np.fromiter((_num_nodes(d, e, f"graph {g}'s num_nodes") for g, (d, e) in enumerate(zip(data_list, parts))),
                         np.int64, len(parts))
    ptr = np.zeros(len(parts) + 1, np.int64)
    np.cumsum(counts, out=ptr[1:])
    if not parts:
        return np.zeros((2, 0), np.int64), ptr
    edges = np.fromiter((e.shape[1] for e in parts), np.int64, len(parts))
    return np.concatenate(parts, axis=1) + np.repeat(ptr[:-1], edges), ptr


def _edge_attr_of(graphs):
    """The ``edge_attr`` of a PyG object, or of every Data of a list joined; None if any lacks it.
    Each graph's rows must be its own edges' (the joined total alone would let a surplus in one
    graph fill a shortfall in the next) and of one shape past them, as ``Batch.from_data_list``
    concatenates them."""
    if not isinstance(graphs, (list, tuple)):
        return getattr(graphs, "edge_attr", None)
    attrs = [getattr(d, "edge_attr", None) for d in graphs]
    if not attrs or any(a is None for a in attrs):
        return None
    attrs = [host(a) for a in attrs]
    for g, (d, a) in enumerate(zip(graphs, attrs)):
        edges = d.edge_index.shape[1]          # (2, E): checked as the batch was made
        if a.ndim not in (1, 2) or a.shape[0] != edges:
            raise FloydwarpError(f"graph {g}'s edge_attr must have shape (E,) or (E, F) for its {edges} edges; "
                                 f"got {a.shape}")
        if a.shape[1:] != attrs[0].shape[1:]:
            raise FloydwarpError(f"graph {g}'s edge_attr has shape {a.shape} but graph 0's has {attrs[0].shape}: "
                                 "every graph's must have the same shape past its edges")
    return np.concatenate(attrs)


def _edge_index(edge_index, what):
    """``edge_index`` if it is (2, E) of integers: nothing else is reshaped into one."""
    if edge_index.ndim != 2 or edge_index.shape[0] != 2:
        raise FloydwarpError(f"{what} must have shape (2, E); got {tuple(edge_index.shape)}")
    if edge_index.dtype.kind not in "iu" and edge_index.size:          # an empty one may be float (torch's default)
        raise FloydwarpError(f"{what} must hold integers; got dtype {edge_index.dtype}")
    return edge_index


def _num_nodes(data, edge_index, what) -> int:
    n = getattr(data, "num_nodes", None)
    if n is None:
        return int(host(edge_index).max()) + 1 if edge_index.size else 0
    return count(n, what)


def _adjacency(a, g):
    """Graph g's adjacency as a NumPy matrix of a dtype Graphormer's safe cast to int64 takes."""
    a = host(a)
    _adjacency_dtype(a.dtype, f"graph {g}'s adjacency")
    if a.ndim != 2 or a.shape[0] != a.shape[1]:
        raise FloydwarpError(f"graph {g}: an adjacency matrix must be square (n x n); got shape {a.shape}")
    return a


def _adjacency_dtype(dtype, what):
    if not (dtype.kind in "biu" and np.can_cast(dtype, np.int64, "safe")):
        raise FloydwarpError(f"{what} has dtype {dtype}: Graphormer casts it to int64 with casting='safe', which "
                             "takes booleans and integers of up to 32 unsigned or 64 signed bits")


def _integers(a, what):
    if not (a.dtype.kind in "biu" and np.can_cast(a.dtype, np.int64, "safe")):
        raise FloydwarpError(f"{what} has dtype {a.dtype}: Graphormer casts it to int64 with casting='safe'")
    return a


def _real(value, what) -> float:
    """A real-number option as a float: NaN and infinities included (Graphormer compares with
    them as given: spatial_pos_max = NaN or inf masks nothing), bools and non-numbers refused.
    A float compares exactly as the integer would with distances below 2**53."""
    value = value[()] if isinstance(value, np.ndarray) and value.ndim == 0 else value
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise FloydwarpError(f"{what} must be a real number; got {value!r}")
    return float(value)


def _edge_features(edge_attr, batch, single_embedding):
    """(E, F) int64 features, in the caller's edge order."""
    attr = host(edge_attr)
    if attr.ndim not in (1, 2) or attr.shape[0] != batch.num_edges:
        raise FloydwarpError(f"edge_attr must have shape (E,) or (E, F) for the batch's {batch.num_edges} edges; got "
                             f"{attr.shape}")
    if single_embedding:
        return convert_to_single_emb(attr) + 1
    attr = _integers(attr, "edge_attr").astype(np.int64)
    return attr[:, None] if attr.ndim == 1 else np.ascontiguousarray(attr)


def _attn_bias(work, spatial, spatial_pos_max):
    """The collator's ``attn_bias``, from ``spatial_pos`` (distance + 1, 0 padding)."""
    if isinstance(spatial, np.ndarray):
        from .graphormer_kernels import attn_bias

        out = np.empty((work.count, work.size + 1, work.size + 1), np.float32)
        attn_bias(work.sizes, spatial, spatial_pos_max, out)
        return out
    import cupy as cp

    sizes = cp.asarray(work.sizes)
    real = cp.arange(work.size + 1)[None, None, :] < (sizes + 1)[:, None, None]
    bias = cp.broadcast_to(cp.where(real, cp.float32(0), cp.float32(-cp.inf)),
                           (work.count, work.size + 1, work.size + 1)).copy()
    bias[:, 1:, 1:][(spatial > 0) & (spatial - 1 >= spatial_pos_max)] = -cp.inf
    return bias
