"""A result's host memory, ready before the device is done: :class:`HostMatrix`, and
:func:`to_host`, which copies a device matrix into one (the copies themselves: staging.py).

A fresh host array costs a page fault per page on first write, more than the copy itself:
:class:`HostMatrix` maps the pages of a result's host array from background threads while the
device still computes, and page-locks them there too (``cudaHostRegister``, about 1 s for
4.3 GB on the H100's host): a locked piece is then the DMA's own destination, at the link's
rate (55 GB/s measured against 36 GB/s through staging, which moves every byte through host
memory twice more).  Pieces not locked by the time the device is done go through staging.
The pages stay locked while the array lives (unlocking stalls the driver ~20 ms a GB).
"""
from __future__ import annotations

import math
import mmap
import threading
import weakref
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from . import staging

#: the smallest page of host memory: touching one byte of each maps the whole array
PAGE_BYTES = 4096
#: a result's host array is mapped and page-locked in pieces of about this many bytes
PIECE_BYTES = 256 << 20
#: cudaHostRegisterPortable: the locked pages count as pinned in every CUDA context
_REGISTER_PORTABLE = 1


class HostMatrix:
    """The host array a download will fill, made ready while the device still computes.

    Writing to fresh pages costs a page fault each (the kernel zeroes them): for a 4.3 GB
    result that is most of a second, more than the copy itself.  A large matrix is allocated
    page-aligned at once, and background threads map its pages piece by piece (touching one
    byte of each) and, with ``lock=True``, page-lock each piece for the DMA (see the module
    docstring); a small one is pinned memory (CuPy pools it), which a single copy fills at the
    link's rate.  :meth:`over` does the same for a matrix that exists (a shared result file's
    mapping).  :meth:`fill` copies a device matrix in and returns the array; :meth:`result`
    just waits for the mapping and returns it."""

    def __init__(self, shape, dtype, *, lock: bool = False):
        nbytes = int(np.prod(shape)) * np.dtype(dtype).itemsize
        if nbytes <= staging.DIRECT_BYTES:
            self._adopt((staging.pinned(nbytes) if nbytes else np.empty(0, np.uint8)).view(dtype).reshape(shape))
        else:
            self._adopt(_page_aligned(shape, dtype), (0, shape[0]), fresh=True, lock=lock)

    @classmethod
    def over(cls, array: np.ndarray, rows=None) -> "HostMatrix":
        """The C-contiguous host matrix ``array`` (a mapping of shared memory), rows ``rows =
        (start, stop)`` of it (all by default) page-locked in the background for :meth:`fill`.
        Nothing is written to it: its contents stay until filled.  :meth:`release` unlocks."""
        if not array.flags.c_contiguous or array.ndim != 2:
            raise ValueError("HostMatrix.over needs a C-contiguous matrix")
        host = cls.__new__(cls)
        r0, r1 = rows or (0, array.shape[0])
        large = (r1 - r0) * array.strides[0] > staging.DIRECT_BYTES
        host._adopt(array, (r0, r1) if large else None, fresh=False, lock=True)
        return host

    def _adopt(self, array, rows=None, *, fresh=False, lock=False):
        """Fill ``array``; map rows ``rows`` of it in pieces (writing to each page where it is
        ``fresh``, reading it otherwise), and page-lock them with ``lock``."""
        self.array = array
        self._pieces, self._locked, self._finalizer = [], [], None
        self._stop = threading.Event()
        if rows is None:
            return
        self._locked = None                   # not known until the mapping is done (_wait)
        r0, r1 = rows
        row_bytes = array.strides[0]
        base = array.ctypes.data
        self._pieces = [(r0 + a, r0 + b) for a, b in _pieces(r1 - r0, row_bytes, (base + r0 * row_bytes) % PAGE_BYTES)]
        # each piece's pages: the last piece's up to the page that holds its last byte
        self._spans = [(_page_floor(base + a * row_bytes),
                        _page_floor(base + b * row_bytes) if b < r1 else -(-(base + b * row_bytes) // PAGE_BYTES)
                        * PAGE_BYTES) for a, b in self._pieces]
        device = _current_device() if lock else None
        locked_at = []                        # the pieces' first addresses, as they are locked
        if lock:
            # unlocks with the array, before its memory goes (not at exit: the process's end does)
            self._finalizer = weakref.finalize(array, _unlock, locked_at)
            self._finalizer.atexit = False
        self._pool = ThreadPoolExecutor(min(staging.workers_for((r1 - r0) * row_bytes), len(self._pieces)))
        flat = array[r0:r1].reshape(-1).view(np.uint8)
        self._futures = [self._pool.submit(_map_piece, lo, hi, flat[(a - r0) * row_bytes:(b - r0) * row_bytes], fresh,
                                           device, self._stop, locked_at)
                         for (a, b), (lo, hi) in zip(self._pieces, self._spans)]

    def _wait(self) -> list[bool]:
        """Stop locking further pieces, wait for the mapping; which pieces are locked.
        Locked pieces stay locked as long as the array lives: unlocking blocks the driver's
        other calls (~20 ms a GB), which is better paid when the array goes than now."""
        if self._locked is None:
            self._stop.set()
            self._locked = [f.result() for f in self._futures]
            self._pool.shutdown()
        return self._locked

    def locked_share(self) -> float:
        """The share of the rows in page-locked pieces (1 where there were no pieces to lock)."""
        locked = self._wait()
        rows = sum(b - a for a, b in self._pieces)
        return sum(b - a for (a, b), lk in zip(self._pieces, locked) if lk) / rows if rows else 1.0

    def release(self) -> None:
        """Unlock the locked pages now (before the memory they belong to is unmapped)."""
        self._wait()
        if self._finalizer is not None:
            self._finalizer()

    def locked_rows(self, start: int, stop: int) -> list[tuple[int, int]]:
        """The ranges of rows ``start .. stop`` that a DMA may fill now, without waiting for the
        mapping: those in pieces locked by now (all rows of a small, pinned matrix)."""
        if not self._pieces:
            return [(start, stop)] if start < stop else []
        locked = self._locked if self._locked is not None else [f.done() and f.result() for f in self._futures]
        direct, _ = _split_rows(start, stop - start, self._pieces, locked)
        return [(start + a, start + b) for a, b in direct]

    def result(self) -> np.ndarray:
        """The array, unfilled, once its pages are mapped."""
        self._wait()
        return self.array

    def fill(self, a, rows: int | None = None, cols: int | None = None, at=(0, 0)) -> np.ndarray:
        """The leading ``rows`` x ``cols`` of the (pitched) CuPy matrix ``a``, copied into this
        array at row and column ``at`` (the whole array by default): the rows of locked
        pieces by DMA, the others through staging.  Returns the array."""
        from cupy.cuda import runtime as rt

        region = staging.Pitched.of(a, rows, cols)
        r0, c0 = at
        target = self.array[r0:r0 + region.rows, c0:c0 + region.row_bytes // a.itemsize]
        if target.shape[0] * target.shape[1] * a.itemsize != region.rows * region.row_bytes:
            raise ValueError("HostMatrix.fill: the region does not fit the array there")
        if not self._pieces:                  # small: one copy
            to_host(a, rows, cols, out=target)
            return self.array
        direct, staged = _split_rows(r0, region.rows, self._pieces, self._wait())
        if direct:
            import cupy as cp

            cp.cuda.get_current_stream().synchronize()
            stream = cp.cuda.Stream(non_blocking=True)
            for p0, p1 in direct:
                rt.memcpy2DAsync(target[p0:].ctypes.data, target.strides[0], region.ptr + p0 * region.pitch,
                                 region.pitch, region.row_bytes, p1 - p0, rt.memcpyDeviceToHost, stream.ptr)
        if staged:
            staging.download(region, staging.ArraySink(target), staged)
        if direct:
            stream.synchronize()
        return self.array


def _split_rows(r0: int, rows: int, pieces, locked):
    """Rows ``r0 .. r0 + rows`` of a :class:`HostMatrix` as ranges relative to ``r0``: those in
    locked pieces (for DMA) and the others (staging; rows outside every piece among them)."""
    end = r0 + rows
    parts = [(r0, min(end, pieces[0][0]), False), *((p0, p1, lk) for (p0, p1), lk in zip(pieces, locked)),
             (max(r0, pieces[-1][1]), end, False)]
    inside = [(max(p0, r0) - r0, min(p1, end) - r0, lk) for p0, p1, lk in parts if max(p0, r0) < min(p1, end)]
    return [(a, b) for a, b, lk in inside if lk], [(a, b) for a, b, lk in inside if not lk]


def _page_aligned(shape, dtype) -> np.ndarray:
    """A new array on pages of its own (an anonymous mapping): its pieces can be locked
    without sharing a page with other memory."""
    nbytes = int(np.prod(shape)) * np.dtype(dtype).itemsize
    return np.frombuffer(mmap.mmap(-1, nbytes), dtype=dtype).reshape(shape)


def _page_floor(address: int) -> int:
    return address // PAGE_BYTES * PAGE_BYTES


def _pieces(rows: int, row_bytes: int, first: int = 0) -> list[tuple[int, int]]:
    """Row ranges of about PIECE_BYTES of rows ``row_bytes`` apart, row 0 at byte ``first`` of
    a page, whose inner boundaries fall on page boundaries: no two ranges share a page, and
    each can be locked by itself (one range where no row starts on a page)."""
    step = PAGE_BYTES // math.gcd(row_bytes, PAGE_BYTES)          # rows between page-aligned starts
    aligned = next((r for r in range(min(step, rows)) if (first + r * row_bytes) % PAGE_BYTES == 0), None)
    if aligned is None:
        return [(0, rows)] if rows else []
    per = max(step, PIECE_BYTES // row_bytes // step * step)
    cuts = sorted({0, *range(aligned, rows, per), rows})
    return list(zip(cuts, cuts[1:]))


def _current_device():
    import cupy as cp

    return cp.cuda.Device()


def _map_piece(lo: int, hi: int, piece: np.ndarray, fresh: bool, device, stop: threading.Event,
               locked_at: list) -> bool:
    """Map the pages of ``piece`` (at addresses ``lo`` .. ``hi`` with the pages around it):
    write to each page of ``fresh`` memory, read each otherwise -- outside the driver's lock,
    which page-locking takes, and without changing what is there.  With a ``device`` (whose
    context registers them), page-lock them unless ``stop`` is set (the download has begun),
    and add ``lo`` to ``locked_at``.  Whether the piece is locked."""
    if fresh:
        piece[::PAGE_BYTES] = 0              # strided NumPy operations release the GIL
    else:
        piece[::PAGE_BYTES].max(initial=0)   # (a shared file's pages are allocated by a read too)
    if device is None or stop.is_set():
        return False
    from cupy.cuda import runtime as rt

    try:
        with device:
            rt.hostRegister(lo, hi - lo, _REGISTER_PORTABLE)
    except rt.CUDARuntimeError:              # no page-locked memory to be had: staging still works
        return False
    locked_at.append(lo)
    return True


def _unlock(pointers) -> None:
    from cupy.cuda import runtime as rt

    for ptr in pointers:
        rt.hostUnregister(ptr)


def to_host(a, rows: int | None = None, cols: int | None = None, out: np.ndarray | None = None) -> np.ndarray:
    """The leading ``rows`` x ``cols`` of a (pitched) CuPy matrix as a NumPy array: ``out`` (a
    matrix with contiguous rows), or a new C-contiguous one; a contiguous array of another rank
    comes back whole."""
    if a.ndim < 2 or a.size == 0:
        return a.get() if out is None else out
    if a.ndim != 2 or a.strides[1] != a.itemsize:
        if not a.flags.c_contiguous:
            return a.get()
        return to_host(a.reshape(-1, a.shape[-1])).reshape(a.shape)
    region = staging.Pitched.of(a, rows, cols)
    if out is None:
        out = HostMatrix((region.rows, region.row_bytes // a.itemsize), a.dtype).result()
    if region.rows * region.row_bytes <= staging.DIRECT_BYTES:
        from cupy.cuda import runtime as rt

        rt.memcpy2D(out.ctypes.data, out.strides[0], region.ptr, region.pitch, region.row_bytes, region.rows,
                    rt.memcpyDeviceToHost)
    else:
        staging.download(region, staging.ArraySink(out))
    return out


