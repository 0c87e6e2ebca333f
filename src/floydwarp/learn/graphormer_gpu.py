"""The GPU half of the Graphormer drop-ins (learn/graphormer.py): the batch engine's
last-pivot kernel (batch.cu, LASTK) for the distances and path matrix, and
kernels/edge_input.cu for the edge inputs, everything on the device.

Graphs of more than ``batch.gpu.SMALL_MAX`` vertices, which the batch kernel does not take
in this mode, are computed by the CPU kernels and copied in; graphs of more than 512
vertices (the edge-input kernel's stack) are refused for edge inputs, as Graphormer's
collator drops them (``max_node=512``).
"""
from __future__ import annotations

import numpy as np

from ..errors import FloydwarpError
from .graphormer_kernels import UNREACHABLE

#: threads a block of the edge-input kernel
THREADS = 256
#: the deepest path the edge-input kernel spells (its stack)
MAX_SPELLED = 512


def paths(work, shift, pad, path_dtype):
    """``(distances + shift, path, top)`` as :meth:`_Work.paths` returns them, on the device."""
    import cupy as cp

    from .. import numeric
    from ..batch import gpu as engine
    from ..batch.engines import BatchPlan

    batch = work.batch.to(cp)
    weight = None
    if work.weighted:       # weights of 510 or more cannot be on a path shorter than 510
        weight = cp.minimum(batch.weight.astype(cp.int64), UNREACHABLE)
    dtype = np.dtype(np.int16)            # distances below 510 + 510: int16 holds every sum
    inf = numeric.inf_of(dtype)
    plan = BatchPlan(dtype=dtype, inf=inf, clamp=False, out_dtype=dtype, out_inf=inf, threshold=inf,
                     size=work.size, predecessors=True, unweighted=not work.weighted,
                     options={"last_pivot": True})
    from ..batch.graphs import GraphBatch

    run_batch = GraphBatch(batch.sizes, batch.eptr, batch.src, batch.dst, weight)
    out = engine.run(run_batch, plan)
    d = out.dist.astype(cp.int64)
    far = d >= UNREACHABLE
    d[far] = UNREACHABLE
    path = cp.where(far, UNREACHABLE, out.pred).astype(path_dtype)
    large = np.flatnonzero(work.sizes > engine.SMALL_MAX)
    if large.size:
        _large_on_host(work, large, d, path)
    inside = _inside(work, cp)
    top = cp.where(inside, d, 0).reshape(work.count, -1).max(axis=1) if work.size else cp.zeros(work.count, cp.int64)
    d = cp.where(inside, d + shift, pad)
    path = cp.where(inside, path, pad).astype(path_dtype)
    return d, path, cp.asnumpy(top)


def _inside(work, cp):
    """(B, N, N) mask of the entries inside each graph's square."""
    r = cp.arange(work.size)
    sizes = cp.asarray(work.sizes)
    return (r[None, :, None] < sizes[:, None, None]) & (r[None, None, :] < sizes[:, None, None])


def _large_on_host(work, large, d, path):
    """The graphs above the batch kernel's size, by the CPU kernel, copied into ``d``/``path``."""
    import cupy as cp

    from ..batch.graphs import GraphBatch
    from ..batch.vectors import lanes
    from .graphormer_kernels import paths as cpu_paths

    sub = GraphBatch.from_graphs([work.batch.graph(int(g)) for g in large])
    size = sub.max_size
    rows = np.dtype(np.uint16)
    dist = np.empty((sub.count, size, size), np.int64)
    pth = np.empty((sub.count, size, size), np.int64)
    top = np.empty(sub.count, np.int64)
    w = sub.weight.astype(np.int64) if work.weighted else None
    cpu_paths(sub.sizes, sub.eptr, sub.src, sub.dst, w, rows.type(np.iinfo(rows).max), lanes(rows), dist, pth, 0,
              UNREACHABLE, top)
    for k, g in enumerate(large.tolist()):
        n = int(work.sizes[g])
        d[g, :n, :n] = cp.asarray(dist[k, :n, :n])
        path[g, :n, :n] = cp.asarray(pth[k, :n, :n])


def edge_inputs(work, path, feat, depth):
    """The collated edge inputs (B, N, N, depth, F) int64 on the device (edge_input.cu)."""
    import cupy as cp
    import cupyx

    from ..gpu import modules

    if work.size > MAX_SPELLED:
        raise FloydwarpError(f"graph {int(np.argmax(work.sizes))} has {work.size} vertices; the GPU edge inputs "
                             f"take graphs of at most {MAX_SPELLED} (Graphormer's collator drops larger ones)")
    batch = work.batch.to(cp)
    count, size = work.count, work.size
    feat = cp.asarray(feat, dtype=cp.int64)
    out = cp.zeros((count, size, size, depth, feat.shape[1]), cp.int64)
    if not count or not size or not depth or not batch.num_edges:
        return out
    # graph, source, target -> the last edge listed between them (Graphormer writes edge by edge)
    graph = cp.repeat(cp.arange(count, dtype=cp.int64), cp.diff(batch.eptr))
    keys = (graph * size + batch.src.astype(cp.int64)) * size + batch.dst.astype(cp.int64)
    emap = cp.full(count * size * size, -1, cp.int32)
    cupyx.scatter_max(emap, keys, cp.arange(batch.num_edges, dtype=cp.int32))
    bad = cp.zeros(1, cp.int32)
    kernel = modules.kernel("edge_input.cu", "fw_edge_input")
    pairs = count * size * size
    kernel(((pairs + THREADS - 1) // THREADS,), (THREADS,),
           (path.astype(cp.int32), cp.asarray(work.sizes, dtype=cp.int64), emap, batch.weight.astype(cp.int64), feat,
            np.int32(feat.shape[1]), np.int64(count), np.int32(size), np.int32(depth), np.int64(1), out, bad))
    if int(bad[0]):
        raise FloydwarpError("internal: a path matrix entry spells no path on the GPU")
    return out
