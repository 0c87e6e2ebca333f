"""The start matrix built on the device from an edge list (kernels/start.cu): only the
edges cross the bus, compacted (uint16 vertex ids up to 65536 vertices, else int32;
weights in the distance dtype), cast chunk by chunk into pinned buffers by worker threads
while earlier chunks are in flight (``staging.upload_columns``).  One GPU builds its whole
padded matrix; each process of the multi-GPU engines builds its own block.  A dense input is
uploaded into :func:`matrix`, the start matrix without edges (its padding then needs nothing
more).  The predecessors of a start matrix are seeded here too (:func:`seed_predecessors`), by
the same module."""
from __future__ import annotations

import numpy as np

from ..predecessors import NO_PREDECESSOR
from . import modules, staging
from .panel import pitched

_THREADS = 256
#: C++ types of the vertex ids the edges travel in
_INDEX_CTYPES = {"uint16": "unsigned short", "int32": "int"}


def index_dtype(n: int) -> np.dtype:
    """The vertex id type the edges travel in."""
    return np.dtype(np.uint16) if n <= 65536 else np.dtype(np.int32)


def _group(dtype) -> tuple:
    ct = modules.ctype(dtype)
    return (modules.name_expression("fw_fill", dtype), modules.name_expression("fw_seed_predecessors", dtype),
            *(_scatter(ct, i, ct) for i in _INDEX_CTYPES.values()), _scatter(ct, "int", "long long"))


def _scatter(ctype: str, index: str, weight: str) -> str:
    return f"fw_scatter<{ctype}, {index}, {weight}>"


def matrix(rows: int, pitch: int, dtype, inf, origin=(0, 0)):
    """A ``rows`` x ``pitch`` CuPy matrix: the block at ``origin = (r0, c0)`` of a start
    matrix without edges, INF with 0 on the global diagonal (padding included), in one
    kernel (CuPy's ``full`` and a fancy-indexed diagonal compiled three kernels of their
    own where its disk cache is cold, outside the ``compile`` clock)."""
    import cupy as cp

    dtype = np.dtype(dtype)
    r0, c0 = (int(o) for o in origin)
    d = cp.empty((rows, pitch), dtype=dtype)
    if rows == 0 or pitch == 0:
        return d
    group = _group(dtype)
    fill = modules.kernel("start.cu", group[0], group)
    fill(modules.strided_grid(rows, pitch, _THREADS), (_THREADS,),
         (d, np.int64(pitch), np.int32(rows), np.int64(r0), np.int64(c0), dtype.type(inf)))
    return d


def from_edges(edges, n: int, rows: int, pitch: int, dtype, inf, origin=(0, 0)):
    """A ``rows`` x ``pitch`` CuPy matrix: the block at ``origin = (r0, c0)`` of the
    (padded) start matrix of the n vertices' ``edges = (src, dst, w)`` (distinct edges; host
    arrays of any integer and number types): their weights, INF elsewhere, 0 on the
    global diagonal."""
    d = matrix(rows, pitch, dtype, inf, origin)
    if rows and pitch and len(edges[0]):
        scatter(d, upload_edges(edges, n, d.dtype), origin)
    return d


def upload_edges(edges, n: int, dtype):
    """The host ``edges = (src, dst, w)`` in GPU memory as :func:`scatter` reads them: ids in
    :func:`index_dtype` (n), weights in ``dtype``, in one buffer."""
    import cupy as cp

    dtype, idx_t = np.dtype(dtype), index_dtype(n)
    src, dst, w = edges
    m = len(src)
    o1 = -(-m * idx_t.itemsize // 16) * 16
    o2 = 2 * o1
    buf = cp.empty(o2 + m * dtype.itemsize, dtype=np.uint8)
    if m:
        base = buf.data.ptr
        staging.upload_columns([(base, src, idx_t), (base + o1, dst, idx_t), (base + o2, w, dtype)])
    return buf[:o1].view(idx_t)[:m], buf[o1:o2].view(idx_t)[:m], buf[o2:].view(dtype)


def from_device_edges(edges, n: int, rows: int, pitch: int, dtype, inf, origin=(0, 0)):
    """:func:`from_edges` of edges in GPU memory (``Graph.device_edges``: int32 ids, int64
    weights, which the dtype choice has checked): nothing crosses the bus."""
    d = matrix(rows, pitch, dtype, inf, origin)
    if rows and pitch:
        scatter(d, edges, origin)
    return d


def scatter(d, edges, origin=(0, 0)) -> None:
    """Write the weights of ``edges = (src, dst, w)`` (CuPy arrays, on this GPU or, with peer
    access, on another: the kernel reads them over NVLink) that fall inside the block ``d``
    at ``origin`` of the start matrix."""
    m = len(edges[0])
    if not m:
        return
    rows, pitch = d.shape
    r0, c0 = (int(o) for o in origin)
    expr = _scatter(modules.ctype(d.dtype), _INDEX_CTYPES[edges[0].dtype.name], modules.ctype(edges[2].dtype))
    kernel = modules.kernel("start.cu", expr, _group(d.dtype))
    kernel((max(1, min(-(-m // _THREADS), 4096)),), (_THREADS,),
           (d, np.int64(pitch), np.int32(rows), np.int64(pitch), np.int64(r0), np.int64(c0), *edges, np.int64(m)))


def seed_predecessors(d, pr, n: int, inf) -> None:
    """The predecessors of the start matrix ``d`` into all of ``pr`` (CuPy, rows ``pitch``
    apart): ``i`` on every edge ``i -> j`` of the n x n corner, none elsewhere (padding
    included, so ``pr`` may start empty).  One kernel of the start module, on the
    ``compile`` clock: CuPy's ``full``, ``where`` and index arithmetic compiled kernels of
    their own, outside it (about a second where CuPy's disk cache is cold)."""
    rows, cols = pr.shape
    if rows == 0 or cols == 0:
        return
    group = _group(d.dtype)
    seed = modules.kernel("start.cu", group[1], group)
    seed(modules.strided_grid(rows, cols, _THREADS), (_THREADS,),
         (*pitched(d), *pitched(pr), np.int32(rows), np.int32(cols), np.int32(n), d.dtype.type(inf),
          np.int32(NO_PREDECESSOR)))
