"""Out-of-core GPU Floyd-Warshall: the matrix stays in host memory and streams through the GPU.

When the matrix does not fit in GPU memory (or in ``max_gpu_memory=`` bytes), it lives
in pinned host memory -- or, with ``workdir=DIR``, in a memory-mapped ``.npy`` file
there, for matrices larger than RAM -- and each round of blocked Floyd-Warshall with a
wide pivot panel K (``w`` columns, ``w`` in the thousands) runs as

1. the pivot row panel R = D[K, :] and column panel C = D[:, K] are on the GPU (loaded
   from the host in round 0, left there by the previous round after that); the pivot
   block is closed (``panel.close_block``) and both panels updated with it
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
import functools
import time
from dataclasses import dataclass

import numpy as np

from .. import checkpoint
from ..arrays import to_host
from ..errors import FloydwarpError
from ..plan import EngineOutput
from . import panel
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
#: bytes copied each way by the PCIe probe
PROBE_BYTES = 64 << 20


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


def choose_width(n: int, dtype, budget: int, bandwidth: float | None = None) -> int:
    """The widest panel (multiple of 64, at most max(PANEL_MAX, needed_width)) whose
    buffers fit in ``budget`` bytes of device memory."""
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
        raise FloydwarpError(
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


# ---------------------------------------------------------------------- host side
class HostMatrix:
    """The n x n matrix in host memory and its tile copies to and from the GPU.

    Pinned memory is copied by the DMA engines directly (``cudaMemcpy2DAsync``); a
    memory-mapped file (or pageable memory, where the OS will not pin that much) goes
    through pinned staging buffers (one pair per slot), copied
    on the CPU: a tile's result is written back to the file when its slot is next used
    (``flush``), so the file copies of one slot overlap the GPU work of the others."""

    def __init__(self, array, pinned: bool, slots: int, tile_bytes: int):
        self.array = array
        self.pinned = pinned
        self.n = array.shape[0]
        self.isz = array.itemsize
        self._stage = []
        self._pending = [None] * slots
        if not pinned:
            import cupyx

            self._stage = [(cupyx.empty_pinned(tile_bytes, np.uint8), cupyx.empty_pinned(tile_bytes, np.uint8))
                           for _ in range(slots)]

    @classmethod
    def create(cls, n, dtype, workdir, slots, tile_bytes):
        dt = np.dtype(dtype)
        if workdir is not None:
            from pathlib import Path

            path = Path(workdir) / "dist.npy"
            return cls(np.lib.format.open_memmap(path, mode="w+", dtype=dt, shape=(n, n)), False, slots, tile_bytes)
        from cupy.cuda import runtime as rt

        from ..cpu.engine import available_memory

        need = n * n * dt.itemsize
        have = available_memory()
        if have is not None and need > have:
            raise FloydwarpError(
                f"the out-of-core GPU run keeps the {n} x {n} {dt.name} matrix ({format_bytes(need)}) in host "
                f"memory, and only {format_bytes(have)} is available; pass workdir=DIR (--workdir DIR) to keep "
                f"it in a memory-mapped file there")
        array = np.empty((n, n), dtype=dt)
        # Page-locking an allocated array (cudaHostRegister) works for sizes where
        # cudaHostAlloc fails (84 GiB on the 128 GB H100 host) and is faster (3 s vs 12 s
        # for 20 GiB there); where the OS refuses, staging copies pageable memory.
        try:
            if need:
                rt.hostRegister(array.ctypes.data, need, 0)
            pinned = True
        except rt.CUDARuntimeError:
            pinned = False
        return cls(array, pinned, slots, tile_bytes)

    def release(self):
        """Unpin the matrix (it stays the result, as ordinary memory)."""
        from cupy.cuda import runtime as rt

        if self.pinned and self.array.size:
            rt.hostUnregister(self.array.ctypes.data)
            self.pinned = False

    def _region(self, r0, rows, c0, cols):
        return self.array[r0:r0 + rows, c0:c0 + cols]

    def h2d(self, dst, r0, rows, c0, cols, stream, slot):
        """Rows r0.. and columns c0.. of the matrix into the top-left of device view ``dst``."""
        from cupy.cuda import runtime as rt

        if not rows or not cols:
            return
        width = cols * self.isz
        dpitch = dst.strides[0]
        if self.pinned:
            src = self.array.ctypes.data + (r0 * self.n + c0) * self.isz
            rt.memcpy2DAsync(dst.data.ptr, dpitch, src, self.n * self.isz, width, rows, rt.memcpyHostToDevice,
                             stream.ptr)
            return
        self.flush(slot, stream)
        stage = self._stage[slot][0][:rows * width].view(self.array.dtype).reshape(rows, cols)
        np.copyto(stage, self._region(r0, rows, c0, cols))
        rt.memcpy2DAsync(dst.data.ptr, dpitch, stage.ctypes.data, width, width, rows, rt.memcpyHostToDevice,
                         stream.ptr)

    def d2h(self, src, r0, rows, c0, cols, stream, slot):
        """The top-left rows x cols of device view ``src`` into the matrix at (r0, c0)."""
        from cupy.cuda import runtime as rt

        if not rows or not cols:
            return
        width = cols * self.isz
        spitch = src.strides[0]
        if self.pinned:
            dst = self.array.ctypes.data + (r0 * self.n + c0) * self.isz
            rt.memcpy2DAsync(dst, self.n * self.isz, src.data.ptr, spitch, width, rows, rt.memcpyDeviceToHost,
                             stream.ptr)
            return
        self.flush(slot, stream)
        out = self._stage[slot][1]
        rt.memcpy2DAsync(out.ctypes.data, width, src.data.ptr, spitch, width, rows, rt.memcpyDeviceToHost,
                         stream.ptr)
        self._pending[slot] = (r0, rows, c0, cols)

    def flush(self, slot, stream):
        """Finish the slot's copies: its staged result goes into the file, its input
        buffer may be overwritten."""
        if self.pinned:
            return
        stream.synchronize()
        pending, self._pending[slot] = self._pending[slot], None
        if pending is not None:
            r0, rows, c0, cols = pending
            staged = self._stage[slot][1][:rows * cols * self.isz].view(self.array.dtype).reshape(rows, cols)
            self._region(r0, rows, c0, cols)[...] = staged

    def fill_from(self, graph, dtype, inf, band_rows=1024):
        for lo in range(0, self.n, band_rows):
            hi = min(self.n, lo + band_rows)
            self.array[lo:hi] = to_host(graph.matrix_rows(lo, hi, dtype, inf))


@functools.lru_cache(maxsize=None)
def pcie_bandwidth(device_id: int) -> dict:
    """Pinned host <-> device copy rates of this GPU, bytes per second (best of 3 x 64 MiB)."""
    import cupy as cp
    import cupyx

    host = cupyx.empty_pinned(PROBE_BYTES, np.uint8)
    dev = cp.empty(PROBE_BYTES, np.uint8)
    rates = {}
    for name, copy in (("h2d", lambda: dev.data.copy_from_host(host.ctypes.data, PROBE_BYTES)),
                       ("d2h", lambda: dev.data.copy_to_host(host.ctypes.data, PROBE_BYTES))):
        best = float("inf")
        for _ in range(3):
            cp.cuda.Device().synchronize()
            t0 = time.perf_counter()
            copy()
            cp.cuda.Device().synchronize()
            best = min(best, time.perf_counter() - t0)
        rates[name] = PROBE_BYTES / best
    return rates


# ---------------------------------------------------------------------- the engine
def device_budget(plan) -> int:
    """Bytes of GPU memory the run may use: ``max_gpu_memory`` or what is free."""
    import cupy as cp

    free, _ = cp.cuda.runtime.memGetInfo()
    available = int(free) + int(cp.get_default_memory_pool().free_bytes())
    cap = plan.options.get("max_gpu_memory")
    return available if cap is None else min(int(cap), available)


def solve_out_of_core(graph, plan) -> EngineOutput:
    import cupy as cp

    from .engine import _device

    if plan.predecessors:
        raise FloydwarpError("the out-of-core GPU engine computes distances only; for predecessors use "
                             "backend='cpu' with workdir=DIR, or a GPU with room for the matrix")
    dt = np.dtype(plan.dtype)
    n = int(graph.n)
    dev = _device()
    bw = pcie_bandwidth(cp.cuda.Device().id)
    bandwidth = min(bw["h2d"], bw["d2h"])
    w = int(plan.options.get("panel_width") or choose_width(n, dt, device_budget(plan), bandwidth))
    if w % panel.UNIT or w <= 0:
        raise FloydwarpError(f"panel_width must be a positive multiple of {panel.UNIT}, got {w}")
    lay = OocLayout(n, w, dt.itemsize, panel.word_dtype(dt).itemsize)
    # the tile copies overlap the products: they are part of "compute", not timed apart
    timings = {"h2d": 0.0, "setup": 0.0, "compute": 0.0, "d2h": 0.0}
    t0 = time.perf_counter()
    host = HostMatrix.create(n, dt, plan.options.get("workdir"), STREAMS + 1, w * w * dt.itemsize)
    host.fill_from(graph, dt, plan.inf)
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
    try:
        t1 = time.perf_counter()
        _Rounds(host, lay, plan).run(ckpt)
        timings["compute"] = time.perf_counter() - t1
    except cp.cuda.memory.OutOfMemoryError as exc:
        raise FloydwarpError(f"the GPU ran out of memory in the out-of-core run (n = {n}, {w}-wide panels): "
                             f"{exc}; pass a smaller max_gpu_memory") from exc
    finally:
        host.release()
    return EngineOutput(host.array, None, timings, metadata=meta)


class _Rounds:
    """Device buffers and streams of one out-of-core run, and its rounds."""

    def __init__(self, host: HostMatrix, lay: OocLayout, plan):
        import cupy as cp

        self.cp, self.host, self.lay, self.plan = cp, host, lay, plan
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

    def run(self, ckpt):
        lay = self.lay
        start = 0 if ckpt is None else ckpt.restore(self.host.array)
        with ckpt.stop_on_signals() if ckpt else contextlib.nullcontext():
            for r in range(start, lay.rounds):
                if r == start:
                    self._load_panels(r)
                self._round(r)
                self.R.reverse()
                self.C.reverse()
                self.plan.report(r + 1, lay.rounds)
                if ckpt is not None:
                    ckpt.after_round(r + 1, lay.rounds, self.host.array)

    def _load_panels(self, r):
        lay, host = self.lay, self.host
        k0, kr, _ = lay.span(r)
        for t in range(lay.rounds):
            lo, real, _ = lay.span(t)
            host.h2d(self.R[0][:, lo:], k0, kr, lo, real, self.copy, STREAMS)
            host.h2d(self.C[0][lo:], lo, real, k0, kr, self.copy, STREAMS)
        host.flush(STREAMS, self.copy)
        self.copy.synchronize()

    def _round(self, r):
        lay, host = self.lay, self.host
        R, C, Rn, Cn = self.R[0], self.C[0], self.R[1], self.C[1]
        k0, kr, kp = lay.span(r)
        u0, un = k0 // panel.UNIT, kp // panel.UNIT
        arith = self.arith
        has_next = r + 1 < lay.rounds
        n0, nr, _ = lay.span(r + 1) if has_next else (0, 0, 0)
        with self.main:
            if kp > kr:   # a narrow last panel: its padding rows / columns are INF
                R[kr:kp] = self.inf
                C[:, kr:kp] = self.inf
            Rv, Cv = R[:kp], C[:, :kp]
            P = Rv[:, k0:k0 + kp]
            panel.close_block(P, self.plan)
            Cv[k0:k0 + kp] = P
            panel.minplus(Rv, panel.to_words(P, out=self.PT[:kp, :kp]), Rv, arith, skip_cols=(u0, un))
            CTv = self.CT[:kp]
            panel.to_words(Cv, out=CTv)                 # the column panel before its update
            panel.minplus(Cv, CTv, P, arith, skip_rows=(u0, un))
            panel.to_words(Cv, out=CTv)                 # ... and after: phase 3's left operand
            if has_next:   # the next panels' blocks that lie in this round's panels
                Rn[:nr, k0:k0 + kr] = Cv[n0:n0 + nr, :kr]
                Cn[k0:k0 + kr, :nr] = Rv[:kr, n0:n0 + nr]
            panels_done = self.main.record()
        # the finished panels go back to the host beside phase 3
        self.copy.wait_event(panels_done)
        for t in range(lay.rounds):
            lo, real, _ = lay.span(t)
            host.d2h(Rv[:, lo:], k0, kr, lo, real, self.copy, STREAMS)
            if t != r:
                host.d2h(Cv[lo:], lo, real, k0, kr, self.copy, STREAMS)
        for s in self.streams:
            s.wait_event(panels_done)
        for idx, (i, j) in enumerate(tile_order(lay.rounds, r)):
            slot = idx % STREAMS
            stream, buf = self.streams[slot], self.tiles[slot]
            i0, ir, ip = lay.span(i)
            j0, jr, jp = lay.span(j)
            host.h2d(buf, i0, ir, j0, jr, stream, slot)
            with stream:
                tile = buf[:ip, :jp]
                panel.minplus(tile, CTv[:, i0:i0 + ip], Rv[:, j0:j0 + jp], arith)
                if i == r + 1:
                    Rn[:nr, j0:j0 + jr] = tile[:nr, :jr]
                if j == r + 1:
                    Cn[i0:i0 + ir, :nr] = tile[:ir, :nr]
            host.d2h(buf, i0, ir, j0, jr, stream, slot)
        for slot, s in enumerate(self.streams):
            host.flush(slot, s)
            s.synchronize()
        host.flush(STREAMS, self.copy)
        self.copy.synchronize()
