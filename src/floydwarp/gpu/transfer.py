"""Matrices between the device and host memory at the link's rate.

A copy between a device buffer and pageable host memory runs at a fraction of the link's
rate (measured 1.7 GB/s for a 4.3 GB result on the H100: the driver stages it through a small
pinned buffer of its own, one chunk at a time, and first-touches every destination page).
Pinning the destination instead costs about as much as the copy it saves.

So the rows travel in chunks through a few pinned staging buffers, one per worker thread:
each worker copies a chunk between the device and its buffer on its own stream, waits
for it, and copies the buffer to or from the destination rows while the other workers'
DMA transfers keep the link busy.  The host copies run in parallel (NumPy releases the
GIL), so the first touch of fresh destination pages is spread over the cores.

The host side of a chunk goes through a *sink* (download) or *source* (upload): a host
array, or a file written at the chunk's offset (:func:`to_file`), so that ``-o out.npy`` streams
a device result to disk without a full copy in host memory.

A fresh host array costs a page fault per page on first write, more than the copy itself:
:class:`HostMatrix` maps the pages of a result's host array from background threads while the
device still computes.  Edge lists go up as converted columns (:func:`upload_columns`): workers
cast chunks into their pinned buffers while earlier chunks cross the bus.
"""
from __future__ import annotations

import os
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np

#: bytes a worker moves per chunk; large enough that a DMA is at the link's rate
#: (16 MB measured at 54 GB/s), small enough that the pinned buffers stay modest
CHUNK_BYTES = 32 << 20
#: worker threads at most: each keeps one chunk in flight (16 measured faster than 8 on the H100)
MAX_WORKERS = 16
#: below this a single synchronous copy is as fast and needs no threads
DIRECT_BYTES = 64 << 20
#: the smallest page of host memory: touching one byte of each maps the whole array
PAGE_BYTES = 4096


def workers_for(nbytes: int) -> int:
    """Worker threads for a copy of ``nbytes``: enough that host copies keep up with the link."""
    cores = os.cpu_count() or 1
    return max(1, min(MAX_WORKERS, cores, nbytes // (4 * CHUNK_BYTES) or 1))


@dataclass(frozen=True)
class Pitched:
    """A 2-D device region: ``rows`` rows of ``row_bytes`` bytes, ``pitch`` bytes apart."""

    ptr: int
    pitch: int
    rows: int
    row_bytes: int

    @classmethod
    def of(cls, a, rows: int | None = None, cols: int | None = None) -> "Pitched":
        """The leading ``rows`` x ``cols`` region of a C-contiguous or row-pitched CuPy array."""
        rows = a.shape[0] if rows is None else rows
        cols = a.shape[1] if cols is None else cols
        return cls(int(a.data.ptr), int(a.strides[0]), int(rows), int(cols) * a.itemsize)


class ArraySink:
    """Chunks into (``download``) or out of (``upload``) a C-contiguous host array."""

    def __init__(self, array: np.ndarray):
        if not array.flags.c_contiguous:
            raise ValueError("transfer needs a C-contiguous host array")
        self.bytes = array.reshape(-1).view(np.uint8)

    def write(self, offset: int, chunk: np.ndarray) -> None:
        self.bytes[offset:offset + chunk.nbytes] = chunk

    def read(self, offset: int, chunk: np.ndarray) -> None:
        chunk[...] = self.bytes[offset:offset + chunk.nbytes]


class FileSink:
    """Chunks written at ``base + offset`` of an open file (positional writes need no lock)."""

    def __init__(self, fd: int, base: int):
        self.fd, self.base = fd, int(base)

    def write(self, offset: int, chunk: np.ndarray) -> None:
        view = memoryview(chunk).cast("B")
        done = 0
        while done < len(view):
            done += os.pwrite(self.fd, view[done:], self.base + offset + done)


def _chunks(count: int, unit_bytes: int):
    """``(start, stop)`` ranges of ``count`` units (rows, elements) of about CHUNK_BYTES each."""
    step = max(1, CHUNK_BYTES // max(unit_bytes, 1))
    return [(r, min(r + step, count)) for r in range(0, count, step)]


def _pinned(nbytes: int):
    import cupyx

    try:
        return cupyx.empty_pinned((nbytes,), dtype=np.uint8)
    except Exception:  # no pinned memory to be had: pageable staging still works, slower
        return np.empty(nbytes, dtype=np.uint8)


def _run(tasks, nbytes: int, buffer_bytes: int, worker_step) -> None:
    """Call ``worker_step(stream, buffer, *task)`` for every task, spread over worker threads
    (as many as ``nbytes`` in all warrants), each with its own stream and pinned ``buffer``.
    The current stream's work is waited for first: it may still use the memory copied."""
    import cupy as cp

    cp.cuda.get_current_stream().synchronize()
    nworkers = min(workers_for(nbytes), len(tasks))
    device = cp.cuda.Device()
    lock = threading.Lock()
    queue = iter(tasks)

    def worker():
        with device:
            stream = cp.cuda.Stream(non_blocking=True)
            buffer = _pinned(buffer_bytes)
            while True:
                with lock:
                    task = next(queue, None)
                if task is None:
                    break
                worker_step(stream, buffer, *task)

    if nworkers <= 1:
        worker()
        return
    with ThreadPoolExecutor(nworkers) as pool:
        for f in [pool.submit(worker) for _ in range(nworkers)]:
            f.result()


def download(region: Pitched, sink) -> None:
    """Copy a device region to the host, row-major and unpadded, through ``sink.write``."""
    from cupy.cuda import runtime as rt

    def step(stream, buffer, r0, r1):
        nbytes = (r1 - r0) * region.row_bytes
        host = buffer[:nbytes]
        rt.memcpy2DAsync(host.ctypes.data, region.row_bytes, region.ptr + r0 * region.pitch, region.pitch,
                         region.row_bytes, r1 - r0, rt.memcpyDeviceToHost, stream.ptr)
        stream.synchronize()
        sink.write(r0 * region.row_bytes, host)

    _run_rows(region, step)


def upload(region: Pitched, source) -> None:
    """Fill a device region from the host rows that ``source.read`` provides."""
    from cupy.cuda import runtime as rt

    def step(stream, buffer, r0, r1):
        nbytes = (r1 - r0) * region.row_bytes
        host = buffer[:nbytes]
        source.read(r0 * region.row_bytes, host)
        rt.memcpy2DAsync(region.ptr + r0 * region.pitch, region.pitch, host.ctypes.data, region.row_bytes,
                         region.row_bytes, r1 - r0, rt.memcpyHostToDevice, stream.ptr)
        stream.synchronize()

    _run_rows(region, step)


def _run_rows(region: Pitched, step) -> None:
    chunks = _chunks(region.rows, region.row_bytes)
    rows = chunks[0][1] - chunks[0][0] if chunks else 0
    _run(chunks, region.rows * region.row_bytes, rows * region.row_bytes, step)


def upload_columns(columns) -> None:
    """Copy host arrays into device buffers, converting on the way: ``columns`` holds
    ``(device_ptr, host_array, dtype)``; element ``i`` of ``host_array``, cast to ``dtype``
    (``casting="unsafe"``, as ``astype`` would), lands at ``device_ptr + i * itemsize``.

    Worker threads cast chunks into their pinned buffers (NumPy releases the GIL) while the
    other workers' copies run, so neither the casts nor the copies wait for each other."""
    from cupy.cuda import runtime as rt

    tasks, nbytes = [], 0
    for ptr, host, dtype in columns:
        dtype = np.dtype(dtype)
        tasks += [(ptr, host, dtype, e0, e1) for e0, e1 in _chunks(len(host), dtype.itemsize)]
        nbytes += len(host) * dtype.itemsize

    def step(stream, buffer, ptr, host, dtype, e0, e1):
        staged = buffer[:(e1 - e0) * dtype.itemsize].view(dtype)
        np.copyto(staged, host[e0:e1], casting="unsafe")
        rt.memcpyAsync(ptr + e0 * dtype.itemsize, staged.ctypes.data, staged.nbytes, rt.memcpyHostToDevice,
                       stream.ptr)
        stream.synchronize()

    if tasks:
        _run(tasks, nbytes, CHUNK_BYTES, step)


class HostMatrix:
    """The host array a download will fill, made ready while the device still computes.

    Writing to fresh pages costs a page fault each (the kernel zeroes them): for a 4.3 GB
    result that is most of a second, more than the copy itself.  A large matrix is allocated at
    once and background threads touch one byte of every page, so that the download later
    writes to mapped memory; a small one is pinned memory (CuPy pools it), which a
    single copy fills at the link's rate.  :meth:`result` waits and returns the array."""

    def __init__(self, shape, dtype):
        nbytes = int(np.prod(shape)) * np.dtype(dtype).itemsize
        self._pool, self._touched = None, []
        if nbytes <= DIRECT_BYTES:
            self.array = (_pinned(nbytes) if nbytes else np.empty(0, np.uint8)).view(dtype).reshape(shape)
            return
        self.array = np.empty(shape, dtype)
        flat = self.array.reshape(-1).view(np.uint8)
        nworkers = workers_for(nbytes)
        step = -(-nbytes // nworkers)
        self._pool = ThreadPoolExecutor(nworkers)
        self._touched = [self._pool.submit(_touch, flat[a:a + step]) for a in range(0, nbytes, step)]

    def result(self) -> np.ndarray:
        for f in self._touched:
            f.result()
        if self._pool is not None:
            self._pool.shutdown()
            self._pool = None
        return self.array


def _touch(chunk: np.ndarray) -> None:
    chunk[::PAGE_BYTES] = 0                  # a strided assignment: NumPy releases the GIL


def to_host(a, rows: int | None = None, cols: int | None = None, out: np.ndarray | None = None) -> np.ndarray:
    """The leading ``rows`` x ``cols`` of a (pitched) CuPy matrix as a C-contiguous NumPy array
    (``out``, or a new one); a contiguous array of another rank comes back whole."""
    if a.ndim < 2 or a.size == 0:
        return a.get()
    if a.ndim != 2 or a.strides[1] != a.itemsize:
        if not a.flags.c_contiguous:
            return a.get()
        return to_host(a.reshape(-1, a.shape[-1])).reshape(a.shape)
    region = Pitched.of(a, rows, cols)
    if out is None:
        out = HostMatrix((region.rows, region.row_bytes // a.itemsize), a.dtype).result()
    if region.rows * region.row_bytes <= DIRECT_BYTES:
        from cupy.cuda import runtime as rt

        rt.memcpy2D(out.ctypes.data, region.row_bytes, region.ptr, region.pitch, region.row_bytes, region.rows,
                    rt.memcpyDeviceToHost)
    else:
        download(region, ArraySink(out))
    return out


def to_device(host: np.ndarray, a) -> None:
    """Copy a C-contiguous host matrix into the leading rows and columns of a (pitched) CuPy matrix."""
    region = Pitched.of(a, *host.shape)
    if region.rows * region.row_bytes <= DIRECT_BYTES:
        from cupy.cuda import runtime as rt

        rt.memcpy2D(region.ptr, region.pitch, host.ctypes.data, region.row_bytes, region.row_bytes, region.rows,
                    rt.memcpyHostToDevice)
    else:
        upload(region, ArraySink(host))


def to_file(a, fd: int, offset: int) -> None:
    """Write a C-contiguous CuPy array's bytes at ``offset`` of the open file ``fd``, through
    the pinned staging buffers: no host copy of the whole array is made."""
    matrix = a.reshape(-1, a.shape[-1]) if a.ndim >= 2 else a.reshape(1, -1)
    download(Pitched.of(matrix), FileSink(fd, offset))
