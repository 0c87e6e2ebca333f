"""Multi-GPU Floyd-Warshall: one rank per GPU, the matrix in 2D blocks, panels between the GPUs.

Written once for any control plane (:mod:`floydwarp.multigpu.control`) and any links: the ``mpi``
backend runs it under ``mpiexec`` (algorithms ``gpu-2d`` and ``gpu-rows``, in
:mod:`floydwarp.mpi.gpu`; CUDA IPC copies on one node, NCCL across nodes), the ``multigpu``
backend (:mod:`floydwarp.multigpu.engine`, ``floydwarp solve --gpus N``) in a thread per GPU of
the caller's process (peer-to-peer copies).

Distribution (:class:`floydwarp.multigpu.partition.BlockPartition`): panels of ``width``,
contiguous 2D blocks on a Pr x Pc process grid, each process's block one device matrix.

A round r of the blocked schedule (floydwarp.schedule; :class:`Gpu2D` is the engine; pivot
panel K = panel r, owned by process row pr and process column pc):

1. the owner of the pivot block closes it (``tiles.close_block``) and broadcasts it
   along its process row and column (the links);
2. process row pr updates its slice of the row panel R = min(R, P (x) R), process
   column pc its slice of the column panel C = min(C, C (x) P) (``panel.minplus``);
3. R goes down every process column and C (already in ``panel.to_words`` form) along
   every process row (the links' broadcasts);
4. every process: L = min(L, C (x) R) over its whole block, the pivot panels excepted.

Lookahead (the schedule's): phase 3 of round r first updates the local parts of panel
r + 1, then steps 1-3 of round r + 1 start on a second, high-priority stream (the
broadcasts included) while the rest of round r's phase 3 runs; round r + 1's phase 3 waits
for them.

MPI (when used) carries only host data: NCCL unique ids or IPC handles, flags and the
gathered result.
``gpu-rows`` is seed 002's 1D decomposition in its MPI + GPU form: the same engine on
a P x 1 grid with 64-wide panels, so each round broadcasts one 64-row panel of
distances from its owner and every GPU updates its rows.
"""
from __future__ import annotations

import contextlib
import time

import numpy as np

from .. import checkpoint, numeric, schedule
from ..errors import FloydwarpError
from ..gpu.panel import Arith, band_skip, row_bands
from ..options import LOOKAHEAD
from ..grid import ProcessGrid
from . import blocks, nccl
from .control import Control
from .partition import UNIT, BlockPartition, choose_grid, split_units, union_skip
from .timeline import COLUMNS as TIMELINE_COLUMNS, Timeline, summarize

#: default panel width: wide enough that a round's broadcasts and pivot work are
#: small against its phase 3, narrow enough that the pivot closure stays short
DEFAULT_WIDTH = 512
#: ``gpu-rows``: seed 002 broadcasts row k; we broadcast one 64-row panel at a time
ROWS_WIDTH = UNIT
#: why ``grid`` and ``block_size`` default as they do (``choices``: the result's metadata says it);
#: measured with the threads launcher on 4 x H200, int32, whole call and compute stage
#: (bench/results/multigpu/grid-width-sweep-h200x4.json)
GRID_REASON = ("the most square grid with rows <= columns: on 4 x H200, 2 x 2 ran fastest (n = 32768: compute "
               "0.635 s against 0.650 s on 4 x 1 and 0.655 s on 1 x 4; n = 65536: 4.83 s against 5.15 s on 1 x 4); "
               "on 2 GPUs 1 x 2 and 2 x 1 tie")
WIDTH_REASON = ("512-column panels: 256 and 1024 measured within 1 % of 512 on 2 and 4 x H200 at n = 32768 and "
                "65536 (narrower: more rounds, each with its pivot and copies; wider: longer pivot work a round)")
#: the dtypes of the multi-GPU algorithms
GPU_DTYPES = ("int16", "int32", "int64", "float32", "float64")


def _highest_priority(cp):
    """The most urgent CUDA stream priority (None where CuPy cannot tell)."""
    try:
        return cp.cuda.runtime.deviceGetStreamPriorityRange()[1]
    except AttributeError:
        return None


class Gpu2D:
    """One process's share of the panel schedule (an engine of floydwarp.schedule): its
    block ``L`` on its GPU, the panel buffers (two sets, for lookahead) and its
    communicators (NCCL's, or those of peer or IPC copies).  Phases 1-2 and the broadcasts
    run on a high-priority side stream, phase 3 on the main stream."""

    def __init__(self, part: BlockPartition, grid: ProcessGrid, local, plan, comms, reserve_sms: int = 0, *,
                 xp=None, ops=None, close=None, broadcast=None, rest_bands: int = 1, timeline=None):
        """``xp`` (CuPy), ``ops`` (``gpu.panel``), ``close`` (``gpu.tiles.close_block``) and
        ``broadcast`` (:func:`floydwarp.multigpu.nccl.bcast`) are replaceable so that the tests
        run this very schedule on NumPy, with threads for processes."""
        if xp is None:
            import cupy as xp
        if ops is None:
            from ..gpu import panel as ops
        if close is None:
            from ..gpu.tiles import close_block as close
        cp, panel = xp, ops
        self.cp, self.panel, self.close = xp, ops, close
        self.broadcast_array = broadcast or nccl.bcast
        self.part, self.grid, self.L, self.plan, self.comms = part, grid, local, plan, comms
        self.rounds = part.panels
        dt = np.dtype(plan.dtype)
        self.arith = Arith.of(plan)
        rows, cols = local.shape
        w, wd = part.width, panel.word_dtype(dt)
        self.R = [cp.empty((w, cols), dt) for _ in range(2)]        # received row panels
        self.CT = [cp.empty((w, rows), wd) for _ in range(2)]       # column panels in word form
        self.P = cp.empty(w * w, dt)                                # the pivot block (contiguous)
        self.PT = cp.empty(w * w, wd)
        self.main = cp.cuda.Stream(non_blocking=True)
        # the lookahead stream's kernels go first wherever the GPU has room
        self.side = cp.cuda.Stream(non_blocking=True, priority=_highest_priority(cp))
        self.comm_events = []
        #: round -> (R, CT, roles) of its panels; round -> the side stream's event once they are broadcast
        self.panels, self.ready = {}, {}
        #: phase 3's bulk (``REST``) as this many launches over bands of rows: between two, the
        #: side stream's kernels (next round's pivot, panels, NCCL) get SMs that the persistent
        #: product kernel otherwise holds until it ends
        self.rest_bands = max(1, int(rest_bands))
        #: a :class:`~floydwarp.multigpu.timeline.Timeline`, or None
        self.timeline = timeline
        self.blocks = None
        if reserve_sms:
            from ..gpu import device

            self.blocks = max(1, device.current()["sm_count"] - int(reserve_sms)) * panel.minplus_shape(dt)[4]

    # -- phases 1-2 and the broadcasts of round t, on the side stream
    def close_pivot(self, t):
        """The pivot block closed by its owner (after the main stream's work so far) and
        sent along its process row and column."""
        roles = self.part.round_roles(t, self.grid)
        w, lr, lc = roles["width"], roles["local_row"], roles["local_col"]
        P = self.P[:w * w].reshape(w, w)
        self.side.wait_event(self.main.record())
        with self.side:
            if roles["closes_pivot"]:
                with self._span(t, "close", self.side):
                    pivot = self.L[lr:lr + w, lc:lc + w]
                    self.close(pivot, self.plan, stream=self.side)
                    P[...] = pivot
            with self._span(t, "bcast_pivot", self.side):
                if roles["row_panel"]:
                    self._bcast(self.comms.row, P, roles["pivot_col"])
                if roles["col_panel"]:
                    self._bcast(self.comms.col, P, roles["pivot_row"])
        self.panels[t] = None, None, roles

    def update_panels(self, t):
        """This process's slices of the row panel R = min(R, P (x) R) and the column panel
        C = min(C, C (x) P); C ends in word form, phase 3's left operand."""
        pn, L, stream = self.panel, self.L, self.side
        roles = self.panels[t][2]
        w, lr, lc = roles["width"], roles["local_row"], roles["local_col"]
        slot = t % 2
        P = self.P[:w * w].reshape(w, w)
        PT = self.PT[:w * w].reshape(w, w)
        with stream, self._span(t, "panels", stream):
            if roles["row_panel"]:
                R = L[lr:lr + w]
                pn.to_words(P, out=PT, stream=stream)
                pn.minplus(R, PT, R, self.arith, stream=stream,
                           skip_cols=(lc // UNIT, w // UNIT) if roles["col_panel"] else (0, 0))
            else:
                R = self.R[slot][:w]
            CT = self.CT[slot][:w]
            if roles["col_panel"]:
                C = L[:, lc:lc + w]
                pn.to_words(C, out=CT, stream=stream)            # C before its update
                pn.minplus(C, CT, P, self.arith, stream=stream,
                           skip_rows=(lr // UNIT, w // UNIT) if roles["row_panel"] else (0, 0))
                pn.to_words(C, out=CT, stream=stream)            # ... and after: phase 3's left operand
        self.panels[t] = R, CT, roles

    def broadcast(self, t):
        """R down every process column, C (in word form) along every process row."""
        R, CT, roles = self.panels[t]
        with self.side, self._span(t, "bcast_panels", self.side):
            self._bcast(self.comms.col, R, roles["pivot_row"])
            self._bcast(self.comms.row, CT, roles["pivot_col"])
        self.ready[t] = self.side.record()

    def warm_links(self):
        """One broadcast of each panel buffer along its communicator, before the rounds: NCCL
        connects the protocols of large messages lazily, on their first use (1.9 s of the first
        round at n = 65536 on 4 GPUs), which then happens here, off the rounds' clock."""
        with self.side:
            self._bcast(self.comms.col, self.R[0], 0)
            self._bcast(self.comms.row, self.CT[0], 0)
        self.side.synchronize()
        self.comm_events.clear()

    def _bcast(self, comm, array, root):
        if comm is None or array.size == 0:
            return
        a = self.cp.cuda.Event()
        a.record(self.side)
        self.broadcast_array(comm, array, root, self.side)
        b = self.cp.cuda.Event()
        b.record(self.side)
        self.comm_events.append((a, b))

    def _span(self, t, op, stream):
        if self.timeline is None:
            return contextlib.nullcontext()
        return self.timeline.span(t, op, stream, "main" if stream is self.main else "side")

    # -- phase 3, on the main stream
    def _update(self, c, at, b, skip_rows=(0, 0), skip_cols=(0, 0)):
        if c.size == 0:
            return
        self.panel.minplus(c, at, b, self.arith, skip_rows=skip_rows,
                           skip_cols=skip_cols, stream=self.main, blocks=self.blocks)

    def product(self, t, part):
        """``L = min(L, C (x) R)`` outside round t's panels: everywhere (``ALL``), only the
        parts in round t + 1's panels (``NEXT``), or everything but them (``REST``); or on
        the rows ``part = (start, stop)`` of one of :meth:`row_parts`."""
        if t in self.ready:
            self.main.wait_event(self.ready.pop(t))
        with self._span(t, part if isinstance(part, str) else "band", self.main):
            self._product(t, part)

    def _product(self, t, part):
        banded = isinstance(part, tuple)
        R, CT, roles = self.panels[t] if part == schedule.NEXT or banded else self.panels.pop(t)
        w = roles["width"]
        cur_r = (roles["local_row"], w) if roles["row_panel"] else None
        cur_c = (roles["local_col"], w) if roles["col_panel"] else None
        L = self.L
        if part == schedule.ALL:
            self._update(L, CT, R, union_skip(cur_r), union_skip(cur_c))
            return
        if banded:
            lo, hi = part
            self._update(L[lo:hi], CT[:, lo:hi], R, band_skip(union_skip(cur_r), lo // UNIT, hi // UNIT),
                         union_skip(cur_c))
            return
        nxt = self.part.round_roles(t + 1, self.grid)
        nw = nxt["width"]
        nxt_r = (nxt["local_row"], nw) if nxt["row_panel"] else None
        nxt_c = (nxt["local_col"], nw) if nxt["col_panel"] else None
        if part == schedule.NEXT:
            if nxt_r is not None:
                r0 = nxt_r[0]
                self._update(L[r0:r0 + nw], CT[:, r0:r0 + nw], R, skip_cols=union_skip(cur_c))
            if nxt_c is not None:
                c0 = nxt_c[0]
                self._update(L[:, c0:c0 + nw], CT, R[:, c0:c0 + nw], skip_rows=union_skip(cur_r, nxt_r))
        else:
            skip_r, skip_c = union_skip(cur_r, nxt_r), union_skip(cur_c, nxt_c)
            for lo, hi in split_units(L.shape[0], self.rest_bands):
                self._update(L[lo:hi], CT[:, lo:hi], R, band_skip(skip_r, lo // UNIT, hi // UNIT), skip_c)

    def row_parts(self, t):
        """The last round's phase 3 in bands of this block's rows (``panel.row_bands``)."""
        return [(band, band) for band in row_bands(self.L.shape[0])]

    def comm_seconds(self) -> float:
        """GPU time inside the broadcasts (waiting for the peers included)."""
        get = self.cp.cuda.get_elapsed_time
        return sum(get(a, b) for a, b in self.comm_events) / 1000.0


# ------------------------------------------------------------------------ setup and the whole run
#: the solve options of a rank's rounds (multigpu/engine.py and mpi/gpu.py declare them)
OPTIONS = {
    **LOOKAHEAD,
    "reserve_sms": "SMs phase 3 leaves to the broadcasts on the side stream (default 0: it takes every SM)",
    "rest_bands": "bands of rows the rest of a round's phase 3 is issued in (default 1: one product)",
    "timeline": "True: record every stream's operations with CUDA events (metadata['timeline'])",
}


def width_of(plan, default=DEFAULT_WIDTH) -> int:
    w = int(plan.block_size or default)
    if w <= 0 or w % UNIT:
        raise FloydwarpError(f"block_size for the multi-GPU engines is the panel width: a positive multiple of "
                             f"{UNIT} (e.g. 256, 512, 1024), got {plan.block_size}")
    return w


def choices(plan, grid_shape) -> dict:
    """Why this run's grid and panel width are what they are: asked for, the algorithm's own, or
    the defaults' measured reasons (:data:`GRID_REASON`, :data:`WIDTH_REASON`)."""
    if grid_shape is not None:
        grid = "the algorithm's (rows of panels: P x 1)"
    elif plan.options.get("grid") is not None:
        grid = "asked for (grid=)"
    else:
        grid = GRID_REASON
    width = "asked for (block_size=)" if plan.block_size else (
        "the algorithm's (64-row panels)" if grid_shape is not None else WIDTH_REASON)
    return {"grid_choice": grid, "width_choice": width}


def gpu_count(plan) -> int:
    """GPUs to use: ``gpus=`` or every visible one, refused beyond what is there."""
    import cupy as cp

    have = cp.cuda.runtime.getDeviceCount()
    want = plan.options.get("gpus")
    want = have if want is None else int(want)
    if want < 1:
        raise FloydwarpError(f"gpus must be at least 1, got {want}")
    if want > have:
        raise FloydwarpError(f"asked for {want} GPUs but {have} are visible (CUDA_VISIBLE_DEVICES)")
    return want


def check_plan(plan):
    """Refusals every process makes alike, before any collective."""
    if plan.predecessors:
        raise FloydwarpError(f"{plan.backend}/{plan.algorithm} computes distances only; for predecessors use "
                             "the CPU algorithms of the mpi backend (blocked-2d, rows) or backend='gpu'")
    if checkpoint.requested(plan):
        raise FloydwarpError(f"{plan.backend}/{plan.algorithm} does not checkpoint; gpu/fast (one GPU, out of "
                             "core), cpu/blocked and mpi/blocked-2d do")


def run_rank(control: Control, plan, source, device_id: int, *, width: int, grid_shape=None, on_rounds=None,
             links=nccl):
    """The whole run of one process: its block built on its GPU by ``source.block``
    (:mod:`floydwarp.multigpu.blocks`: from an edge list or host rows), the rounds, and
    (L on the GPU, the partition, the grid, timings, metadata).
    ``on_rounds(part, grid, engine)``, if given, is called as the rounds begin; what it
    returns is the rounds' ``deliver`` (``schedule.run``: the block's rows as the last round
    finishes them), or None.  ``links`` moves the panels: :mod:`~floydwarp.multigpu.nccl`
    (processes, any host), an :class:`~floydwarp.mpi.links.IpcLinks` (processes of one node), or
    a :class:`~floydwarp.multigpu.peers.PeerLinks` (threads of one process)."""
    import cupy as cp

    timings = {}
    t0 = time.perf_counter()
    rows, cols = choose_grid(control.size, grid_shape)
    grid = ProcessGrid(rows, cols, control.rank)
    part = BlockPartition(plan.n, width, rows, cols)
    dev = cp.cuda.Device(device_id)
    dev.use()
    L = source.block(part, grid, np.dtype(plan.dtype), plan.inf)
    comms = links.grid_comms(control, grid)
    try:
        timeline = Timeline(cp) if plan.options.get("timeline") else None
        engine = Gpu2D(part, grid, L, plan, comms, reserve_sms=int(plan.options.get("reserve_sms", 0)),
                       broadcast=links.bcast, rest_bands=int(plan.options.get("rest_bands", 1)), timeline=timeline)
        warm_up(plan)
        engine.warm_links()
        dev.synchronize()
        setup = time.perf_counter() - t0
        control.barrier()
        t1 = time.perf_counter()
        if timeline is not None:
            timeline.start(engine.main)
        deliver = None if on_rounds is None else on_rounds(part, grid, engine)
        schedule.run(engine, lookahead=plan.options.get("lookahead", True),
                     report=plan.report if control.rank == 0 else None, deliver=deliver)
        dev.synchronize()
        compute = time.perf_counter() - t1
        comm = engine.comm_seconds()
    except BaseException:
        links.drop_comms(grid)           # a run that broke off leaves its communicators unusable
        raise
    timings["setup"] = control.allreduce(setup, "max")      # the slowest GPU's: the others waited for it
    timings["compute"] = control.allreduce(compute, "max")
    timings["comm"] = control.allreduce(comm, "max")
    meta = {"processes": control.size, "grid": [rows, cols], "panel_width": width, "rounds": part.panels,
            "lookahead": bool(plan.options.get("lookahead", True)), "rest_bands": engine.rest_bands}
    if timeline is not None:
        spans = control.gather(timeline.rows(), root=0)
        if spans is not None:
            meta["timeline"] = {"columns": list(TIMELINE_COLUMNS), "ranks": spans,
                                "summary": [summarize(r) for r in spans]}
    return L, part, grid, timings, meta


def run_delivered(control: Control, plan, source, device_id: int, *, width: int, grid_shape, deliver_into,
                  links=nccl):
    """:func:`run_rank` with the block delivered as the last round finishes it: ``deliver_into(L,
    (r0, r1, c0, c1), stream)`` makes the :mod:`floydwarp.gpu.delivery` object that takes rows
    r0 .. r1, columns c0 .. c1 of the result from the block ``L`` whose kernels run on
    ``stream``: a ``Rows`` into host memory (the result's own, or a mapping of it shared
    between processes) or a ``DeviceRows`` into a matrix on a GPU.  Returns ``(result, timings,
    negative, uncapped, metadata)``; ``result``: what the delivery's ``finish`` returned;
    ``negative``: whether any diagonal went negative; ``uncapped``:
    :func:`floydwarp.numeric.verify_uncapped` of the whole result where the plan asks for it
    (``verify_after``), else None."""
    from ..gpu import device

    rows = []

    def deliver_rows(part, grid, engine):
        r0, r1, c0, c1 = blocks.real_extent(part, grid)
        rows.append(deliver_into(engine.L, (r0, max(r0, r1), c0, max(c0, c1)), engine.main))
        return rows[-1]

    try:
        L, part, grid, timings, meta = run_rank(control, plan, source, device_id, width=width, grid_shape=grid_shape,
                                                on_rounds=deliver_rows, links=links)
        uncapped = None
        if plan.verify_after:          # on each GPU while its rows go home: not a pass over the host result
            t = time.perf_counter()
            r0, r1, c0, c1 = blocks.real_extent(part, grid)
            mine = L[:max(0, r1 - r0), :max(0, c1 - c0)]
            uncapped = control.allreduce(mine.size == 0 or bool(numeric.verify_uncapped(
                mine, plan.inf, plan.stats.max_weight)), "and")
            timings["check"] = time.perf_counter() - t
        t = time.perf_counter()
        result = rows[0].finish()
        negative = negative_anywhere(control, L, part, grid)
        timings["gather"] = control.allreduce(time.perf_counter() - t, "max")
        meta["gather_overlapped"] = rows[0].share()
        meta["device"] = device.current()["name"]
        return result, timings, negative, uncapped, meta
    except BaseException:
        for started in rows:
            try:
                started.wait()
            except Exception:  # noqa: BLE001 -- the error that stopped the run is the one to see
                pass
        raise


def negative_anywhere(control: Control, block, part: BlockPartition, grid: ProcessGrid) -> bool:
    """Whether a diagonal entry of any process's ``block`` (on its GPU or in host memory, at
    the block's place) went negative."""
    return control.allreduce(blocks.negative_on_diagonal(block, part, grid), "or")


def warm_up(plan):
    """Compile the panel kernels of this dtype on one 64 x 64 block, off the clock."""
    import cupy as cp
    import dataclasses

    from ..gpu import panel, tiles

    dt = np.dtype(plan.dtype)
    block = cp.zeros((UNIT, UNIT), dt)
    at = panel.to_words(block)
    panel.minplus(block, at, block, Arith.of(plan))
    tiles.close_block(block, dataclasses.replace(plan, progress=None))
