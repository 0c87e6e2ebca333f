"""In-core GPU runs: the whole matrix in one padded, pitched device buffer.

A run (:func:`execute`):

1. check that the padded matrices fit in free device memory (before allocating);
2. build the start matrix in a pitched, padded device buffer (layout.py): an edge
   list is uploaded and scattered on the device (no n^2 host matrix), one drawn on the
   device (generate.py) is scattered from where it lies; a dense host
   matrix goes up through pinned staging, converted into the staging buffers as it goes
   (staging.GraphRows: no n^2 host copy in the run's dtype); a dense CuPy matrix stays on the
   device;
3. ``compute(ctx)`` launches the algorithm's kernels, timed with CUDA events ("compute");
4. hand back an n x n matrix: a CuPy array when the input was on the device (or
   ``output="device"``), else a NumPy array (``output="host"`` forces it).  A host result
   without predecessors (64 MB or more) starts home during the last round (``Ctx.deliver``, delivery.py)
   where the algorithm's rounds leave it in ``d`` (``ctx.rounds(engine, result=True)``).

Timings: "h2d" (building and uploading the start matrix), "setup" (padding and
predecessor initialization on the device), "compute" (kernels only), "check" (the dtype
check of a run that needs one, on the device) and "d2h" (the copy back, or the unpadding
copy on the device); kernels compiled during a stage count as "compile", not as that
stage; with ``phases=True`` the stages of the
blocked schedule ("phase1", "phase2", "phase3") and of the predecessor methods.

Blocked algorithms whose rounds are plain kernel launches (the seed ``blocked`` kernels,
``fast``'s 64/128-tile variants) run :class:`KernelRounds` through ``schedule.run``.
"""
from __future__ import annotations

import contextlib
import time
from dataclasses import dataclass
from typing import Any, Callable, NamedTuple

import numpy as np

from .. import checkpoint, numeric, schedule
from ..errors import DeviceError, FloydwarpError
from ..graph.graph import DEVICE_BAND_ENTRIES
from ..plan import EngineOutput
from ..registry import register
from . import delivery, device, modules, panel, staging, start, transfer
from .layout import Layout


class Ctx:
    """What the kernels of one run need: the buffers and their scalar arguments."""

    def __init__(self, cp, d, pr, lay: Layout, plan):
        self.cp, self.d, self.pr, self.lay, self.plan = cp, d, pr, lay, plan
        self.dtype = np.dtype(plan.dtype)
        self.n = lay.n
        self.p = np.int64(lay.pitch)
        self.pp = np.int64(lay.pred_pitch)
        self.prp = pr if pr is not None else np.intp(0)
        #: how products combine entries (panel.Arith); the kernels take its clamp and -INF
        self.arith = panel.Arith.of(plan)
        self.clamp, self.ninf = self.arith.clamp, self.arith.ninf
        #: options["phases"]: time the schedule's stages with CUDA events ("phase1", ...)
        self.phase = schedule.Stages(modules.EventClock() if plan.options.get("phases") else None)
        #: what the kernels chose, for the result's metadata
        self.meta = {}
        #: the predecessors provably form no loop (solve() need not look for one)
        self.loop_free = False
        #: where the rows of the result go as the last round finishes them (delivery.Rows), or None
        self.deliver = None

    def report(self, done, total):
        self.plan.report(done, total)

    def rounds(self, engine, result=False):
        """The blocked schedule on ``engine``, timed and reported as this run; ``result``: its
        rounds leave the run's result in ``d``, whose rows may go home as they finish."""
        schedule.run(engine, report=self.report, stages=self.phase, deliver=self.deliver if result else None)


class Launch(NamedTuple):
    """One kernel launch per round: ``kernel(grid, block, args(r))``."""

    kernel: Any
    grid: tuple
    block: tuple
    args: Callable[[int], tuple]
    shared_mem: int = 0

    def __call__(self, r):
        self.kernel(self.grid, self.block, self.args(r), shared_mem=self.shared_mem)


class KernelRounds:
    """An engine of the blocked schedule whose phases are single kernel launches over
    the padded device matrix (tiles of B = ``lay.tile``); ``phase1`` may be None where
    phase 2's kernel closes the pivot itself ("pipe")."""

    def __init__(self, tiles: int, phase1: Launch | None, phase2: Launch, phase3: Launch):
        self.rounds = tiles
        self.phase1, self.phase2, self.phase3 = phase1, phase2, phase3

    def close_pivot(self, r):
        if self.phase1 is not None:
            self.phase1(r)

    def update_panels(self, r):
        if self.rounds > 1 or self.phase1 is None:    # a fused phase 2 also closes the pivot
            self.phase2(r)

    def product(self, r, part):
        if self.rounds > 1:
            self.phase3(r)


# ---------------------------------------------------------------------- registration
class InCore:
    """A registered gpu algorithm: :func:`execute` around ``compute(ctx)``; ``tile(plan)``
    (or a number) is what the matrix is padded to."""

    def __init__(self, compute, tile=1):
        self.compute, self.tile = compute, tile
        self.__doc__ = compute.__doc__

    def __call__(self, graph, plan) -> EngineOutput:
        tile = self.tile(plan) if callable(self.tile) else self.tile
        return execute(graph, plan, size(graph, plan, tile), self.compute)


def algorithm(name, *, tile=1, **kw):
    """Decorator: register ``compute(ctx)`` as gpu/<name>, run in core (:class:`InCore`)."""
    def deco(compute):
        register("gpu", name, **kw)(InCore(compute, tile))
        return compute
    return deco


# ---------------------------------------------------------------------- the run
@dataclass(frozen=True)
class Sizing:
    """Where a run's start matrix comes from and goes, and its peak device memory."""

    lay: Layout
    dense: Any            #: the graph's dense matrix, or None for an edge list
    on_device: bool       #: the dense matrix is a CuPy array
    to_device: bool       #: the result stays on the device
    needed: int           #: peak device bytes


def dense_on_device(graph) -> bool:
    """Whether ``graph`` is a dense matrix held by the GPU (its result then stays there)."""
    from ..arrays import is_device_array

    return is_device_array(graph.dense)


def wants_device(plan, on_device_input: bool) -> bool:
    """Whether the result stays on the device: ``output="device"``, or by default for a device
    input and for a result bound for an ``.npy`` file (``output_file``), which is then written
    from the device through pinned staging, with no copy of the whole matrix in host memory."""
    out = plan.options.get("output", "auto")
    if out in (None, "auto"):
        bound = plan.options.get("output_file")
        return on_device_input or (bound is not None and str(bound).lower().endswith(".npy"))
    if out == "device":
        return True
    if out == "host":
        return False
    raise FloydwarpError(f"output={out!r} is not understood; use 'host', 'device' or 'auto'")


def size(graph, plan, tile: int) -> Sizing:
    """The layout of a run with ``tile``-padded matrices and the device memory it needs."""
    dtype = np.dtype(plan.dtype)
    n = int(graph.n)
    dense = graph.dense
    on_device = dense_on_device(graph)
    to_device = wants_device(plan, on_device)
    lay = Layout.make(n, dtype.itemsize, tile, plan.predecessors)
    if dense is None:
        # uploaded edges' compact columns (none for edges drawn on the device: they are there)
        temporary = 0 if graph.device_edges() is not None else graph.num_edges * 24
    elif on_device:
        temporary = min(n * n, DEVICE_BAND_ENTRIES) * (10 + dtype.itemsize)   # one band's temporaries
    else:
        temporary = 0
    if plan.predecessors:
        temporary = max(temporary, n * n * 5)         # where() temporaries of the initialization
    return Sizing(lay, dense, on_device, to_device, lay.device_bytes(staging=temporary, output_copy=to_device))


def execute(graph, plan, sizing: Sizing, compute) -> EngineOutput:
    """Steps 1-4 of the module docstring around ``compute(ctx)``, which launches kernels."""
    import cupy as cp

    dtype = np.dtype(plan.dtype)
    n = int(graph.n)
    lay, dense = sizing.lay, sizing.dense
    timings = {"h2d": 0.0, "setup": 0.0, "compute": 0.0, "d2h": 0.0}
    if n == 0:
        xp = cp if sizing.to_device else np
        d = xp.zeros((0, 0), dtype=dtype)
        pred = xp.zeros((0, 0), dtype=np.int32) if plan.predecessors else None
        return EngineOutput(d, pred, timings)
    if checkpoint.requested(plan):
        raise FloydwarpError(f"gpu/{plan.algorithm} does not checkpoint; gpu/fast (without predecessors) and "
                             f"gpu/out-of-core do, as do the cpu and mpi backends")
    device.check_memory(sizing.needed, n, dtype, plan)

    try:
        # ---- start matrix, padded and pitched
        compiled = modules.compile_seconds()
        t0 = time.perf_counter()
        inf = plan.inf
        isz = dtype.itemsize
        if dense is not None and sizing.on_device:
            # band by band: the conversion's temporaries stay small beside the two matrices
            d = start.matrix(lay.N, lay.pitch, dtype, inf) if lay.padded else cp.empty((n, n), dtype=dtype)
            for lo, hi in graph.device_bands():
                d[lo:hi, :n] = graph.matrix_rows(lo, hi, dtype, inf, xp=cp)
        elif dense is not None:
            d = start.matrix(lay.N, lay.pitch, dtype, inf)
            staging.upload(staging.Pitched.of(d, n, n), staging.GraphRows(graph, dtype, inf))
        elif graph.device_edges() is not None:
            d = start.from_device_edges(graph.device_edges(), n, lay.N, lay.pitch, dtype, inf)
        else:
            d = start.from_edges(graph.edges(), n, lay.N, lay.pitch, dtype, inf)
        cp.cuda.Device().synchronize()
        t1 = time.perf_counter()
        compiled = modules.record_stage(timings, "h2d", t1 - t0, compiled)

        # ---- predecessors (the padding's diagonal is 0 already: start.matrix)
        pr = None
        if plan.predecessors:
            pr = cp.empty((lay.N, lay.pred_pitch), dtype=cp.int32)
            start.seed_predecessors(d, pr, n, inf)
        cp.cuda.Device().synchronize()
        t2 = time.perf_counter()
        compiled = modules.record_stage(timings, "setup", t2 - t1, compiled)

        # ---- kernels, while threads prepare the host memory of the result
        hosts = None
        if not sizing.to_device:
            hosts = [transfer.HostMatrix((n, n), dt, lock=True) for dt in [dtype] + [np.int32] * plan.predecessors]
        ctx = Ctx(cp, d, pr, lay, plan)
        if hosts is not None and pr is None and n * n * isz >= delivery.EARLY_MIN_BYTES:
            ctx.deliver = delivery.Rows(hosts[0], d, n, n)
        begin, end = cp.cuda.Event(), cp.cuda.Event()
        try:
            begin.record()
            compute(ctx)
            end.record()
            end.synchronize()
        except BaseException:
            if ctx.deliver is not None:
                with contextlib.suppress(Exception):   # the error that stopped the run is the one to see
                    ctx.deliver.wait()         # no copy may land in memory let go below
            for host in hosts or ():
                host.result()                  # ends its mapping threads (the pages unlock with the array)
            raise
        compiled = modules.record_stage(timings, "compute", cp.cuda.get_elapsed_time(begin, end) / 1000.0, compiled)
        timings.update(ctx.phase.timings())

        # ---- the dtype check a run may need (numeric.verify_uncapped): a millisecond here,
        # a pass over the host copy otherwise (0.17 s for int16 at n = 32768 on 16 cores)
        uncapped = None
        if plan.verify_after:
            t = time.perf_counter()
            uncapped = numeric.verify_uncapped(d[:n, :n], plan.inf, plan.stats.max_weight)
            compiled = modules.record_stage(timings, "check", time.perf_counter() - t, compiled)

        # ---- result
        t3 = time.perf_counter()
        if hosts is None:
            dist = _unpadded(cp, d, n)
            pred = None if pr is None else _unpadded(cp, pr, n)
        elif ctx.deliver is not None:
            dist, pred = ctx.deliver.finish(), None
            ctx.meta["d2h_overlapped"] = ctx.deliver.share()
        else:
            dist = hosts[0].fill(d, n, n)
            pred = None if pr is None else hosts[1].fill(pr, n, n)
        cp.cuda.Device().synchronize()
        modules.record_stage(timings, "d2h", time.perf_counter() - t3, compiled)
        meta = {"device": device.current()["name"], "tile": lay.tile, "padded_n": lay.N, "row_bytes": lay.row_bytes,
                **ctx.meta}
        return EngineOutput(dist, pred, timings, pred_loops=False if ctx.loop_free else None, uncapped=uncapped,
                            metadata=meta)
    except cp.cuda.memory.OutOfMemoryError as exc:
        raise DeviceError(
            f"the GPU ran out of memory for n = {n} ({dtype.name}): {exc}; "
            f"use a narrower dtype or backend='cpu'") from exc
    except (cp.cuda.runtime.CUDARuntimeError, cp.cuda.driver.CUDADriverError) as exc:
        raise DeviceError(
            f"CUDA error in gpu/{plan.algorithm} (n = {n}, dtype {dtype.name}): {exc}. "
            f"The device may need a restart of this process; backend='cpu' is unaffected") from exc


def cdiv(a, b):
    return -(-int(a) // int(b))


def _unpadded(cp, buf, n: int):
    """The n x n corner of a padded device matrix: ``buf`` itself where it has no padding."""
    if buf.shape == (n, n):
        return buf
    out = cp.empty((n, n), dtype=buf.dtype)
    panel.copy(out, buf[:n, :n])
    return out
