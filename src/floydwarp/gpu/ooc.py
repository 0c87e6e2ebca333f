"""Out-of-core GPU Floyd-Warshall: the matrix stays in host memory and streams through the GPU.

When the matrix does not fit in GPU memory (or in ``max_gpu_memory=`` bytes), it lives
in pinned host memory -- or, with ``workdir=DIR``, in a memory-mapped ``.npy`` file
there, for matrices larger than RAM -- and each round of blocked Floyd-Warshall with a
wide pivot panel K (``w`` columns, ``w`` in the thousands) runs as

1. the pivot row panel R = D[K, :] and column panel C = D[:, K] are on the GPU (loaded
   from the host in round 0, left there by the previous round after that); the pivot
   block is closed (``tiles.close_block``) and both panels updated with it
   (``panel.minplus``); they go back to the host on a copy stream;
2. every other w x w tile streams through: host -> GPU, T = min(T, C[I] (x) R[J]), GPU ->
   host, on ``STREAMS`` CUDA streams with a buffer each, so the copies of some tiles
   overlap the products of others (PCIe copies in both directions at once).  Tiles of the
   next round's panels are also copied into the second pair of panel buffers on the
   GPU, so a round never waits for its panels to cross PCIe.

A tile's product does w^3 add-mins for 2 w^2 elements moved, so the GPU stays busy when
``w >= rate * itemsize / (PCIe bandwidth)``: ``choose_width`` takes the measured pinned
bandwidth and the kernel's rate and picks the widest panel that fits the memory cap.
"""
from __future__ import annotations

import contextlib
import time
from dataclasses import dataclass

import numpy as np

from .. import checkpoint, schedule
from ..errors import DeviceError, FloydwarpError
from ..options import CHECKPOINT, WORKDIR
from ..plan import EngineOutput
from ..registry import register
from . import device, modules, panel, tiles, traffic
from .host import HostMatrix, pcie_bandwidth
from .layout import format_bytes, round_up

#: CUDA streams (and tile buffers) that tiles are spread over
STREAMS = 3
#: panel width bounds; wider panels make fewer rounds but longer pivot closures
PANEL_MIN, PANEL_MAX = 64, 4096
#: the panel product's rate on an H100 (bench/NOTES.md: M = 16384, K = 4096), relaxations per
#: second: the width is chosen so that a tile's product outlasts its copies at this rate
EXPECTED_RATE = {"int16": 28.7e12, "int32": 14.9e12, "float32": 12.0e12, "int64": 3.1e12, "float64": 1.1e12}
#: device memory left aside for CuPy's pools, the pivot closure's scratch and the driver
RESERVE_BYTES = 16 << 20


@dataclass(frozen=True)
class OocLayout:
    """Panel width and the device buffers of an out-of-core run (plain arithmetic)."""

    n: int
    w: int            #: panel width = tile side (a multiple of 64)
    itemsize: int
    wordsize: int     #: itemsize of the transposed column panel (int16: 4)

    @property
    def padded(self) -> int:
        return round_up(max(self.n, 1), panel.UNIT)

    @property
    def rounds(self) -> int:
        return -(-self.n // self.w)

    def span(self, t: int) -> tuple[int, int, int]:
        """(first index, real length, padded length) of panel / tile row ``t``."""
        lo = t * self.w
        real = min(self.w, self.n - lo)
        return lo, real, round_up(real, panel.UNIT)

    @staticmethod
    def device_bytes_for(n, w, itemsize, wordsize, streams=STREAMS) -> int:
        npad = round_up(max(n, 1), panel.UNIT)
        panels = 4 * w * npad * itemsize + w * npad * wordsize    # R, R', C, C', C transposed
        tiles = streams * w * w * itemsize
        pivot = w * w * wordsize + w * panel.UNIT * 4              # P transposed, closure scratch
        return panels + tiles + pivot + RESERVE_BYTES

    @property
    def device_bytes(self) -> int:
        return self.device_bytes_for(self.n, self.w, self.itemsize, self.wordsize)


def needed_width(itemsize: int, rate: float, bandwidth: float) -> int:
    """The narrowest panel whose tile products outlast their copies twice over."""
    return round_up(max(2.0 * rate * itemsize / bandwidth, 1.0), panel.UNIT)


def choose_width(n: int, dtype, budget: int, bandwidth: float | None = None, refuse=FloydwarpError) -> int:
    """The widest panel (multiple of 64, at most max(PANEL_MAX, needed_width)) whose
    buffers fit in ``budget`` bytes of device memory; else ``refuse(message)`` is raised."""
    dt = np.dtype(dtype)
    wsz = panel.word_dtype(dt).itemsize
    upper = PANEL_MAX
    if bandwidth:
        upper = max(upper, needed_width(dt.itemsize, EXPECTED_RATE[dt.name], bandwidth))
    upper = min(upper, round_up(max(n, 1), panel.UNIT))
    best = None
    for w in range(PANEL_MIN, upper + 1, panel.UNIT):
        if OocLayout.device_bytes_for(n, w, dt.itemsize, wsz) <= budget:
            best = w
    if best is None:
        need = OocLayout.device_bytes_for(n, PANEL_MIN, dt.itemsize, wsz)
        raise refuse(
            f"out-of-core needs at least {need} bytes ({format_bytes(need)}) of GPU memory for n = {n} "
            f"({dt.name}, {PANEL_MIN}-wide panels); only {budget} bytes ({format_bytes(budget)}) may be used")
    return best


def tile_order(rounds: int, r: int) -> list[tuple[int, int]]:
    """Phase-3 tiles of round ``r``: every (I, J) off the pivot row and column, the next
    round's panels first (their copies into the next panel buffers then overlap the rest)."""
    others = [t for t in range(rounds) if t != r]
    nxt = r + 1
    first = [(i, j) for i in others for j in others if i == nxt or j == nxt]
    rest = [(i, j) for i in others for j in others if i != nxt and j != nxt]
    return first + rest


# ---------------------------------------------------------------------- the engine
#: the solve options of an out-of-core run (fast's too: it may go out of core)
OPTIONS = {
    "panel_width": f"pivot columns a round streams, a multiple of {panel.UNIT} (default: chosen from the GPU "
                   "memory and the PCIe bandwidth)",
    **WORKDIR, **CHECKPOINT, **panel.OPTIONS,
}


@register("gpu", "out-of-core", predecessors=False, bytes_moved=traffic.out_of_core_model, options=OPTIONS,
          description="the matrix in pinned host memory (or a memory-mapped file with workdir=DIR), streamed "
                      "through the GPU in wide panels on several CUDA streams; 'fast' switches to it when the "
                      "matrix does not fit in GPU memory or max_gpu_memory")
def solve(graph, plan) -> EngineOutput:
    """Out-of-core: the matrix in host memory, streamed through the GPU."""
    import cupy as cp

    if plan.predecessors:
        raise FloydwarpError("the out-of-core GPU engine computes distances only; for predecessors use "
                             "backend='cpu' with workdir=DIR, or a GPU with room for the matrix")
    dt = np.dtype(plan.dtype)
    n = int(graph.n)
    dev = device.current()
    bw = pcie_bandwidth(cp.cuda.Device().id)
    bandwidth = min(bw["h2d"], bw["d2h"])
    w = int(plan.options.get("panel_width") or choose_width(n, dt, device.budget(plan), bandwidth,
                                                            refuse=lambda text: device.memory_error(text, plan)))
    if w % panel.UNIT or w <= 0:
        raise FloydwarpError(f"panel_width must be a positive multiple of {panel.UNIT}, got {w}")
    lay = OocLayout(n, w, dt.itemsize, panel.word_dtype(dt).itemsize)
    # the tile copies overlap the products: they are part of "compute", not timed apart
    timings = {"h2d": 0.0, "setup": 0.0, "compute": 0.0, "d2h": 0.0}
    t0 = time.perf_counter()
    host = HostMatrix.start(graph, dt, plan.inf, plan.options.get("workdir"), STREAMS + 1, w * w * dt.itemsize)
    timings["setup"] = time.perf_counter() - t0
    kind = "pinned" if host.pinned else ("memory-mapped" if plan.options.get("workdir") else "pageable")
    meta = {"device": dev["name"], "out_of_core": True, "panel_width": w, "rounds": lay.rounds,
            "host_memory": kind, "gpu_bytes": lay.device_bytes,
            "pcie_h2d_bytes_per_s": bw["h2d"], "pcie_d2h_bytes_per_s": bw["d2h"],
            "needed_width": needed_width(dt.itemsize, EXPECTED_RATE[dt.name], bandwidth)}
    if n == 0:
        host.release()
        return EngineOutput(host.array, None, timings, metadata=meta)
    ckpt = checkpoint.from_plan(plan, graph, block=w, extra={"out_of_core": True})
    engine = None
    try:
        compiled = modules.compile_seconds()
        t1 = time.perf_counter()
        engine = Streamed(host, lay, plan)
        schedule.run(engine, checkpointer=ckpt, report=plan.report)
        modules.record_stage(timings, "compute", time.perf_counter() - t1, compiled)
    except cp.cuda.memory.OutOfMemoryError as exc:
        raise DeviceError(f"the GPU ran out of memory in the out-of-core run (n = {n}, {w}-wide panels): "
                          f"{exc}; pass a smaller max_gpu_memory") from exc
    except (cp.cuda.runtime.CUDARuntimeError, cp.cuda.driver.CUDADriverError) as exc:
        raise DeviceError(f"CUDA error in the out-of-core run (n = {n}, {dt.name}, {w}-wide panels): {exc}") from exc
    finally:
        if engine is not None:
            engine.quiesce()           # no copy may still be on its way when the host memory is unpinned
        host.release()
    return EngineOutput(host.array, None, timings, metadata=meta)


class Streamed:
    """The out-of-core engine of the blocked schedule: the matrix in host memory, this
    round's and the next round's panels and ``STREAMS`` tile buffers on the GPU."""

    def __init__(self, host: HostMatrix, lay: OocLayout, plan):
        import cupy as cp

        self.host, self.lay, self.plan = host, lay, plan
        self.rounds = lay.rounds
        dt = np.dtype(plan.dtype)
        self.inf = dt.type(plan.inf)
        self.arith = panel.Arith.of(plan)
        w, npad = lay.w, lay.padded
        wd = panel.word_dtype(dt)
        # padding rows and columns hold INF: they never shorten a real path
        self.R = [cp.full((w, npad), self.inf, dt) for _ in range(2)]      # this round's, the next round's
        self.C = [cp.full((npad, w), self.inf, dt) for _ in range(2)]
        self.CT = cp.empty((w, npad), wd)
        self.PT = cp.empty((w, w), wd)
        self.tiles = [cp.empty((w, w), dt) for _ in range(STREAMS)]
        self.main = cp.cuda.Stream(non_blocking=True)
        self.copy = cp.cuda.Stream(non_blocking=True)
        self.streams = [cp.cuda.Stream(non_blocking=True) for _ in range(STREAMS)]
        # The INF fills above were queued on the current stream, which these non-blocking streams
        # do not wait for: a panel loaded on the copy stream before its fill ran would be erased by
        # it.  On a GPU that other processes use, the fill kernel waits for the SMs while the copy
        # engine runs the load at once: results all INF, diagonal included (issue 35).
        cp.cuda.get_current_stream().synchronize()
        #: the panels on the GPU are the next round's (after the first load, the rounds keep them there)
        self.loaded = False
        self.panels_done = None

    def quiesce(self):
        """Wait for everything queued on this engine's streams (a run that stopped on an error
        may have copies on their way into host memory); errors were raised where they occurred."""
        for s in (self.main, self.copy, *self.streams):
            with contextlib.suppress(Exception):
                s.synchronize()

    def state(self):
        return (self.host.array,)

    def _views(self, r):
        """(R, C, the next round's Rn, Cn, P, span of round r, of round r + 1 (or zeros))."""
        lay = self.lay
        k0, kr, kp = lay.span(r)
        Rv, Cv = self.R[0][:kp], self.C[0][:, :kp]
        nxt = lay.span(r + 1) if r + 1 < lay.rounds else (0, 0, 0)
        return Rv, Cv, self.R[1], self.C[1], Rv[:, k0:k0 + kp], (k0, kr, kp), nxt

    def load(self, r):
        """Round r's panels from the host, where no earlier round left them on the GPU."""
        if self.loaded:
            return
        lay, host = self.lay, self.host
        k0, kr, _ = lay.span(r)
        for t in range(lay.rounds):
            lo, real, _ = lay.span(t)
            host.h2d(self.R[0][:, lo:], k0, kr, lo, real, self.copy, STREAMS)
            host.h2d(self.C[0][lo:], lo, real, k0, kr, self.copy, STREAMS)
        host.flush(STREAMS, self.copy)
        self.copy.synchronize()
        self.loaded = True

    def close_pivot(self, r):
        _, _, _, _, P, (_, kr, kp), _ = self._views(r)
        with self.main:
            if kp > kr:   # a narrow last panel: its padding rows / columns are INF
                self.R[0][kr:kp] = self.inf
                self.C[0][:, kr:kp] = self.inf
            tiles.close_block(P, self.plan)

    def update_panels(self, r):
        Rv, Cv, Rn, Cn, P, (k0, kr, kp), (n0, nr, _) = self._views(r)
        u0, un = k0 // panel.UNIT, kp // panel.UNIT
        arith = self.arith
        with self.main:
            Cv[k0:k0 + kp] = P
            panel.minplus(Rv, panel.to_words(P, out=self.PT[:kp, :kp]), Rv, arith, skip_cols=(u0, un))
            CTv = self.CT[:kp]
            panel.to_words(Cv, out=CTv)                 # the column panel before its update
            panel.minplus(Cv, CTv, P, arith, skip_rows=(u0, un))
            panel.to_words(Cv, out=CTv)                 # ... and after: phase 3's left operand
            if nr:   # the next panels' blocks that lie in this round's panels
                Rn[:nr, k0:k0 + kr] = Cv[n0:n0 + nr, :kr]
                Cn[k0:k0 + kr, :nr] = Rv[:kr, n0:n0 + nr]
            self.panels_done = self.main.record()

    def broadcast(self, r):
        """The finished panels go back to the host on the copy stream, beside phase 3."""
        lay, host = self.lay, self.host
        Rv, Cv, _, _, _, (k0, kr, _), _ = self._views(r)
        self.copy.wait_event(self.panels_done)
        for t in range(lay.rounds):
            lo, real, _ = lay.span(t)
            host.d2h(Rv[:, lo:], k0, kr, lo, real, self.copy, STREAMS)
            if t != r:
                host.d2h(Cv[lo:], lo, real, k0, kr, self.copy, STREAMS)

    def product(self, r, part):
        """Every other tile streams through: host -> GPU, T = min(T, C[I] (x) R[J]), GPU ->
        host, spread over the streams; the next round's panel tiles go first and are also
        copied into the next panel buffers."""
        lay, host = self.lay, self.host
        Rv, _, Rn, Cn, _, _, (_, nr, _) = self._views(r)
        CTv = self.CT[:Rv.shape[0]]
        for s in self.streams:
            s.wait_event(self.panels_done)
        for idx, (i, j) in enumerate(tile_order(lay.rounds, r)):
            slot = idx % STREAMS
            stream, buf = self.streams[slot], self.tiles[slot]
            i0, ir, ip = lay.span(i)
            j0, jr, jp = lay.span(j)
            host.h2d(buf, i0, ir, j0, jr, stream, slot)
            with stream:
                tile = buf[:ip, :jp]
                panel.minplus(tile, CTv[:, i0:i0 + ip], Rv[:, j0:j0 + jp], self.arith)
                if i == r + 1:
                    Rn[:nr, j0:j0 + jr] = tile[:nr, :jr]
                if j == r + 1:
                    Cn[i0:i0 + ir, :nr] = tile[:ir, :nr]
            host.d2h(buf, i0, ir, j0, jr, stream, slot)

    def store(self, r):
        """Every copy of round r lands in host memory; the next round's panels become this round's."""
        host = self.host
        for slot, s in enumerate(self.streams):
            host.flush(slot, s)
            s.synchronize()
        host.flush(STREAMS, self.copy)
        self.copy.synchronize()
        self.R.reverse()
        self.C.reverse()
