"""``cpu/bfs``: all-pairs breadth-first search for graphs whose every edge weighs 1
(floydwarp/bfs.py: what it computes; cpu/bfs_kernels.py: the Numba kernels).

``algorithm="auto"`` takes it for such graphs (the registry's ``preferred``).  Timings:
"start" (the graph's adjacency, built once per graph), "compile" (kernels compiled or loaded
off the clock, once per process and dtype), "compute" (the searches; a search in a dtype
too narrow for the distances is counted with the one that follows it) and "predecessors".
With ``workdir=DIR`` the matrices are memory-mapped files there (``dist.npy``, ``pred.npy``),
as with ``blocked``.
"""
from __future__ import annotations

import functools
import time

import numpy as np

from .. import bfs, numeric
from ..options import WORKDIR
from ..plan import EngineOutput
from ..registry import register
from .storage import Storage
from .threads import NumbaThreads

_warm: set = set()


@functools.cache
def _kernels():
    from . import bfs_kernels  # imports Numba: only when cpu/bfs runs

    return bfs_kernels


def _warm_up(dtype, predecessors: bool):
    """Compile (or load from Numba's cache) the kernels for ``dtype`` on two vertices."""
    key = (np.dtype(dtype), predecessors)         # not .name: a Python-level property, slow
    if key in _warm:
        return
    K = _kernels()
    ptr, idx = np.array([0, 1, 1], np.int64), np.array([1], np.int32)
    dist = np.empty((2, 2), dtype)
    K.hop_distances(ptr, idx, ptr, idx, dist, int(numeric.inf_of(dtype)))
    if predecessors:
        K.hop_predecessors(dist, ptr, idx, int(numeric.inf_of(dtype)), np.empty((2, 2), np.int32))
    _warm.add(key)


@register("cpu", "bfs", dtypes=numeric.INTEGER_DTYPES, predecessors=True, accepts=bfs.refusal, preferred=True,
          options=WORKDIR)
def run(graph, plan) -> EngineOutput:
    """All-pairs breadth-first search, one bit per target (every edge must weigh 1)."""
    n = plan.n
    storage = numeric.hop_storage(plan.dtype, plan.narrow)
    store = Storage.for_plan(plan, n * n * (storage[0].itemsize + (4 if plan.predecessors else 0)))
    # stage marks, not a Stopwatch's contexts (microseconds of a small graph's solve)
    started = time.perf_counter()
    out_ptr, out_idx = graph.csr()
    in_ptr, in_idx = graph.csr(reverse=True)
    timings = {"start": time.perf_counter() - started, "compile": 0.0, "compute": 0.0}
    with NumbaThreads(plan.threads, tasks=_kernels().batches(n)) as threads:
        for dtype in storage:
            started = time.perf_counter()
            _warm_up(dtype, plan.predecessors)
            compiled = time.perf_counter()
            dist = store.result((n, n), dtype, "dist")
            deepest = _kernels().hop_distances(out_ptr, out_idx, in_ptr, in_idx, dist, int(numeric.inf_of(dtype)))
            timings["compile"] += compiled - started
            timings["compute"] += time.perf_counter() - compiled
            if deepest >= 0:
                break
        else:
            raise numeric.too_narrow(plan.dtype, plan.stats)
        pred = None
        if plan.predecessors:
            started = time.perf_counter()
            pred = _kernels().hop_predecessors(dist, in_ptr, in_idx, int(numeric.inf_of(dist.dtype)),
                                               store.result((n, n), np.int32, "pred"))
            timings["predecessors"] = time.perf_counter() - started
    # hop counts are never negative: no diagonal for solve() to read
    return EngineOutput(dist, pred, timings, negative_diagonal=False, pred_loops=False if pred is not None else None,
                        metadata={"threads": threads, "levels": int(deepest), **store.metadata})
