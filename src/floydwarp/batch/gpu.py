"""The ``gpu`` batch engine: kernels/batch.cu, one group of threads a graph, the matrix in
shared memory.

Graphs are bucketed by exact size (one device sort; a histogram on the host gives the
bucket table), so a CTA holds graphs of one size and no work is spent on padding.  Sizes
up to 64 run with 16 rows a thread (256 threads a CTA), 65..128 with 32 (512 threads).
Larger members -- rare in graph-learning data -- are solved one by one by the ``gpu``
backend's blocked engines (:func:`floydwarp.solve`) and stored the same way.  Graphs of
no vertices have only padding.
"""
from __future__ import annotations

import numpy as np

from .. import registry
from ..gpu import modules
from ..plan import Stopwatch
from ..predecessors import NO_PREDECESSOR
from .engines import BatchOutput, register, store

#: rows a thread holds -> the largest graph that launch takes (threads = 16 * rows)
LAUNCHES = ((16, 64), (32, 128))
SMALL_MAX = LAUNCHES[-1][1]
#: shared memory a CTA may take for its groups (more than one group's worth only up to this)
SMEM_BUDGET = 48 * 1024
#: the kernels' arithmetic: int16 and int32 distances add in int (their sums fit)
ARITH = {"int16": "int32", "int32": "int32", "int64": "int64", "float32": "float32", "float64": "float64"}


def _kernel(arith, out, rows, pred, last_pivot, smem):
    flags = ", ".join("true" if f else "false" for f in (pred, last_pivot))
    expr = f"fw_batch_small<{modules.ctype(arith)}, {modules.ctype(out)}, {rows}, {flags}>"
    return modules.kernel("batch.cu", expr, dynamic_smem=smem)


def _group_bytes(n, itemsize, pred):
    return -(-((n * n + 4 * n) * itemsize + (8 * n if pred else 0)) // 16) * 16


def buckets(counts, rows, lo, hi, starts, itemsize, pred):
    """The bucket table of one launch: sizes lo..hi present in ``counts`` (a histogram of
    sizes; ``starts[n]`` = where size n begins in the sorted order)."""
    table = []
    for n in range(lo, hi + 1):
        c = int(counts[n]) if n < counts.size else 0
        if not c:
            continue
        per = _group_bytes(n, itemsize, pred)
        groups = max(1, min(16 * rows // (n * -(-n // rows)), SMEM_BUDGET // per))
        table.append((n, int(starts[n]), c, groups, -(-c // groups), groups * per))
    return table


def run(batch, plan) -> BatchOutput:
    import cupy as cp

    sw = Stopwatch()
    with sw("h2d"):
        batch = batch.to(cp)
    dt, out_dt = np.dtype(plan.dtype), np.dtype(plan.out_dtype)
    arith = np.dtype(ARITH[dt.name])
    count, size = batch.count, plan.size
    with sw("setup"):
        weight = None if plan.unweighted or batch.weight is None else batch.weight.astype(arith)
        dist = cp.empty((count, size, size), out_dt)
        pred = cp.empty((count, size, size), np.int32) if plan.predecessors else None
        negative = cp.zeros(count, dtype=cp.uint8)
        host_sizes = batch.host_sizes
        counts = np.bincount(host_sizes, minlength=1) if count else np.zeros(1, np.int64)
        starts = np.concatenate([[0], np.cumsum(counts)])
        order = cp.argsort(batch.sizes).astype(cp.int32)
    start = cp.cuda.Event()
    end = cp.cuda.Event()
    start.record()
    clip = plan.clip is not None
    # pred holds the last pivot that improved each entry (Graphormer's path matrix; batch.cu)
    last_pivot = bool(plan.options.get("last_pivot"))
    scalars = (np.int64(size), arith.type(plan.inf), arith.type(-plan.inf), np.int32(plan.clamp),
               arith.type(plan.threshold), out_dt.type(plan.out_inf), np.int32(clip),
               arith.type(plan.clip if clip else 0))
    lo = 1
    for rows, hi in LAUNCHES:
        table = buckets(counts, rows, lo, hi, starts, arith.itemsize, plan.predecessors)
        lo = hi + 1
        if not table:
            continue
        size_, first, cnt, groups = (cp.asarray(np.array(c, dtype=np.int32)) for c in list(zip(*table))[:4])
        ctas = np.concatenate([[0], np.cumsum([t[4] for t in table])]).astype(np.int32)
        smem = max(t[5] for t in table)
        kernel = _kernel(arith.name, out_dt.name, rows, plan.predecessors, last_pivot, smem)
        kernel((int(ctas[-1]),), (16 * rows,),
               (order, size_, first, cnt, groups, cp.asarray(ctas), np.int32(len(table)), batch.eptr, batch.src,
                batch.dst,
                weight if weight is not None else np.intp(0), dist, pred if pred is not None else np.intp(0),
                negative, *scalars), shared_mem=smem)
    end.record()
    end.synchronize()
    _empty_and_large(batch, plan, host_sizes, dist, pred, negative, sw)
    plan.report(count, count)
    timings = dict(sw.timings, compute=cp.cuda.get_elapsed_time(start, end) / 1e3)
    return BatchOutput(dist, pred, negative.astype(bool), timings)


def _empty_and_large(batch, plan, host_sizes, dist, pred, negative, sw):
    """Graphs of no vertices (padding only) and graphs above SMALL_MAX (one solve each; with
    the ``last_pivot`` option, which solve() does not know, left as padding for the caller)."""
    import cupy as cp

    from ..solver import solve

    last_pivot = bool(plan.options.get("last_pivot"))
    empty = np.flatnonzero((host_sizes == 0) | (last_pivot & (host_sizes > SMALL_MAX)))
    if empty.size:
        dist[cp.asarray(empty)] = plan.out_inf
        if pred is not None:
            pred[cp.asarray(empty)] = NO_PREDECESSOR
    large = np.flatnonzero(host_sizes > SMALL_MAX)
    if not large.size or last_pivot:
        return
    with sw("large"):
        for g in large.tolist():
            n = int(host_sizes[g])
            r = solve(batch.graph(g, plan.unweighted), dtype=plan.dtype, backend="gpu",
                      predecessors=plan.predecessors, output="device")
            dist[g] = plan.out_inf
            dist[g, :n, :n] = store(plan, cp.asarray(r.dist))
            negative[g] = r.has_negative_cycle
            if pred is not None:
                pred[g] = NO_PREDECESSOR
                pred[g, :n, :n] = cp.asarray(r.pred)


register("gpu", run, probe=lambda: registry.unavailable_reason("gpu"),
         description="CUDA: one group of threads a graph, the matrix in shared memory (batch.cu)")
