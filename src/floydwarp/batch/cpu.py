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
from ..predecessors import NO_PREDECESSOR
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
    from . import kernels     # Numba: imported only when this engine runs
    from .vectors import lanes

    sw = Stopwatch()
    batch = batch.to(np)
    dt, inf, threshold = arithmetic(plan)
    out_dt = np.dtype(plan.out_dtype)
    dense = batch.dense if not plan.predecessors else None
    with sw("setup"):
        weight = None if dense is not None or plan.unweighted or batch.weight is None else batch.weight.astype(dt)
        count, size = batch.count, plan.size
        dist = np.empty((count, size, size), out_dt)
        pred = np.empty((count, size, size), np.int32) if plan.predecessors else None
        negative = np.zeros(count, dtype=bool)
        bad = np.empty(count, np.int64) if dense is not None else None
    # a clip at or above the threshold cuts nothing (and may not fit the arithmetic dtype)
    top = threshold if plan.max_distance is None else min(plan.max_distance, threshold)
    scalars = (dt.type(inf), dt.type(-inf if plan.clamp else 0), bool(plan.clamp), dt.type(threshold),
               out_dt.type(plan.out_inf), dt.type(top), CHUNK, lanes(dt))
    with sw("compute"):
        for lo in range(0, count, SLICE):
            hi = min(count, lo + SLICE)
            if dense is not None:
                kernels.solve_dense(*dense.reader(lo, hi), bool(plan.unweighted), dist[lo:hi], negative[lo:hi],
                                    bad[lo:hi], *scalars)
                dense.refuse(bad[lo:hi], lo)        # hop counts: the entries were not checked before
            elif pred is None:
                kernels.solve_all(batch.sizes[lo:hi], batch.eptr[lo:hi + 1], batch.src, batch.dst, weight, dist[lo:hi],
                                  negative[lo:hi], *scalars)
            else:
                kernels.solve_all_pred(batch.sizes[lo:hi], batch.eptr[lo:hi + 1], batch.src, batch.dst, weight,
                                       dist[lo:hi], pred[lo:hi], negative[lo:hi], *scalars, np.int32(NO_PREDECESSOR))
            plan.report(hi, count)
    return BatchOutput(dist, pred, negative, sw.timings, metadata={"kernel_dtype": dt.name})


register("cpu", run, description="Numba: one prange over the graphs, each solved in cache")
