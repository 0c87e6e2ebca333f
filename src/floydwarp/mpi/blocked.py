"""The ``mpi`` backend's ``blocked-2d``: tiles dealt 2D block-cyclically over a Pr x Pc
process grid, Numba kernels on each rank, panels through MPI broadcasts with lookahead
(the algorithm as :mod:`floydwarp.mpi.engine` describes it)."""
from __future__ import annotations

import time

import numpy as np

from .. import checkpoint, schedule
from ..errors import FloydwarpError
from ..options import CHECKPOINT, GRID, LOOKAHEAD
from ..plan import EngineOutput
from ..grid import ProcessGrid
from ..registry import register
from ..tiling import start_tiles
from . import comm as mpi_util
from . import output
from .comm import clamp_floor, threads_for

DEFAULT_BLOCK = 64


class BlockCyclic:
    """One process's share of the blocked schedule (an engine of floydwarp.schedule): its
    2D block-cyclic tiles, and the messages it exchanges with its process row and column."""

    def __init__(self, comm, grid, rounds, local, plocal, clamp, lo, clock):
        from . import tiles

        self.K = tiles
        self.comm, self.grid = comm, grid
        self.row_comm = comm.Split(color=grid.my_row, key=grid.my_col)
        self.col_comm = comm.Split(color=grid.my_col, key=grid.my_row)
        self.local, self.plocal = local, plocal
        self.clamp, self.lo, self.clock = clamp, lo, clock
        self.nt_rows, self.nt_cols, self.bs = local.shape[0], local.shape[1], local.shape[2]
        self.rounds = rounds
        self.pred = plocal is not None
        #: round -> its panels (row, column[, predecessor row]) and their broadcasts in flight
        self.bufs, self.pending = {}, {}

    def free(self):
        self.row_comm.Free()
        self.col_comm.Free()

    def state(self):
        return self.local, self.plocal

    def close_pivot(self, r):
        """Phase 1 on the pivot's owner, then the pivot along its process row and column."""
        from ..cpu.steps import fw_tile, fw_tile_pred

        g, bs, L, P = self.grid, self.bs, self.local, self.plocal
        li, lj = g.local_row(r), g.local_col(r)
        piv = np.empty((bs, bs), L.dtype)
        ppiv = np.empty((bs, bs), np.int32) if self.pred else None
        if li is not None and lj is not None:
            if self.pred:
                fw_tile_pred(L[li, lj], P[li, lj], self.clamp, self.lo)
                ppiv[...] = P[li, lj]
            else:
                fw_tile(L[li, lj], self.clamp, self.lo)
            piv[...] = L[li, lj]
        with self.clock():
            if li is not None:
                self.row_comm.Bcast(piv, root=r % g.cols)
                if self.pred:
                    self.row_comm.Bcast(ppiv, root=r % g.cols)
            if lj is not None:
                self.col_comm.Bcast(piv, root=r % g.rows)
                if self.pred:
                    self.col_comm.Bcast(ppiv, root=r % g.rows)
        self.pivot = piv, ppiv

    def update_panels(self, r):
        """Phase 2 on the owners of the pivot row and column tiles."""
        g, L, P = self.grid, self.local, self.plocal
        li, lj = g.local_row(r), g.local_col(r)
        piv, ppiv = self.pivot
        for at, skip, row_side in ((li, lj, True), (lj, li, False)):
            if at is None:
                continue
            skip = -1 if skip is None else skip
            if self.pred:
                self.K.pivot_panel_pred(L, P, at, piv, ppiv, skip, self.clamp, self.lo, row_side)
            else:
                self.K.pivot_panel(L, at, piv, skip, self.clamp, self.lo, row_side)

    def broadcast(self, r):
        """Non-blocking: the pivot tile row down process columns, the pivot tile column along
        process rows (and the predecessor row)."""
        g, bs, L, P = self.grid, self.bs, self.local, self.plocal
        li, lj = g.local_row(r), g.local_col(r)
        rowp = np.ascontiguousarray(L[li]) if li is not None else np.empty((self.nt_cols, bs, bs), L.dtype)
        colp = np.ascontiguousarray(L[:, lj]) if lj is not None else np.empty((self.nt_rows, bs, bs), L.dtype)
        bufs = [rowp, colp]
        with self.clock():
            reqs = [self.col_comm.Ibcast(rowp, root=r % g.rows), self.row_comm.Ibcast(colp, root=r % g.cols)]
            if self.pred:
                prowp = np.ascontiguousarray(P[li]) if li is not None else np.empty((self.nt_cols, bs, bs), np.int32)
                reqs.append(self.col_comm.Ibcast(prowp, root=r % g.rows))
                bufs.append(prowp)
        self.bufs[r], self.pending[r] = bufs, reqs

    def wait(self, *rounds):
        from mpi4py import MPI

        reqs = [q for t in rounds for q in self.pending.pop(t, ())]
        if reqs:
            with self.clock():
                MPI.Request.Waitall(reqs)

    def store(self, r):
        """The end of a round: the broadcasts in flight land (a checkpoint may follow)."""
        self.wait(*list(self.pending))

    def product(self, r, part):
        """Phase 3 on this process's tiles of ``part``, with round r's panels."""
        self.wait(r)
        sel_i, sel_j = self.tiles_except(r, part)
        if sel_i.size == 0:
            return
        if self.pred:
            rowp, colp, prowp = self.bufs[r]
            self.K.update_tiles_pred(self.local, self.plocal, colp, rowp, prowp, sel_i, sel_j, self.clamp, self.lo)
        else:
            rowp, colp = self.bufs[r]
            self.K.update_tiles(self.local, colp, rowp, sel_i, sel_j, self.clamp, self.lo)
        if part != schedule.NEXT:
            del self.bufs[r]

    def tiles_except(self, r, part=schedule.ALL):
        """Local tile coordinates of round r's phase 3 (pivot row and column excluded):
        every one (``ALL``), those in tile row or column r + 1 (``NEXT``), or the others
        (``REST``)."""
        g = self.grid
        li_r, lj_r = g.local_row(r), g.local_col(r)
        ii, jj = np.meshgrid(np.arange(self.nt_rows), np.arange(self.nt_cols), indexing="ij")
        keep = np.ones(ii.shape, bool)
        if li_r is not None:
            keep[li_r, :] = False
        if lj_r is not None:
            keep[:, lj_r] = False
        if part != schedule.ALL:
            nxt = np.zeros(ii.shape, bool)
            li_n, lj_n = g.local_row(r + 1), g.local_col(r + 1)
            if li_n is not None:
                nxt[li_n, :] = True
            if lj_n is not None:
                nxt[:, lj_n] = True
            keep &= nxt if part == schedule.NEXT else ~nxt
        return ii[keep].astype(np.int64), jj[keep].astype(np.int64)


def _gather_tiles(comm, grid, local, n, bs, dtype, root=0):
    """Assemble every process's tiles into the n x n matrix on ``root`` (None elsewhere)."""
    nt = -(-n // bs)
    if comm.Get_rank() != root:
        comm.Send(np.ascontiguousarray(local), dest=root, tag=7)
        return None
    full = np.empty((nt * bs, nt * bs), dtype)
    for rank in range(grid.size):
        g = ProcessGrid(grid.rows, grid.cols, rank)
        rows, cols = g.tile_rows(nt), g.tile_cols(nt)
        if rank == root:
            part = local
        else:
            part = np.empty((len(rows), len(cols), bs, bs), dtype)
            comm.Recv(part, source=rank, tag=7)
        for li, I in enumerate(rows):
            for lj, J in enumerate(cols):
                full[I * bs:(I + 1) * bs, J * bs:(J + 1) * bs] = part[li, lj]
    return np.ascontiguousarray(full[:n, :n])


@register("mpi", "blocked-2d", default=True, options={**GRID, **LOOKAHEAD, **CHECKPOINT})
def blocked_2d(graph, plan) -> EngineOutput:
    """2D block-cyclic blocked Floyd-Warshall with lookahead (MPI + Numba)."""
    comm = mpi_util.world()
    bs = _block_size(plan)
    grid = ProcessGrid.for_size(comm.Get_size(), comm.Get_rank(), plan.options.get("grid"))
    target = output.choose_target(comm, plan)          # before any work: refused alike on every rank
    meta = {"processes": grid.size, "grid": [grid.rows, grid.cols]}
    if target is not None:
        def compute(p):
            with mpi_util.abort_on_error(comm):
                return _tile_parts(grid, *_solve_2d(comm, graph, p, grid, bs), p.n, bs)

        return output.finish_in_file(comm, graph, plan, target, compute, k_order=False, metadata=meta)
    with mpi_util.abort_on_error(comm):
        local, plocal, timings = _solve_2d(comm, graph, plan, grid, bs)
        t1 = time.perf_counter()
        dist = _gather_tiles(comm, grid, local, plan.n, bs, plan.dtype)
        pred = _gather_tiles(comm, grid, plocal, plan.n, bs, np.int32) if plan.predecessors else None
        timings["gather"] = time.perf_counter() - t1
        return output.gathered(comm, dist, pred, timings, meta, plan)


def _block_size(plan) -> int:
    bs = int(plan.block_size or DEFAULT_BLOCK)
    if bs < 1:
        raise FloydwarpError(f"block_size must be a positive integer, got {plan.block_size!r}")
    return bs


def _solve_2d(comm, graph, plan, grid, bs):
    """This rank's tiles, solved: ``(local, plocal, timings)``."""
    import numba

    nt = -(-plan.n // bs) if plan.n else 0
    t_start = time.perf_counter()
    local, plocal = start_tiles(graph, bs, plan.dtype, plan.inf, with_pred=plan.predecessors, grid=grid)
    start = time.perf_counter() - t_start
    lookahead = plan.options.get("lookahead", True)
    ckpt = checkpoint.from_plan(plan, graph, block=bs, comm=comm, extra={"lookahead": bool(lookahead)})
    clock = mpi_util.CommClock()
    stages = schedule.Stages(schedule.WallClock() if plan.options.get("phases") else None)
    previous = numba.get_num_threads()
    numba.set_num_threads(threads_for(plan, comm))
    try:
        t_compile = time.perf_counter()
        mpi_util.node_first(comm, lambda: _warm_up(plan))
        compile_ = time.perf_counter() - t_compile
        with clock():
            comm.Barrier()
        clock.seconds = 0.0
        t0 = time.perf_counter()
        engine = BlockCyclic(comm, grid, nt, local, plocal, bool(plan.clamp), clamp_floor(plan), clock)
        try:
            schedule.run(engine, lookahead=lookahead, checkpointer=ckpt, report=plan.report, stages=stages)
        finally:
            engine.free()
        compute = time.perf_counter() - t0
    finally:
        numba.set_num_threads(previous)
    return local, plocal, {"start": start, "compile": compile_, "compute": compute, "comm": clock.seconds,
                           **stages.timings()}


def _tile_parts(grid, local, plocal, timings, n, bs):
    """This rank's tiles as parts of the n x n result (padding cut off), for the parallel writer."""
    nt = -(-n // bs)
    parts = []
    for li, I in enumerate(grid.tile_rows(nt)):
        for lj, J in enumerate(grid.tile_cols(nt)):
            r0, c0 = I * bs, J * bs
            h, w = min(n, r0 + bs) - r0, min(n, c0 + bs) - c0
            parts.append(output.Part(r0, r0 + h, c0, c0 + w, local[li, lj, :h, :w],
                                     None if plocal is None else plocal[li, lj, :h, :w]))
    return parts, timings


def _warm_up(plan):
    """Compile every kernel specialization on a tiny problem (this process alone), off the clock."""
    from mpi4py import MPI

    dt = np.dtype(plan.dtype)
    local = np.zeros((2, 2, 2, 2), dt)
    plocal = np.zeros((2, 2, 2, 2), np.int32) if plan.predecessors else None
    engine = BlockCyclic(MPI.COMM_SELF, ProcessGrid(1, 1, 0), 2, local, plocal, True, clamp_floor(plan),
                         mpi_util.CommClock())
    schedule.run(engine, lookahead=True)
    engine.free()
