"""A drop-in for ``dgl.shortest_dist`` (DGL itself is not needed), and its batched form.

:func:`shortest_dist` takes what ``dgl.shortest_dist(g, root=None, return_paths=False)``
takes -- any graph object with ``edges()`` (source and target tensors; an edge's position
is its ID) and ``num_nodes()`` -- and returns what it returns: int64 hop counts (directed,
unweighted), -1 where unreachable; with ``return_paths``, the paths as edge IDs, (N, N, L)
(or (N, L) from ``root``), L the longest distance, padded with -1.  Tensors in, tensors
out on the graph's device (computed on the host, as DGL computes them); NumPy in, NumPy
out.

Where several shortest paths exist DGL returns the one SciPy's ``shortest_path`` finds
(Dijkstra's search on sparse graphs, whose ties follow its heap); this returns the one
Floyd-Warshall in the textbook order finds, as SciPy's ``floyd_warshall`` does.  Of
parallel edges the path names the smallest ID.

:func:`shortest_dist_batch` does the same for every graph of a batched graph
(``dgl.batch(graphs)``: ``batch_num_nodes()``) at once, padded: (B, N, N) and
(B, N, N, L), every graph's edge IDs its own (as after ``dgl.unbatch``).
"""
from __future__ import annotations

import numpy as np

from ..errors import FloydwarpError
from ..options import count
from .tensors import handed_back, host, is_torch


def shortest_dist(g, root=None, return_paths=False):
    """``dgl.shortest_dist(g, root, return_paths)``.

    >>> import numpy as np
    >>> from floydwarp.learn.dgl import shortest_dist
    >>> class G:                       # the two calls DGL's graph answers
    ...     def edges(self): return np.array([0, 1, 1, 2]), np.array([2, 0, 3, 3])
    ...     def num_nodes(self): return 4
    >>> shortest_dist(G(), root=0).tolist()
    [0, -1, 1, 2]
    >>> dist, paths = shortest_dist(G(), return_paths=True)
    >>> dist.tolist()[1], paths.tolist()[1]
    ([1, 0, 2, 1], [[1, -1], [-1, -1], [1, 0], [2, -1]])
    """
    src, dst = g.edges()
    n = count(g.num_nodes(), "num_nodes()")
    if root is not None and not (isinstance(root, (int, np.integer)) and not isinstance(root, bool) and 0 <= root < n):
        raise FloydwarpError(f"root must be a node ID 0..{n - 1}; got {root!r}")
    dist, paths = _solve(src, dst, [0, n], return_paths)
    dist, paths = dist[0], None if paths is None else paths[0]
    if root is not None:
        dist = dist[root]
        if paths is not None:
            paths = paths[root, :, :int(dist.max(initial=0))]
    if paths is None:
        return _out(dist, g, src)
    return _out(dist, g, src), _out(np.ascontiguousarray(paths), g, src)


def shortest_dist_batch(g, return_paths=False):
    """:func:`shortest_dist` of every graph of a batched graph: ``dist`` (B, N, N) int64
    (-1 unreachable and padding) and with ``return_paths`` ``paths`` (B, N, N, L), L the
    batch's longest distance."""
    src, dst = g.edges()
    counts = _counts(host(g.batch_num_nodes()))
    ptr = np.zeros(counts.size + 1, np.int64)
    np.cumsum(counts, out=ptr[1:])
    dist, paths = _solve(src, dst, ptr, return_paths)
    if paths is None:
        return _out(dist, g, src)
    return _out(dist, g, src), _out(paths, g, src)


def _counts(counts):
    """``batch_num_nodes()`` as int64, refused unless 1-D non-negative integers (a cast would
    truncate 2.5 to 2, parse strings and flatten a 2-D array)."""
    if counts.ndim != 1 or (counts.dtype.kind not in "iu" and counts.size):      # torch's empty default is float
        raise FloydwarpError(f"batch_num_nodes() must be a 1-D array of integers; got shape {counts.shape}, "
                             f"dtype {counts.dtype}")
    if counts.size and counts.min() < 0:
        g = int(np.argmin(counts))
        raise FloydwarpError(f"batch_num_nodes() must be non-negative; graph {g} has {counts[g]}")
    return counts.astype(np.int64)


def _out(array, g, src):
    """A host result as DGL returns it: a tensor on the graph's device for torch edges."""
    if not is_torch(src):
        return array
    return handed_back(array, True).to(getattr(g, "device", src.device))


def _solve(src, dst, ptr, return_paths):
    """``(dist (B, N, N) int64 with -1, paths (B, N, N, L) or None)`` on the host."""
    from ..batch import GraphBatch, solve_batch

    src, dst = host(src), host(dst)
    if src.shape != dst.shape or src.ndim != 1:
        raise FloydwarpError(f"edges() must give two 1-D arrays of one length; got {src.shape} and {dst.shape}")
    ids = np.arange(src.size, dtype=np.int64)
    batch = GraphBatch.from_pyg(np.stack([src, dst]), ids, ptr=np.asarray(ptr, dtype=np.int64))
    r = solve_batch(batch, unweighted=True, predecessors=return_paths, backend="cpu")
    dist = r.dist.astype(np.int64)
    dist[r.dist >= r.inf] = -1
    if not return_paths:
        return dist, None
    from .edge_paths import edge_paths

    longest = int(dist.max(initial=0))
    paths = np.full(dist.shape + (longest,), -1, np.int64)
    edge_paths(batch.sizes, batch.eptr, batch.src, batch.dst, batch.weight, r.pred, paths)
    return dist, paths
