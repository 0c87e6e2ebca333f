"""The ``cpu`` batch engine: one Numba ``prange`` over the graphs (batch/kernels.py).

Graphs go to the kernel a slice at a time (``SLICE`` graphs), which is where the progress
bar moves; within a slice each thread takes ``CHUNK`` graphs at a time and solves each in
its own cache-resident scratch matrix.
"""
from __future__ import annotations

import numpy as np

from ..plan import Stopwatch
from ..predecessors import NO_PREDECESSOR
from .engines import BatchOutput, register

#: graphs per kernel call (one progress step)
SLICE = 1 << 16
#: graphs a thread takes at a time (the prange's unit)
CHUNK = 64


def run(batch, plan) -> BatchOutput:
    from . import kernels     # Numba: imported only when this engine runs

    sw = Stopwatch()
    batch = batch.to(np)
    dt, out_dt = np.dtype(plan.dtype), np.dtype(plan.out_dtype)
    with sw("setup"):
        weight = (np.ones(batch.num_edges, dt) if plan.unweighted or batch.weight is None
                  else batch.weight.astype(dt))
        count, size = batch.count, plan.size
        dist = np.empty((count, size, size), out_dt)
        pred = np.empty((count, size, size), np.int32) if plan.predecessors else None
        negative = np.zeros(count, dtype=bool)
    lanes = kernels.lanes(dt)
    width = max(lanes, -(-size // lanes) * lanes)
    clip = plan.max_distance is not None
    scalars = (dt.type(plan.inf), dt.type(-plan.inf), bool(plan.clamp), dt.type(plan.threshold),
               out_dt.type(plan.out_inf), clip, dt.type(plan.max_distance if clip else 0), width, CHUNK, lanes)
    with sw("compute"):
        for lo in range(0, count, SLICE):
            hi = min(count, lo + SLICE)
            common = (batch.sizes[lo:hi], batch.eptr[lo:hi + 1], batch.src, batch.dst, weight, dist[lo:hi])
            if pred is None:
                kernels.solve_all(*common, negative[lo:hi], *scalars)
            else:
                kernels.solve_all_pred(*common, pred[lo:hi], negative[lo:hi], *scalars, np.int32(NO_PREDECESSOR))
            plan.report(hi, count)
    return BatchOutput(dist, pred, negative, sw.timings)


register("cpu", run, description="Numba: one prange over the graphs, each solved in cache")
