"""``gpu/bfs``: all-pairs breadth-first search for graphs whose every edge weighs 1, on the GPU
(floydwarp/bfs.py: what it computes; kernels/bfs.cu: the kernels).

``algorithm="auto"`` takes it for such graphs (the registry's ``preferred``).  A run:

1. the adjacency (out-neighbours; in-neighbours too for predecessors) goes up as int64
   offsets and int32 ids ("h2d");
2. ``fw_bfs_start`` sets every vertex's own bit and its row to INF with 0 on the diagonal
   ("setup"); the rows are pitched to whole words (64 entries), so each word's entries start
   8-byte aligned;
3. one ``fw_bfs_level`` launch a level, all targets at once, until a level finds nothing
   (a 4-byte flag read back per level) ("compute", CUDA events).  A level whose number would
   reach the dtype's INF first widens the matrix to the next dtype of
   ``numeric.hop_storage`` (and a result that ends narrower again is cast back);
4. predecessors from the distances, ``fw_bfs_pred`` ("predecessors");
5. the matrix as the caller wants it: on the device (``output="device"``), unpadded there,
   or copied to the host ("d2h").

A level costs a launch and a read-back (tens of microseconds) and one pass over the arcs for
every word of targets, so a graph of large diameter (a long path: n levels) can take longer
than Floyd-Warshall.  The run therefore keeps the time Floyd-Warshall would take at the
H100's measured int16 rate (``FW_RELAXATIONS_PER_S``) as its budget: a search still going
after it (and after ``MIN_LEVELS`` levels) stops and ``gpu/fast`` solves the graph instead
(``metadata["bfs_fallback"]`` says so), so the worst case is about twice Floyd-Warshall;
``bfs_fallback=False`` (a solve option) searches to the end whatever it takes.  A search whose
bit sets and matrix would not fit in GPU memory (or ``max_gpu_memory``) goes to ``gpu/fast``
too, which streams a large matrix from host memory.
"""
from __future__ import annotations

import dataclasses
import time

import numpy as np

from .. import bfs, casts, numeric
from ..errors import DeviceError
from ..plan import EngineOutput
from ..predecessors import NO_PREDECESSOR
from ..registry import register
from . import device, fast, modules, transfer
from .incore import dense_on_device, wants_device

THREADS = 256
#: blocks per SM of the grid-stride kernels
BLOCKS_PER_SM = 8
#: Floyd-Warshall's relaxations per second on the H100 (gpu/fast, int16, README): the time
#: budget of a search before it hands the graph to gpu/fast
FW_RELAXATIONS_PER_S = 2.8e13
#: levels a search may always run, whatever the budget (the first levels of a small graph)
MIN_LEVELS = 32


#: the kernels of bfs.cu, compiled as one module per dtype
_START, _LEVEL, _PRED = range(3)


def _kernel(which: int, dtype):
    t = modules.ctype(dtype)
    names = (f"fw_bfs_start<{t}>", f"fw_bfs_level<{t}>", f"fw_bfs_pred<{t}>")
    return modules.kernel("bfs.cu", names[which], names)


def _grid(total: int) -> tuple:
    blocks = max(1, min(-(-int(total) // THREADS), device.current()["sm_count"] * BLOCKS_PER_SM))
    return (blocks,)


def _needed(n, words, pitch, itemsize, arcs, predecessors, to_device) -> int:
    """Device bytes of a run: three bit sets, the pitched distances, the adjacency, the
    predecessors, and an unpadded copy of the distances when they stay on the device."""
    out = 3 * n * words * 8 + n * pitch * itemsize + 2 * (8 * (n + 1) + 4 * arcs)
    if predecessors:
        out += 4 * n * n
    if to_device and pitch != n:
        out += n * n * itemsize
    return out


@register("gpu", "bfs", dtypes=numeric.INTEGER_DTYPES, predecessors=True, accepts=bfs.refusal, preferred=True,
          options={"bfs_fallback": "False: search to the last level however long it takes (default True: hand "
                                    "the graph to fast once the search has taken Floyd-Warshall's time)"},
          description="all-pairs breadth-first search for unit weights: one bit per target, 64 a word, "
                      "a kernel launch per level pulling every vertex's out-neighbours' frontier words; "
                      "hop counts in uint8 while they fit (dtype='auto'); predecessors from the distances")
def run(graph, plan) -> EngineOutput:
    """All-pairs breadth-first search on the GPU (every edge must weigh 1)."""
    import cupy as cp

    n = plan.n
    storage = numeric.hop_storage(plan.dtype, plan.narrow)
    to_device = wants_device(plan, dense_on_device(graph))
    timings = {"h2d": 0.0, "setup": 0.0, "compute": 0.0, "d2h": 0.0}
    if n == 0:
        xp = cp if to_device else np
        pred = xp.zeros((0, 0), np.int32) if plan.predecessors else None
        return EngineOutput(xp.zeros((0, 0), storage[0]), pred, timings)
    words = bfs.words(n)
    pitch = words * bfs.WORD
    out_ptr, out_idx = graph.csr()
    needed = _needed(n, words, pitch, storage[0].itemsize, out_idx.size, plan.predecessors, to_device)
    if needed > device.budget(plan):
        return _hand_to_fast(graph, plan, timings, 0.0, f"the search needs {needed:,} bytes of GPU memory, "
                                                        f"more than it may use: gpu/fast solved the graph")
    try:
        return _search(cp, graph, plan, storage, to_device, timings, words, pitch, out_ptr, out_idx)
    except cp.cuda.memory.OutOfMemoryError as exc:
        raise DeviceError(f"the GPU ran out of memory for n = {n} (gpu/bfs): {exc}; use backend='cpu'") from exc


def _search(cp, graph, plan, storage, to_device, timings, words, pitch, out_ptr, out_idx) -> EngineOutput:
    n = plan.n
    t0 = time.perf_counter()
    d_out_ptr, d_out_idx = cp.asarray(out_ptr), cp.asarray(out_idx)
    cp.cuda.Device().synchronize()
    t1 = time.perf_counter()
    timings["h2d"] = t1 - t0

    dtype = storage[0]
    visited = cp.empty(n * words, np.uint64)
    frontier = cp.empty(n * words, np.uint64)
    nxt = cp.empty(n * words, np.uint64)
    dist = cp.empty((n, pitch), dtype)
    total = n * words
    grid = _grid(total)
    _kernel(_START, dtype)(
        grid, (THREADS,), (visited, frontier, dist, np.int64(pitch), np.int32(n), np.int32(words),
                           dtype.type(numeric.inf_of(dtype))))
    found = cp.zeros(1, np.int32)
    last = np.uint64((1 << (n - 64 * (words - 1))) - 1 if n % 64 else (1 << 64) - 1)
    cp.cuda.Device().synchronize()
    t2 = time.perf_counter()
    timings["setup"] = t2 - t1

    start, end = cp.cuda.Event(), cp.cuda.Event()
    start.record()
    budget = float(n) ** 3 / FW_RELAXATIONS_PER_S
    fallback = plan.options.get("bfs_fallback", True)
    level, gave_up = 0, False
    while True:
        level += 1
        while level >= int(numeric.inf_of(dtype)):
            dist, dtype = _widen(cp, dist, dtype, storage, plan)
        found.fill(0)
        _kernel(_LEVEL, dtype)(
            grid, (THREADS,), (d_out_ptr, d_out_idx, frontier, nxt, visited, dist, np.int64(pitch), np.int32(n),
                               np.int32(words), last, dtype.type(level), found))
        frontier, nxt = nxt, frontier
        if not int(found.get()[0]):
            break
        if level >= MIN_LEVELS and fallback and time.perf_counter() - t2 > budget:
            gave_up = True
            break
    if gave_up:
        end.record()
        end.synchronize()
        del visited, frontier, nxt, dist
        return _hand_to_fast(graph, plan, timings, cp.cuda.get_elapsed_time(start, end) / 1000.0,
                             f"the search was still going after {level} levels, past the time Floyd-Warshall "
                             f"needs for n = {n}: gpu/fast solved the graph")
    deepest = level - 1
    narrowest = next(d for d in storage if deepest < int(numeric.inf_of(d)))
    if narrowest != dtype:         # widened for a last level that found nothing
        dist = casts.cast_distances(dist, numeric.inf_of(dtype), narrowest)
        dtype = narrowest
    end.record()
    end.synchronize()
    timings["compute"] = cp.cuda.get_elapsed_time(start, end) / 1000.0
    del visited, frontier, nxt

    pred = None
    if plan.predecessors:
        t3 = time.perf_counter()
        in_ptr, in_idx = graph.csr(reverse=True)
        pred = cp.empty((n, n), np.int32)
        _kernel(_PRED, dtype)(
            _grid(n * n), (THREADS,), (cp.asarray(in_ptr), cp.asarray(in_idx), dist, np.int64(pitch), pred,
                                       np.int32(n), dtype.type(numeric.inf_of(dtype)), np.int32(NO_PREDECESSOR)))
        cp.cuda.Device().synchronize()
        timings["predecessors"] = time.perf_counter() - t3

    t4 = time.perf_counter()
    if to_device:
        dist = dist if pitch == n else cp.ascontiguousarray(dist[:, :n])
    else:
        dist = transfer.to_host(dist, n, n, out=transfer.HostMatrix((n, n), dtype).result())
        pred = None if pred is None else transfer.to_host(pred)
    cp.cuda.Device().synchronize()
    timings["d2h"] = time.perf_counter() - t4
    return EngineOutput(dist, pred, timings, pred_loops=False if pred is not None else None,
                        metadata={"device": device.current()["name"], "levels": deepest})


def _widen(cp, dist, dtype, storage, plan):
    """The matrix in the next dtype of ``storage`` (a level is about to reach this one's INF)."""
    wider = storage.index(dtype) + 1
    if wider == len(storage):
        raise numeric.too_narrow(plan.dtype, plan.stats)
    new = storage[wider]
    return casts.cast_distances(dist, numeric.inf_of(dtype), new), new


def _hand_to_fast(graph, plan, timings, spent, reason):
    """gpu/fast solves the graph instead (in core, or out of core where it does not fit), with
    ``reason`` in ``metadata["bfs_fallback"]``; ``spent``: seconds of kernels already run."""
    out = fast.solve(graph, dataclasses.replace(plan, algorithm="fast", narrow=False))
    merged = {k: out.timings.get(k, 0.0) + timings.get(k, 0.0) for k in {*out.timings, *timings}}
    merged["compute"] = merged.get("compute", 0.0) + spent
    return dataclasses.replace(out, timings=merged, metadata={**out.metadata, "bfs_fallback": reason})
