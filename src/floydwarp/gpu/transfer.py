"""A result's host memory, ready before the device is done: :class:`HostMatrix`, and
:func:`to_host`, which copies a device matrix into one (the copies themselves: staging.py).

A fresh host array costs a page fault per page on first write, more than the copy itself:
:class:`HostMatrix` maps the pages of a result's host array from background threads while the
device still computes, and page-locks them there too (``cudaHostRegister``, about 1 s for
4.3 GB on the H100's host): a locked piece is then the DMA's own destination, at the link's
rate (55 GB/s measured against 36 GB/s through staging, which moves every byte through host
memory twice more).  Pieces not locked by the time the device is done go through staging.
The pages stay locked while the array lives (unlocking stalls the driver ~20 ms a GB); when it
goes, a wholly locked mapping is kept for the next result of its size (:func:`release_kept`).
"""
from __future__ import annotations

import math
import mmap
import os
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
            kept = _take_kept(nbytes) if lock else None
            memory = kept.memory if kept is not None else _page_aligned(nbytes)
            self._adopt(np.frombuffer(memory, dtype=dtype).reshape(shape), (0, shape[0]), fresh=True, lock=lock,
                        memory=memory, kept=kept)

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

    def _adopt(self, array, rows=None, *, fresh=False, lock=False, memory=None, kept=None):
        """Fill ``array``; map rows ``rows`` of it in pieces (writing to each page where it is
        ``fresh``, reading it otherwise), and page-lock them with ``lock``.  ``memory``: the
        mapping that ``array`` views, when this object made it (it may then be kept for the
        next result, :func:`release_kept`); ``kept``: the :class:`_LockedPages` of such a mapping
        taken for this array, already mapped and locked."""
        self.array = array
        self._pieces, self._locked, self._finalizer, self._pages = [], [], None, None
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
        if lock:
            self._pages = kept if kept is not None else _LockedPages(memory, len(self._pieces))
            # unlocks (or keeps) with the array, before its memory goes (not at exit: the process's end does);
            # for a mapping of our own, with the array that views it whole, which every NumPy view of the
            # result refers to (their base): no view of a kept mapping is left
            self._finalizer = weakref.finalize(array if memory is None else array.base, self._pages.give_back)
            self._finalizer.atexit = False
        if kept is not None:                  # mapped and locked by the array that had it before
            self._locked, self._futures = [True] * len(self._pieces), []
            return
        locked_at = self._pages.at if lock else []   # the pieces' first addresses, as they are locked
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
            self._pages.memory = None         # the array lives on: its pages are not for another result
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


class _LockedPages:
    """The page-locked pieces of a result's mapping (their first addresses ``at``, as they
    are locked).  When the last view of the mapping goes, a mapping whose ``pieces`` are all
    locked is kept for the next result of its size (:func:`release_kept`); any other is
    unlocked."""

    def __init__(self, memory, pieces: int):
        self.memory, self.pieces, self.at = memory, pieces, []

    def give_back(self) -> None:
        if self.memory is not None and len(self.at) == self.pieces and len(self.memory) <= _keep_limit():
            for old in _replace_kept(self):
                _unlock(old.at)
        else:
            _unlock(self.at)


#: the mapping kept for the next result: at most one
_KEPT: list[_LockedPages] = []
_KEPT_LOCK = threading.Lock()


def _keep_limit() -> int:
    """The largest mapping kept: an eighth of the host's memory."""
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // 8


def _replace_kept(pages: _LockedPages | None) -> list[_LockedPages]:
    """Keep ``pages`` (None: nothing); the mappings kept before, to unlock."""
    with _KEPT_LOCK:
        old = _KEPT[:]
        _KEPT[:] = [] if pages is None else [pages]
    return old


def _take_kept(nbytes: int):
    """The kept mapping if it has ``nbytes`` bytes (taken: no one else gets it), else None."""
    with _KEPT_LOCK:
        if _KEPT and len(_KEPT[0].memory) == nbytes:
            return _KEPT.pop()
    return None


def release_kept() -> None:
    """Unlock and unmap the page-locked result mapping kept for reuse.

    A multi-GPU (or one GPU's) host result of more than 64 MB lives in a mapping whose pages
    are locked for the GPUs' DMA while they compute.  Locking 4.3 GB takes longer than 4 GPUs
    need to solve n = 32768, so when the result's array goes, its mapping (up to an eighth of
    host memory) stays locked and is the next result of the same size at once, as CuPy's
    pinned memory pool keeps its buffers.  Call this to give that memory back sooner than the
    process's end."""
    for pages in _replace_kept(None):
        _unlock(pages.at)


def _page_aligned(nbytes: int) -> mmap.mmap:
    """A new anonymous mapping (pages of its own): its pieces can be locked without sharing a
    page with other memory."""
    memory = mmap.mmap(-1, nbytes)
    if hasattr(mmap, "MADV_HUGEPAGE"):
        # 2 MB pages where the kernel has them (Linux THP, "madvise" mode included): a fault
        # maps 512 times more at once (n = 32768 int16 on 4 H200s: 62-75 % of the result's
        # pieces locked by the end of the rounds, against none on 4 KB pages)
        memory.madvise(mmap.MADV_HUGEPAGE)
    return memory


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
    comes back whole.  A strided vector (a matrix's diagonal or column) is gathered on the device
    by a 2-D copy, one element a row, then copied down whole (0.07 ms for n = 32768 on an H200):
    its ``get()`` would run a CuPy copy kernel, which a process with an empty CuPy cache compiles
    first (70 ms of the GPU main job's call, 0.3 s in a fresh machine's first process, NVRTC read
    from disk), and the pinned memory of the 2-D path below costs a process about 0.25 s for its
    first allocation (bench/results/process-gpu-h200-s22/)."""
    if a.ndim == 1 and a.size and a.strides[0] > a.itemsize:
        import cupy
        from cupy.cuda import runtime as rt

        gathered = cupy.empty(a.size, a.dtype)
        rt.memcpy2D(gathered.data.ptr, a.itemsize, a.data.ptr, a.strides[0], a.itemsize, a.size,
                    rt.memcpyDeviceToDevice)
        return gathered.get()
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


