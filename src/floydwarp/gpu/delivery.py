"""A device result's rows copied home while the last round still computes the others.

No cell of blocked Floyd-Warshall is final before the last round, and that round's phase 3
finishes the rows band by band (``schedule.run(deliver=)``).  :class:`Rows` is the
``deliver`` of an in-core run and of a multi-GPU worker: as each band's kernel ends, its rows
go by DMA on a stream of their own where the host array (:class:`transfer.HostMatrix`: the
result, or the worker's rows of the shared result file) has them page-locked by then;
:meth:`Rows.finish` copies what is left (rows whose pages were not locked yet) the usual way.
At n = 32768 the last of 16 rounds is ~150 ms of kernels and the whole copy ~80 ms, so only
the last band's copy is left after the kernels.  :class:`DeviceRows` is the same for a result
kept in GPU memory (the ``multigpu`` backend's ``output="device"``, on GPU 0): each band goes
there by the copy engines, over NVLink from another GPU, ordered by an event on the GPU alone.
"""
from __future__ import annotations

import queue
import threading

import numpy as np

from .transfer import HostMatrix

#: one GPU's results smaller than this come home after the kernels: their whole copy (about
#: a millisecond at 64 MB) gains less from an early start than the watcher thread costs
#: (starting and joining it: 0.05-0.25 ms).  A multi-GPU worker's block always goes early:
#: its job's messages cost tens of milliseconds anyway
EARLY_MIN_BYTES = 64 << 20


class Rows:
    """Deliveries of the leading ``rows`` x ``cols`` of the (pitched) CuPy matrix ``d`` into
    ``host`` at row and column ``at`` (a multi-GPU worker's block in the shared result), its
    kernels queued on ``stream`` (the current stream by default).

    The schedule hands over a band when its kernel is queued, long before it runs (and
    before the host array's pages are locked): a watcher thread waits for each band's event,
    then sends the band's rows that are page-locked by then."""

    def __init__(self, host: HostMatrix, d, rows: int, cols: int, at=(0, 0), stream=None):
        import cupy as cp

        self.host, self.d, self.rows, self.cols, self.at = host, d, int(rows), int(cols), at
        self.compute = stream
        self.stream = cp.cuda.Stream(non_blocking=True)
        self.sent: list[tuple[int, int]] = []        # rows of d
        self._bands: queue.SimpleQueue | None = None
        self._watcher: threading.Thread | None = None
        self._error: BaseException | None = None

    def __call__(self, rows) -> None:
        """Send rows ``(start, stop)`` of ``d`` once the work queued so far on the compute
        stream has run."""
        import cupy as cp

        lo, hi = max(rows[0], 0), min(rows[1], self.rows)
        if lo >= hi:
            return
        event = cp.cuda.Event(disable_timing=True)
        event.record(self.compute)
        if self._watcher is None:
            self._bands = queue.SimpleQueue()
            self._watcher = threading.Thread(target=self._watch, args=(cp.cuda.Device(),), daemon=True)
            self._watcher.start()
        self._bands.put((event, lo, hi))

    def _watch(self, device) -> None:
        from cupy.cuda import runtime as rt

        d, (r0, c0) = self.d, self.at
        out = self.host.array[:, c0:]
        pitch, row_bytes = d.strides[0], self.cols * d.itemsize
        with device:
            while (band := self._bands.get()) is not None:
                event, lo, hi = band
                try:
                    event.synchronize()
                    ready = [(a - r0, b - r0) for a, b in self.host.locked_rows(r0 + lo, r0 + hi)]
                    for a, b in ready:
                        rt.memcpy2DAsync(out[r0 + a:].ctypes.data, out.strides[0], d.data.ptr + a * pitch, pitch,
                                         row_bytes, b - a, rt.memcpyDeviceToHost, self.stream.ptr)
                    self.sent += ready
                except BaseException as exc:  # noqa: BLE001 -- raised by wait(), in the caller's thread
                    self._error = self._error or exc

    def wait(self) -> None:
        """Wait for the bands handed over and their copies (before the host array may go)."""
        if self._watcher is not None:
            self._bands.put(None)
            self._watcher.join()
            self._watcher = None
        self.stream.synchronize()
        if self._error is not None:
            raise self._error

    def share(self) -> float:
        """The share of the rows sent before :meth:`finish` (call after :meth:`wait`)."""
        return sum(b - a for a, b in self.sent) / self.rows if self.rows else 0.0

    def finish(self) -> np.ndarray:
        """The host array, once every row is home: waits for the bands sent, copies the rest."""
        self.wait()
        r0, c0 = self.at
        for lo, hi in unsent(self.sent, self.rows):
            self.host.fill(self.d[lo:hi], hi - lo, self.cols, at=(r0 + lo, c0))
        return self.host.result()             # the mapping's threads end, also when no fill ran


def unsent(sent, n: int) -> list[tuple[int, int]]:
    """The ranges of rows ``0 .. n`` outside the (disjoint) ranges ``sent``."""
    gaps, at = [], 0
    for a, b in sorted(sent):
        if a > at:
            gaps.append((at, a))
        at = max(at, b)
    return gaps + [(at, n)] if at < n else gaps


class DeviceRows:
    """Deliveries of the leading ``rows`` x ``cols`` of the (pitched) CuPy matrix ``d`` into
    the CuPy matrix ``out`` at row and column ``at``; ``out`` may be on another GPU (a peer
    copy, over NVLink where the GPUs have it).  Each band's copy waits on the GPU for the
    band's kernel (queued on ``stream``): no host thread waits, and no SM copies."""

    def __init__(self, out, d, rows: int, cols: int, at=(0, 0), stream=None):
        import cupy as cp

        self.out, self.d, self.rows, self.cols, self.at = out, d, int(rows), int(cols), at
        self.compute = stream if stream is not None else cp.cuda.get_current_stream()
        self.stream = cp.cuda.Stream(non_blocking=True)
        self.sent: list[tuple[int, int]] = []

    def __call__(self, rows) -> None:
        """Send rows ``(start, stop)`` of ``d`` once the work queued so far on the compute
        stream has run."""
        lo, hi = max(rows[0], 0), min(rows[1], self.rows)
        if lo >= hi or not self.cols:
            return
        self._after_compute()
        self._copy(lo, hi)
        self.sent.append((lo, hi))

    def _after_compute(self) -> None:
        """Copies queued from now on wait for the work queued so far on the compute stream."""
        import cupy as cp

        event = cp.cuda.Event(disable_timing=True)
        event.record(self.compute)
        self.stream.wait_event(event)

    def _copy(self, lo: int, hi: int) -> None:
        from cupy.cuda import runtime as rt

        d, out, (r0, c0) = self.d, self.out, self.at
        rt.memcpy2DAsync(out.data.ptr + (r0 + lo) * out.strides[0] + c0 * out.itemsize, out.strides[0],
                         d.data.ptr + lo * d.strides[0], d.strides[0], self.cols * d.itemsize, hi - lo,
                         rt.memcpyDefault, self.stream.ptr)

    def wait(self) -> None:
        """Wait for the copies queued."""
        self.stream.synchronize()

    def share(self) -> float:
        """The share of the rows sent before :meth:`finish`."""
        return sum(b - a for a, b in self.sent) / self.rows if self.rows else 0.0

    def finish(self):
        """``out``, once every row is there: queues the rows not sent yet, and waits."""
        if self.rows and self.cols:
            self._after_compute()
            for lo, hi in unsent(self.sent, self.rows):
                self._copy(lo, hi)
        self.wait()
        return self.out
