"""The start matrix built on the device from an edge list (kernels/start.cu): only the
edges cross the bus, compacted (uint16 vertex ids up to 65536 vertices, else int32;
weights in the distance dtype), cast chunk by chunk into pinned buffers by worker threads
while earlier chunks are in flight (``transfer.upload_columns``).  One GPU builds its whole
padded matrix; each process of the multi-GPU engines builds its own block.  A dense input is
uploaded into :func:`matrix`, the start matrix without edges (its padding then needs nothing
more).  The predecessors of a start matrix are seeded here too (:func:`seed_predecessors`), by
the same module."""
from __future__ import annotations

import numpy as np

from ..predecessors import NO_PREDECESSOR
from . import modules, transfer
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
            *(f"fw_scatter<{ct}, {i}>" for i in _INDEX_CTYPES.values()))


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
    import cupy as cp

    d = matrix(rows, pitch, dtype, inf, origin)
    if rows == 0 or pitch == 0:
        return d
    dtype = d.dtype
    r0, c0 = (int(o) for o in origin)
    src, dst, w = edges
    m = len(src)
    if not m:
        return d
    idx_t = index_dtype(n)
    o1 = -(-m * idx_t.itemsize // 16) * 16
    o2 = 2 * o1
    buf = cp.empty(o2 + m * dtype.itemsize, dtype=np.uint8)
    base = buf.data.ptr
    transfer.upload_columns([(base, src, idx_t), (base + o1, dst, idx_t), (base + o2, w, dtype)])
    scatter = modules.kernel("start.cu", f"fw_scatter<{modules.ctype(dtype)}, {_INDEX_CTYPES[idx_t.name]}>",
                             _group(dtype))
    scatter((max(1, min(-(-m // _THREADS), 4096)),), (_THREADS,),
            (d, np.int64(pitch), np.int32(rows), np.int64(pitch), np.int64(r0), np.int64(c0),
             buf[:o1], buf[o1:o2], buf[o2:], np.int64(m)))
    return d


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
