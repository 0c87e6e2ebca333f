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

The rounds are floydwarp.schedule's (:class:`PeerRows` is the engine).  The host thread
only enqueues: each GPU works on its own stream, and a GPU waits for the owner's event
only before copying R.  The building blocks are ``gpu.panel``'s, the row split
:class:`~floydwarp.multigpu.partition.BlockPartition` on a G x 1 grid.
"""
from __future__ import annotations

import time

import numpy as np

from .. import schedule
from ..gpu.transfer import HostMatrix
from ..plan import EngineOutput
from ..registry import register
from . import blocks
from . import rank as rank_engine
from ..grid import ProcessGrid
from .partition import BlockPartition


class _Gpu:
    """One GPU's rows, buffers and stream."""

    def __init__(self, device_id, part, graph, plan):
        import cupy as cp

        from ..gpu import panel

        self.id, self.grid = device_id, ProcessGrid(part.rows, 1, device_id)
        self.device = cp.cuda.Device(device_id)
        dt = np.dtype(plan.dtype)
        with self.device:
            self.L = blocks.of_graph(graph, dt, plan.inf).block(part, self.grid, dt, plan.inf)
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


class PeerRows:
    """The engine of the blocked schedule (floydwarp.schedule) over every GPU's rows."""

    def __init__(self, part, gpus, plan):
        from ..gpu import panel

        self.part, self.gpus, self.plan = part, gpus, plan
        self.rounds = part.panels
        self.arith = panel.Arith.of(plan)

    def _round(self, t):
        """(pivot columns k0, width w, the owning GPU, its local row of panel t)."""
        k0, w = self.part.span(t)
        owner = self.gpus[self.part.owner_row(t)]
        return k0, w, owner, self.part.round_roles(t, owner.grid)["local_row"]

    def close_pivot(self, t):
        from ..gpu import tiles

        k0, w, owner, lr = self._round(t)
        with owner.device, owner.stream:
            tiles.close_block(owner.L[lr:lr + w, k0:k0 + w], self.plan, stream=owner.stream)

    def update_panels(self, t):
        """The owner's row panel R = min(R, P (x) R); each GPU's slice of the column panel
        follows in ``product``, once R has reached it."""
        from ..gpu import panel

        k0, w, owner, lr = self._round(t)
        with owner.device, owner.stream:
            R = owner.L[lr:lr + w]
            PT = owner.PT[:w * w].reshape(w, w)
            panel.to_words(R[:, k0:k0 + w], out=PT, stream=owner.stream)
            panel.minplus(R, PT, R, self.arith, skip_cols=(k0 // panel.UNIT, w // panel.UNIT), stream=owner.stream)
            self.ready = owner.stream.record()

    def broadcast(self, t):
        """R peer-to-peer into every other GPU's panel buffer."""
        import cupy as cp

        k0, w, owner, lr = self._round(t)
        R = owner.L[lr:lr + w]
        self.copied = []
        for g in self.gpus:
            if g is not owner:
                with g.device, g.stream:
                    g.stream.wait_event(self.ready)
                    cp.cuda.runtime.memcpyPeerAsync(g.R[:w].data.ptr, g.id, R.data.ptr, owner.id, R.nbytes,
                                                    g.stream.ptr)
                    self.copied.append(g.stream.record())

    def product(self, t, part):
        """On every GPU: its slice of the column panel C = min(C, C (x) P), P = R[:, K],
        then its rows L = min(L, C (x) R)."""
        from ..gpu import panel

        k0, w, owner, lr = self._round(t)
        u = (k0 // panel.UNIT, w // panel.UNIT)
        for g in self.gpus:
            if g.L.shape[0] == 0:
                continue
            with g.device, g.stream:
                if g is owner:
                    Rg, skip_rows = owner.L[lr:lr + w], (lr // panel.UNIT, w // panel.UNIT)
                else:
                    Rg, skip_rows = g.R[:w], (0, 0)
                C = g.L[:, k0:k0 + w]
                CT = g.CT[:w]
                panel.to_words(C, out=CT, stream=g.stream)
                panel.minplus(C, CT, Rg[:, k0:k0 + w], self.arith, skip_rows=skip_rows, stream=g.stream)
                panel.to_words(C, out=CT, stream=g.stream)
                panel.minplus(g.L, CT, Rg, self.arith, skip_rows=skip_rows, skip_cols=u, stream=g.stream)
        # the owner's rows of panel t change again in round t + 1: not before every copy of them is done
        for event in self.copied:
            owner.stream.wait_event(event)


@register("multigpu", "rows-p2p", predecessors=False, dtypes=rank_engine.GPU_DTYPES)
def rows_p2p(graph, plan) -> EngineOutput:
    """One process, rows split over the GPUs, the pivot row panel copied peer-to-peer each round."""
    import cupy as cp

    rank_engine.check_plan(plan)
    count = rank_engine.gpu_count(plan)
    part = BlockPartition(plan.n, rank_engine.width_of(plan), count, 1)
    dt = np.dtype(plan.dtype)
    t0 = time.perf_counter()
    host = HostMatrix((plan.n, plan.n), dt, lock=True)      # locked by threads while the GPUs compute
    gpus = [_Gpu(d, part, graph, plan) for d in range(count)]
    _enable_peer_access(gpus)
    for g in gpus:
        with g.device:
            rank_engine.warm_up(plan)
            g.device.synchronize()
    timings = {"setup": time.perf_counter() - t0}
    t1 = time.perf_counter()
    schedule.run(PeerRows(part, gpus, plan), report=plan.report)
    for g in gpus:
        g.stream.synchronize()
    timings["compute"] = time.perf_counter() - t1
    t2 = time.perf_counter()
    negative = False
    for g in gpus:
        with g.device:
            blocks.write_block(g.L, part, g.grid, host)
            negative |= blocks.negative_on_diagonal(g.L, part, g.grid)
    dist = host.array
    timings["gather"] = time.perf_counter() - t2
    meta = {"gpus": count, "panel_width": part.width, "rounds": part.panels,
            "peer_access": [[bool(cp.cuda.runtime.deviceCanAccessPeer(a.id, b.id)) if a is not b else True
                             for b in gpus] for a in gpus]}
    return EngineOutput(dist, None, timings, negative_diagonal=negative, pred_loops=False, metadata=meta)
