"""The `reference` backend: plain NumPy, vectorized over i and j for each k.

Slow (n^2 temporaries per k) but simple enough to trust: the ground truth for
every other engine's tests.
"""
from __future__ import annotations

import numpy as np

from ..plan import EngineOutput, Stopwatch
from ..predecessors import initial_predecessors
from ..registry import register, register_backend

register_backend("reference", "plain NumPy, one vectorized update per k (ground truth for tests)")


@register("reference", "numpy", default=True, k_order=True)
def numpy_loop(graph, plan) -> EngineOutput:
    """for k: d = min(d, d[:, k] + d[k, :]), with predecessors."""
    sw = Stopwatch()
    with sw("start"):
        d = graph.to_matrix(plan.dtype, plan.inf)
        pred = initial_predecessors(d, plan.inf) if plan.predecessors else None
    with sw("compute"), np.errstate(invalid="ignore", over="ignore"):
        relax(d, pred, plan.inf if plan.clamp else None, plan.report)
    return EngineOutput(d, pred, sw.timings)


def relax(d, pred=None, clamp_inf=None, report=None):
    """Run Floyd-Warshall in place on a host matrix (NaN candidates never win)."""
    n = d.shape[0]
    for k in range(n):
        cand = d[:, k, None] + d[None, k, :]
        if clamp_inf is not None:
            np.maximum(cand, -clamp_inf, out=cand)
        better = cand < d
        np.copyto(d, cand, where=better)
        if pred is not None:
            np.copyto(pred, np.broadcast_to(pred[k], d.shape), where=better)
        if report is not None and (k & 63) == 63:
            report(k + 1, n)
    if report is not None:
        report(n, n)
    return d
