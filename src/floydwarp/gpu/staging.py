"""Matrices between the device and host memory at the link's rate, through pinned staging.

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
a device result to disk without a full copy in host memory, or a graph's start rows written
straight into the staging buffer (:class:`GraphRows`), so that a dense host matrix goes up
converted to the run's dtype without a full converted copy first.  Edge lists go up as
converted columns (:func:`upload_columns`): workers cast chunks into their pinned buffers
while earlier chunks cross the bus.  A result's own host memory, mapped and page-locked while
the device computes, is transfer.py's.
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
    """Row chunks into (``download``) or out of (``upload``) a host matrix whose rows are
    contiguous: a C-contiguous array, or some columns of one (a process's block of a shared
    result).  Offsets are bytes of the unpadded rows, whole rows at a time."""

    def __init__(self, array: np.ndarray):
        if array.ndim != 2 or (array.shape[1] > 1 and array.strides[1] != array.itemsize):
            raise ValueError("transfer needs a host matrix with contiguous rows")
        self.array = array
        self.row_bytes = array.shape[1] * array.itemsize

    def _rows(self, offset: int, chunk: np.ndarray):
        r = offset // self.row_bytes
        rows = self.array[r:r + chunk.nbytes // self.row_bytes]
        return rows, chunk.view(rows.dtype).reshape(rows.shape)

    def write(self, offset: int, chunk: np.ndarray) -> None:
        rows, values = self._rows(offset, chunk)
        rows[...] = values

    def read(self, offset: int, chunk: np.ndarray) -> None:
        rows, values = self._rows(offset, chunk)
        values[...] = rows


class GraphRows:
    """Row chunks of a graph's start matrix in ``dtype`` (``upload`` only), written by the
    graph's own pass (``Graph.write_rows``) straight into the staging buffer: a dense host
    graph goes up converted, with no n x n host copy in the run's dtype to allocate and
    fault in first.  Each worker converts its own chunk while the others' copies run."""

    def __init__(self, graph, dtype, inf):
        self.graph, self.dtype, self.inf = graph, np.dtype(dtype), inf
        self.row_bytes = graph.n * self.dtype.itemsize

    def read(self, offset: int, chunk: np.ndarray) -> None:
        r, rows = offset // self.row_bytes, chunk.nbytes // self.row_bytes
        self.graph.write_rows(chunk.view(self.dtype).reshape(rows, self.graph.n), r, self.inf)


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


def pinned(nbytes: int):
    import cupyx

    try:
        return cupyx.empty_pinned((nbytes,), dtype=np.uint8)
    except Exception:  # noqa: BLE001 -- no pinned memory to be had: pageable staging still works, slower
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
            buffer = pinned(buffer_bytes)
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


def download(region: Pitched, sink, rows=None) -> None:
    """Copy a device region to the host, row-major and unpadded, through ``sink.write``
    (only the ``(start, stop)`` row ranges ``rows``, when given)."""
    from cupy.cuda import runtime as rt

    def step(stream, buffer, r0, r1):
        nbytes = (r1 - r0) * region.row_bytes
        host = buffer[:nbytes]
        rt.memcpy2DAsync(host.ctypes.data, region.row_bytes, region.ptr + r0 * region.pitch, region.pitch,
                         region.row_bytes, r1 - r0, rt.memcpyDeviceToHost, stream.ptr)
        stream.synchronize()
        sink.write(r0 * region.row_bytes, host)

    _run_rows(region, step, rows)


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


def _run_rows(region: Pitched, step, rows=None) -> None:
    ranges = rows or [(0, region.rows)]
    chunks = [(a + r0, a + r1) for a, b in ranges for r0, r1 in _chunks(b - a, region.row_bytes)]
    if not chunks:
        return
    longest = max(r1 - r0 for r0, r1 in chunks)
    _run(chunks, sum(r1 - r0 for r0, r1 in chunks) * region.row_bytes, longest * region.row_bytes, step)


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
        # workers by the bytes read: the casts, not the copies, set the pace (int64 ids cast to
        # uint16 read 4x what goes up; one worker cast a GPU's 13.4 M edges in 50 ms)
        nbytes += len(host) * max(dtype.itemsize, np.asarray(host).itemsize)

    def step(stream, buffer, ptr, host, dtype, e0, e1):
        staged = buffer[:(e1 - e0) * dtype.itemsize].view(dtype)
        np.copyto(staged, host[e0:e1], casting="unsafe")
        rt.memcpyAsync(ptr + e0 * dtype.itemsize, staged.ctypes.data, staged.nbytes, rt.memcpyHostToDevice,
                       stream.ptr)
        stream.synchronize()

    if tasks:
        # buffers of the largest chunk: a small upload pins kilobytes, not CHUNK_BYTES (26 ms a buffer)
        _run(tasks, nbytes, max((e1 - e0) * dtype.itemsize for _, _, dtype, e0, e1 in tasks), step)


def to_file(a, fd: int, offset: int) -> None:
    """Write a C-contiguous CuPy array's bytes at ``offset`` of the open file ``fd``, through
    the pinned staging buffers: no host copy of the whole array is made."""
    matrix = a.reshape(-1, a.shape[-1]) if a.ndim >= 2 else a.reshape(1, -1)
    download(Pitched.of(matrix), FileSink(fd, offset))
