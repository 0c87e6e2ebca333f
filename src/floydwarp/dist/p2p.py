"""``multigpu/rows-p2p``: seed 001's hw3-3 design -- one process, several GPUs, rows split.

Each GPU holds a contiguous run of row panels with every column.  Round r (pivot panel
K of ``width`` columns):

1. the GPU holding K's rows closes the pivot block and updates its row panel
   R = min(R, P (x) R) (phases 1-2 of the rows it owns);
2. R is copied peer-to-peer (``cudaMemcpyPeerAsync``, NVLink where there is one) into
   every other GPU's panel buffer;
3. every GPU repeats phase 2 for its own rows -- its slice of the column panel
   C = min(C, C (x) P), with P = R[:, K] -- and runs phase 3 on its rows,
   L = min(L, C (x) R).

The host thread only enqueues: each GPU works on its own stream, and a GPU waits for the
owner's event only before copying R.  The building blocks are ``gpu.panel``'s, the
row split :class:`~floydwarp.dist.gpu_engine.BlockPartition` on a G x 1 grid.
"""
from __future__ import annotations

import time

import numpy as np

from ..plan import EngineOutput
from ..registry import register
from . import gpu_engine
from .grid import ProcessGrid
from .multigpu import _DTYPES, gpu_count


class _Gpu:
    """One GPU's rows, buffers and stream."""

    def __init__(self, device_id, part, graph, plan):
        import cupy as cp

        from ..gpu import panel

        self.id, self.grid = device_id, ProcessGrid(part.rows, 1, device_id)
        self.device = cp.cuda.Device(device_id)
        dt = np.dtype(plan.dtype)
        with self.device:
            self.L = gpu_engine.upload_block(
                lambda lo, hi, c0, c1: graph.matrix_rows(lo, hi, dt, plan.inf)[:, c0:c1], part, self.grid, dt,
                plan.inf)
            rows, cols = self.L.shape
            self.R = cp.empty((part.width, cols), dt)
            self.CT = cp.empty((part.width, rows), panel.word_dtype(dt))
            self.PT = cp.empty(part.width * part.width, panel.word_dtype(dt))
            self.stream = cp.cuda.Stream(non_blocking=True)


def _enable_peer_access(gpus):
    import cupy as cp

    rt = cp.cuda.runtime
    for a in gpus:
        with a.device:
            for b in gpus:
                if a is not b and rt.deviceCanAccessPeer(a.id, b.id):
                    try:
                        rt.deviceEnablePeerAccess(b.id)
                    except rt.CUDARuntimeError:
                        pass          # already enabled in this process


def _round(t, part, gpus, plan, arith):
    import cupy as cp

    from ..gpu import panel

    k0, w = part.span(t)
    owner = gpus[part.owner_row(t)]
    lr = part.round_roles(t, owner.grid)["local_row"]
    u = (k0 // panel.UNIT, w // panel.UNIT)
    with owner.device, owner.stream:
        R = owner.L[lr:lr + w]
        pivot = R[:, k0:k0 + w]
        panel.close_block(pivot, plan, stream=owner.stream)
        PT = owner.PT[:w * w].reshape(w, w)
        panel.to_words(pivot, out=PT, stream=owner.stream)
        panel.minplus(R, PT, R, arith, skip_cols=u, stream=owner.stream)
        ready = owner.stream.record()
    copied = []
    for g in gpus:
        with g.device, g.stream:
            if g is owner:
                Rg, skip_rows = R, (lr // panel.UNIT, w // panel.UNIT)
            else:
                g.stream.wait_event(ready)
                Rg, skip_rows = g.R[:w], (0, 0)
                cp.cuda.runtime.memcpyPeerAsync(Rg.data.ptr, g.id, R.data.ptr, owner.id, R.nbytes, g.stream.ptr)
                copied.append(g.stream.record())
            if g.L.shape[0] == 0:
                continue
            C = g.L[:, k0:k0 + w]
            CT = g.CT[:w]
            panel.to_words(C, out=CT, stream=g.stream)
            panel.minplus(C, CT, Rg[:, k0:k0 + w], arith, skip_rows=skip_rows, stream=g.stream)
            panel.to_words(C, out=CT, stream=g.stream)
            panel.minplus(g.L, CT, Rg, arith, skip_rows=skip_rows, skip_cols=u, stream=g.stream)
    # the owner's rows of panel t change again in round t + 1: not before every copy of them is done
    for event in copied:
        owner.stream.wait_event(event)


@register("multigpu", "rows-p2p", predecessors=False, dtypes=_DTYPES)
def rows_p2p(graph, plan) -> EngineOutput:
    """One process, rows split over the GPUs, the pivot row panel copied peer-to-peer each round."""
    import cupy as cp

    from ..gpu import panel

    gpu_engine.check_plan(plan)
    count = gpu_count(plan)
    part = gpu_engine.BlockPartition(plan.n, gpu_engine.width_of(plan), count, 1)
    dt = np.dtype(plan.dtype)
    arith = panel.Arith.of(plan)
    t0 = time.perf_counter()
    gpus = [_Gpu(d, part, graph, plan) for d in range(count)]
    _enable_peer_access(gpus)
    for g in gpus:
        with g.device:
            gpu_engine._warm_up(plan)
            g.device.synchronize()
    timings = {"setup": time.perf_counter() - t0}
    t1 = time.perf_counter()
    for t in range(part.panels):
        _round(t, part, gpus, plan, arith)
        plan.report(t + 1, part.panels)
    for g in gpus:
        g.stream.synchronize()
    timings["compute"] = time.perf_counter() - t1
    t2 = time.perf_counter()
    dist = np.empty((plan.n, plan.n), dt)
    negative = False
    for g in gpus:
        with g.device:
            for lo, c0, band in gpu_engine.download_bands(g.L, part, g.grid):
                dist[lo:lo + band.shape[0], c0:c0 + band.shape[1]] = band
            negative |= gpu_engine.negative_on_diagonal(g.L, part, g.grid)
    timings["gather"] = time.perf_counter() - t2
    meta = {"gpus": count, "panel_width": part.width, "rounds": part.panels,
            "peer_access": [[bool(cp.cuda.runtime.deviceCanAccessPeer(a.id, b.id)) if a is not b else True
                             for b in gpus] for a in gpus]}
    return EngineOutput(dist, None, timings, negative_diagonal=negative, pred_loops=False, metadata=meta)
