"""PyTorch Geometric: :class:`ShortestPathDistance`, a transform that adds all-pairs
shortest-path distances to a ``Data`` or a ``Batch`` (needs ``torch`` and
``torch_geometric``: ``pip install floydwarp[pyg]``).

Every graph of a ``Batch`` is solved at once by :func:`floydwarp.solve_batch`; tensors on a
GPU are read in place through DLPack, solved there, and the new tensors stay on that device.

Layouts (``layout=``):

``"pairs"`` (default)
    ``data.spd`` (P,) the distances of every ordered pair (i, j) of every graph, row by row,
    and ``data.spd_index`` (2, P) the pairs as node indices (P = the sum of n²).  The name
    holds "index", so ``Batch.from_data_list`` shifts it by each graph's node offset as it
    shifts ``edge_index``: transformed ``Data`` batch into exactly the transformed ``Batch``,
    and ``to_dense_adj(batch.spd_index, batch.batch, batch.spd)`` gives the (B, N, N) bias of
    a dense graph transformer.
``"dense"``
    ``data.spd`` (B, N, N) padded (B = 1 for a ``Data``), padding at ``unreachable``.

Distances are hop counts, or weighted by ``data[weight]`` when ``weight`` names an edge
attribute; integer distances come as ``torch.long`` with ``unreachable`` (default -1) for
unreachable pairs, real ones as ``torch.float`` with ``inf``.  ``max_distance`` clips
reachable distances (Graphormer's spatial encoding).  Options add ``spd_hops`` (the hop
count of every pair, next to weighted distances) and ``spd_path`` (the first ``paths``
edges of a shortest path of every pair as edge IDs, each graph's own numbering, -1
padding: (P, L) or (B, N, N, L)).
"""
from __future__ import annotations

import numpy as np

try:
    from torch_geometric.transforms import BaseTransform
except ImportError as exc:          # pragma: no cover - depends on the environment
    raise ImportError("floydwarp.pyg needs torch and torch_geometric: pip install floydwarp[pyg]") from exc

from .arrays import array_module
from .errors import FloydwarpError
from .learn.tensors import array_of, handed_back

LAYOUTS = ("pairs", "dense")


class ShortestPathDistance(BaseTransform):
    """Adds all-pairs shortest-path distances (and optionally hop counts and paths).

    Args:
        attr (str): name of the distance attribute (default ``"spd"``; the pairs are
            ``f"{attr}_index"``, the options ``f"{attr}_hops"`` and ``f"{attr}_path"``).
        layout (str): ``"pairs"`` or ``"dense"`` (see the module).
        weight (str, optional): an edge attribute holding weights (default: hop counts).
        max_distance (number, optional): reachable distances above it are stored as it.
        unreachable (number, optional): the value of unreachable pairs (default -1 for
            integer distances, ``inf`` for real ones).
        hops (bool): also add hop counts (with ``weight``).
        paths (int, optional): also add the first ``paths`` edges of a shortest path.

    >>> import torch
    >>> from torch_geometric.data import Data
    >>> from floydwarp.pyg import ShortestPathDistance
    >>> data = Data(edge_index=torch.tensor([[0, 1, 1, 2], [1, 0, 2, 1]]), num_nodes=4)
    >>> out = ShortestPathDistance(layout="dense")(data)
    >>> out.spd[0].tolist()
    [[0, 1, 2, -1], [1, 0, 1, -1], [2, 1, 0, -1], [-1, -1, -1, 0]]
    """

    def __init__(self, attr="spd", layout="pairs", weight=None, max_distance=None, unreachable=None, hops=False,
                 paths=None):
        if layout not in LAYOUTS:
            raise FloydwarpError(f"layout must be one of {', '.join(LAYOUTS)}; got {layout!r}")
        if paths is not None and (isinstance(paths, bool) or not isinstance(paths, int) or paths < 0):
            raise FloydwarpError(f"paths must be a non-negative number of edges; got {paths!r}")
        self.attr, self.layout, self.weight = attr, layout, weight
        self.max_distance, self.unreachable, self.hops, self.paths = max_distance, unreachable, hops, paths

    def __repr__(self) -> str:
        return f"{type(self).__name__}(attr={self.attr!r}, layout={self.layout!r}, weight={self.weight!r})"

    def forward(self, data):
        from .batch import GraphBatch, solve_batch

        edge_index = data.edge_index
        if edge_index is None:
            raise FloydwarpError("the data has no edge_index")
        ptr, node_graph = _graphs_of(data)
        weight = None
        if self.weight is not None:
            weight = getattr(data, self.weight, None)
            if weight is None:
                raise FloydwarpError(f"the data has no edge attribute {self.weight!r}")
        batch = GraphBatch.from_pyg(edge_index, weight, ptr=ptr, batch=node_graph,
                                    num_graphs=getattr(data, "num_graphs", None) if ptr is not None else None)
        want_paths = self.paths is not None
        r = solve_batch(batch, unweighted=weight is None, max_distance=self.max_distance, predecessors=want_paths)
        torch_out = True            # PyG holds tensors
        values, index = self._distances(r, _ptr_of(batch))
        if index is not None:
            setattr(data, f"{self.attr}_index", handed_back(index, torch_out))
        setattr(data, self.attr, handed_back(values, torch_out))
        if self.hops and weight is not None:
            hops, _ = self._distances(solve_batch(batch, unweighted=True))
            setattr(data, f"{self.attr}_hops", handed_back(hops, torch_out))
        if want_paths:
            setattr(data, f"{self.attr}_path", handed_back(self._paths(edge_index, ptr, node_graph, r), torch_out))
        return data

    # ------------------------------------------------------------------ pieces
    def _distances(self, r, ptr=None):
        """``(distances, pairs index or None)`` of a BatchResult in the layout asked for, as the
        output dtype, unreachable pairs (and the dense layout's padding) at the marker."""
        real = r.dtype.kind == "f"
        mark = self.unreachable if self.unreachable is not None else (np.inf if real else -1)
        dtype = np.dtype(np.float32 if real or not float(mark).is_integer() else np.int64)
        if self.layout == "dense":
            return _marked(r.dist, r.inf, mark, dtype), None
        return _gathered(r.dist, r.sizes, ptr, (r.inf, mark, dtype))

    def _laid_out(self, values, sizes):
        """``values`` (B, N, N, ...) in the layout asked for."""
        return values if self.layout == "dense" else _gathered(values, sizes)[0]

    def _paths(self, edge_index, ptr, node_graph, r):
        """The first ``paths`` edge IDs of each pair's path, on the input's device."""
        from .batch import GraphBatch
        from .learn.edge_paths import edge_paths
        from .learn.tensors import host

        ei = host(edge_index)
        ids = np.arange(ei.shape[1], dtype=np.int64)
        hb = GraphBatch.from_pyg(ei, ids, ptr=None if ptr is None else host(ptr),
                                 batch=None if node_graph is None else host(node_graph))
        pred = r.to_host().pred
        out = np.full(pred.shape + (self.paths,), -1, np.int64)
        edge_paths(hb.sizes, hb.eptr, hb.src, hb.dst, hb.weight, pred, out)
        out = array_module(r.dist).asarray(out)
        return self._laid_out(out, r.sizes)


def _ptr_of(batch):
    """The node offsets (B + 1,) of a GraphBatch, on its device."""
    xp = batch.xp
    ptr = xp.zeros(batch.count + 1, dtype=xp.int64)
    xp.cumsum(batch.sizes, out=ptr[1:])
    return ptr


def _graphs_of(data):
    """``(ptr, batch)``, one of them None: a Batch's ``ptr`` (else its ``batch`` vector), or
    one graph of ``num_nodes`` for a Data."""
    ptr = getattr(data, "ptr", None)
    if ptr is not None:
        return array_of(ptr), None
    node_graph = getattr(data, "batch", None)
    if node_graph is not None:
        return None, array_of(node_graph)
    xp = array_module(array_of(data.edge_index))
    return xp.asarray([0, int(data.num_nodes)], dtype=xp.int64), None


def _marked(values, inf, mark, dtype):
    """``values`` as ``dtype`` with ``mark`` where they reach ``inf`` (the INF marker)."""
    out = values.astype(dtype)
    out[values >= inf] = mark
    return out


def _gathered(values, sizes, ptr=None, marking=None):
    """``(pairs, index)``: every graph's n x n block of the padded ``values`` (B, N, N, ...),
    row by row, graph after graph, and (with ``ptr``) the (2, P) node indices of the pairs,
    graph offset + i and graph offset + j (index None without ``ptr``).  ``marking`` =
    ``(inf, mark, dtype)``: the pairs as ``dtype`` with ``mark`` where they reach ``inf``."""
    xp = array_module(values)
    sizes = np.asarray(sizes, dtype=np.int64)
    inf, mark, dtype = marking if marking is not None else (None, 0, values.dtype)
    if xp is np:
        from .learn.pairs import gather

        squares = sizes * sizes
        start = np.zeros(sizes.size, np.int64)
        np.cumsum(squares[:-1], out=start[1:])
        trailing = values.shape[3:]
        width = int(np.prod(trailing))
        pairs = np.empty((int(squares.sum()), width), dtype)
        index = np.empty((2, pairs.shape[0] if ptr is not None else 0), np.int64)
        gather(values.reshape(values.shape[:3] + (width,)), sizes, np.asarray(ptr if ptr is not None else sizes),
               start, pairs, index, inf is not None, values.dtype.type(0 if inf is None else inf), dtype.type(mark))
        return pairs.reshape((-1,) + trailing), (index if ptr is not None else None)
    r = xp.arange(values.shape[1])
    n = xp.asarray(sizes)[:, None, None]
    g, i, j = xp.nonzero((r[None, :, None] < n) & (r[None, None, :] < n))
    pairs = values[g, i, j] if inf is None else _marked(values[g, i, j], inf, mark, dtype)
    if ptr is None:
        return pairs, None
    first = xp.asarray(ptr)[g]
    return pairs, xp.stack([first + i, first + j])
