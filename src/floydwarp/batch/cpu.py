"""The ``cpu`` batch engine: one Numba ``prange`` over the graphs (batch/kernels.py).

Graphs go to the kernel a slice at a time (``SLICE`` graphs), which is where the progress
bar moves; within a slice each thread takes ``CHUNK`` graphs at a time and solves each in
its own cache-resident scratch matrix.  A batch of NumPy matrices (``batch.dense``) is read
straight from them (kernels.solve_dense), an edge list by kernels.solve_all; predecessors
always come from the edges.

The distance kernel adds in the narrowest dtype that provably holds the batch: uint8 with
saturating sums (``SATURATING``; numeric.saturating_fits) when every weight and reachable
distance is a non-negative integer below 255 -- hop counts of graphs up to 255 vertices,
32 lanes a vector -- else the plan's dtype.  The stored dtype is the plan's either way.
"""
from __future__ import annotations

import numpy as np

from .. import numeric
from ..plan import Stopwatch
from .engines import BatchOutput, register

#: graphs per kernel call (one progress step)
SLICE = 1 << 16
#: graphs a thread takes at a time (the prange's unit)
CHUNK = 64
#: the saturating dtype the distance kernel prefers when it holds the batch
SATURATING = np.dtype("uint8")


def arithmetic(plan):
    """``(dtype, inf, threshold)`` the kernels add in for this plan."""
    if not plan.predecessors and plan.stats is not None and numeric.saturating_fits(SATURATING, plan.stats):
        inf = numeric.inf_of(SATURATING)
        return SATURATING, inf, inf
    return np.dtype(plan.dtype), plan.inf, plan.threshold


def run(batch, plan) -> BatchOutput:
    from . import kernels, steps     # Numba: imported only when this engine runs
    from .vectors import lanes

    sw = Stopwatch()
    batch = batch.to(np)
    dt, inf, threshold = arithmetic(plan)
    out_dt = np.dtype(plan.out_dtype)
    dense = batch.dense if not plan.predecessors else None
    with sw("setup"):
        count, size = batch.count, plan.size
        dist = np.empty((count, size, size), out_dt)
        pred = np.empty((count, size, size), np.int32) if plan.predecessors else None
        negative = np.zeros(count, dtype=bool)
        bad = np.empty(count, np.int64) if dense is not None else None
        # the steps (steps.py) of this run's dtypes, and their scalars: a clip at or above the
        # threshold cuts nothing (and may not fit the arithmetic dtype)
        top = threshold if plan.max_distance is None else min(plan.max_distance, threshold)
        bounds = steps.bounds(dt, inf, -inf if plan.clamp else 0, threshold, top)
        store = steps.store(dt, out_dt, plan.out_inf)
        if dense is not None:
            load, relax = steps.load_dense(dt, dense.dtype), steps.relax(dt)
        else:
            # the kernels read the edges by address: int32 ids and int64 offsets, contiguous
            weighted = not plan.unweighted and batch.weight is not None
            weight = np.ascontiguousarray(batch.weight, dt) if weighted else np.zeros(0, dt)
            src, dst = np.ascontiguousarray(batch.src, np.int32), np.ascontiguousarray(batch.dst, np.int32)
            sizes, eptr = np.ascontiguousarray(batch.sizes, np.int64), np.ascontiguousarray(batch.eptr, np.int64)
            load = steps.load_edges(dt, weighted)
            relax = steps.relax(dt) if pred is None else steps.relax_pred(dt)
            edges = src.ctypes.data, dst.ctypes.data, weight.ctypes.data
    common = (bounds.ctypes.data, bool(plan.clamp), dt.itemsize, CHUNK, lanes(dt))
    with sw("compute"):
        for lo in range(0, count, SLICE):
            hi = min(count, lo + SLICE)
            out = dist[lo:hi].ctypes.data
            if dense is not None:
                kernels.solve_dense(load, relax, store, *dense.addressed(lo, hi), bool(plan.unweighted), out, size,
                                    negative[lo:hi], bad[lo:hi], *common, dense.dtype.itemsize)
                dense.refuse(bad[lo:hi], lo)        # hop counts: the entries were not checked before
            elif pred is None:
                kernels.solve_all(load, relax, store, sizes[lo:hi], eptr[lo:hi + 1], *edges, out, size,
                                  negative[lo:hi], *common)
            else:
                kernels.solve_all_pred(load, relax, store, sizes[lo:hi], eptr[lo:hi + 1], *edges, out,
                                       pred[lo:hi].ctypes.data, size, negative[lo:hi], *common)
            plan.report(hi, count)
    return BatchOutput(dist, pred, negative, sw.timings, metadata={"kernel_dtype": dt.name})


register("cpu", run, description="Numba: one prange over the graphs, each solved in cache")
