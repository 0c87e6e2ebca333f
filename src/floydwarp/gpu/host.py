"""Host memory of the out-of-core engine (ooc.py): the n x n matrix in pinned memory or a
memory-mapped file, its tile copies to and from the GPU, and the PCIe rates they run at.
"""
from __future__ import annotations

import functools
import time

import numpy as np

from ..errors import FloydwarpError
from .layout import format_bytes

#: bytes copied each way by the PCIe probe
PROBE_BYTES = 64 << 20


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
    def start(cls, graph, dtype, inf, workdir, slots, tile_bytes):
        """The graph's start matrix in host memory (or ``workdir``'s ``dist.npy``), written in
        place by the graph's parallel pass (Graph.write_matrix), then page-locked where it is in RAM."""
        n, dt = graph.n, np.dtype(dtype)
        if workdir is not None:
            from pathlib import Path

            array = np.lib.format.open_memmap(Path(workdir) / "dist.npy", mode="w+", dtype=dt, shape=(n, n))
            graph.write_matrix(array, inf)
            return cls(array, False, slots, tile_bytes)
        from cupy.cuda import runtime as rt

        from ..cpu.storage import available_memory

        need = n * n * dt.itemsize
        have = available_memory()
        if have is not None and need > have:
            raise FloydwarpError(
                f"the out-of-core GPU run keeps the {n} x {n} {dt.name} matrix ({format_bytes(need)}) in host "
                f"memory, and only {format_bytes(have)} is available; pass workdir=DIR (--workdir DIR) to keep "
                f"it in a memory-mapped file there")
        array = np.empty((n, n), dtype=dt)
        graph.write_matrix(array, inf)           # first: its writes fault the pages in on every core
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
