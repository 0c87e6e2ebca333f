"""PyTorch Geometric's batch layout read and checked (GraphBatch.from_pyg, from_dgl and
from_padded's sizes): ``edge_index`` of global vertex ids with ``ptr`` (each graph's first
vertex) or ``batch`` (each vertex's graph) made each graph's own edges, in graph order, on
the host (one parallel pass) or the device (whole-array CuPy operations).  Errors name the
edge and the graphs it joins.
"""
from __future__ import annotations

import numpy as np

from ..arrays import to_host
from ..errors import FloydwarpError
from ..options import count

#: edges a thread checks and converts at a time (kernels.pyg_edges)
EDGE_CHUNK = 1 << 16


def host_edges(src, dst, ptr):
    """``(local source, local target, eptr, order, error code, first bad edge)`` of a host PyG
    batch: one parallel pass (kernels.pyg_edges) checks and converts the edges and, when they
    come grouped by graph as PyG stores them, finds each graph's first edge; otherwise the
    edges are put in graph order (``order``: the permutation, for the weights).  Codes 1/2:
    source/target out of range, 3: an edge across graphs."""
    from .kernels import pyg_edges     # Numba

    local_src, local_dst, eptr, code, bad, grouped = pyg_edges(src, dst, ptr, EDGE_CHUNK)
    if code or grouped:
        return local_src, local_dst, eptr, None, code, bad
    graph = np.searchsorted(ptr, src, side="right") - 1
    order = np.argsort(graph, kind="stable")
    eptr = np.searchsorted(graph[order], np.arange(ptr.size)).astype(np.int64)
    return local_src[order], local_dst[order], eptr, order, 0, -1


def device_edges(xp, src, dst, ptr, node_graph, nodes):
    """:func:`host_edges` for device arrays, in whole-array CuPy operations."""
    for code, ids in ((1, src), (2, dst)):
        bad = first(xp, (ids < 0) | (ids >= nodes))
        if bad is not None:
            return None, None, None, None, code, bad
    find = (lambda v: node_graph[v]) if node_graph is not None else \
        (lambda v: xp.searchsorted(ptr, v, side="right") - 1)
    eg = find(src)
    bad = first(xp, eg != find(dst))
    if bad is not None:
        return None, None, None, None, 3, bad
    start = ptr[eg]
    local_src, local_dst = (src - start).astype(xp.int32), (dst - start).astype(xp.int32)
    order = None
    if eg.size > 1 and bool((eg[1:] < eg[:-1]).any()):
        order = xp.argsort(eg)
        eg, local_src, local_dst = eg[order], local_src[order], local_dst[order]
    eptr = xp.searchsorted(eg, xp.arange(ptr.size)).astype(xp.int64)
    return local_src, local_dst, eptr, order, 0, -1


def graph_of(ptr, vertex) -> int:
    """The graph that holds ``vertex`` (the last one starting at or before it)."""
    return int(np.searchsorted(np.asarray(to_host(ptr)), vertex, side="right")) - 1


def edge_error(code, bad, src, dst, ptr, nodes) -> FloydwarpError:
    """The message for edge ``bad`` of a PyG batch, by the code of :func:`host_edges`."""
    bad = int(bad)
    u, v = int(src[bad]), int(dst[bad])
    if code in (1, 2):
        name, w = ("source", u) if code == 1 else ("target", v)
        return FloydwarpError(f"edge {bad} ({u} -> {v}): {name} vertex {w} is out of range 0..{nodes - 1} "
                              f"(the batch has {nodes} vertices)")
    host = np.asarray(to_host(ptr))
    gu, gv = graph_of(host, u), graph_of(host, v)
    return FloydwarpError(f"edge {bad} ({u} -> {v}) is out of range for its graph: vertex {u} is in graph {gu} "
                          f"(vertices {int(host[gu])}..{int(host[gu + 1]) - 1}) but vertex {v} is in graph {gv}")


def first(xp, mask):
    """The first index where ``mask`` holds, or None (one device sync)."""
    if mask.size == 0 or not bool(mask.any()):
        return None
    return int(xp.argmax(mask))


def index_array(a, name, xp):
    """``a`` as a 1-D int64 array of ``xp``; its kind is checked before the move (CuPy has no
    text arrays to refuse)."""
    a = a if hasattr(a, "dtype") else np.asarray(a)
    if a.ndim != 1:
        raise FloydwarpError(f"{name} must be a 1-D array of integers; got shape {tuple(a.shape)}")
    if a.dtype.kind not in "iu" and a.size:
        raise FloydwarpError(f"{name} must hold integers; got dtype {a.dtype}")
    return xp.asarray(a).astype(xp.int64, copy=False)


def check_ptr(xp, ptr, num_graphs):
    if ptr.size == 0 or int(ptr[0]) != 0:
        raise FloydwarpError("ptr must start at 0 (ptr[g] is graph g's first vertex; B + 1 entries)")
    bad = first(xp, ptr[1:] < ptr[:-1])
    if bad is not None:
        raise FloydwarpError(f"ptr is not sorted: ptr[{bad + 1}] = {int(ptr[bad + 1])} is below "
                             f"ptr[{bad}] = {int(ptr[bad])} (graph {bad} would have a negative size)")
    if num_graphs is not None and count(num_graphs, "num_graphs") != ptr.size - 1:
        raise FloydwarpError(f"num_graphs = {num_graphs} but ptr describes {ptr.size - 1} graphs")


def agreeing_batch(xp, node_graph, ptr):
    """``batch`` given beside ``ptr`` (PyG's collate sets both): it must put every vertex in the
    graph ``ptr`` does."""
    nodes = int(ptr[-1])
    if node_graph.size != nodes:
        raise FloydwarpError(f"batch and ptr disagree: batch has {node_graph.size} vertices, ptr[-1] = {nodes}")
    owner = xp.searchsorted(ptr, xp.arange(nodes), side="right") - 1       # the last graph starting at or before
    bad = first(xp, owner != node_graph)
    if bad is not None:
        raise FloydwarpError(f"batch and ptr disagree: batch[{bad}] = {int(node_graph[bad])} but ptr puts vertex "
                             f"{bad} in graph {int(owner[bad])}")
    return node_graph


def ptr_of_batch(xp, node_graph, num_graphs):
    """Graph offsets from ``batch`` (each vertex's graph), which must be sorted."""
    bad = first(xp, node_graph < 0)
    if bad is not None:
        raise FloydwarpError(f"batch[{bad}] = {int(node_graph[bad])}: graph numbers must be >= 0")
    bad = first(xp, node_graph[1:] < node_graph[:-1])
    if bad is not None:
        raise FloydwarpError(f"batch is not sorted: vertex {bad + 1} is in graph {int(node_graph[bad + 1])} "
                             f"but vertex {bad} before it is in graph {int(node_graph[bad])}")
    last = int(node_graph[-1]) + 1 if node_graph.size else 0
    graphs = last if num_graphs is None else count(num_graphs, "num_graphs")
    if graphs < last:
        raise FloydwarpError(f"num_graphs = {graphs} but batch names graph {last - 1}")
    return xp.searchsorted(node_graph, xp.arange(graphs + 1)).astype(xp.int64)
