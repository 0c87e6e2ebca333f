"""GPU building blocks played by NumPy, for tests of GPU engines' logic on the CPU: CuPy's
streams and events run nothing (every step executes at once, in order), ``gpu.panel``'s
products are plain loops."""
from types import SimpleNamespace

import numpy as np


class _Stream:
    """Streams and events run nothing: the simulation executes every step at once, in order."""

    def __init__(self, non_blocking=False, priority=None):
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def record(self):
        return _Event()

    def wait_event(self, event):
        pass

    def synchronize(self):
        pass


class _Event:
    def record(self, stream=None):
        pass


FAKE_CUPY = SimpleNamespace(empty=np.empty, cuda=SimpleNamespace(
    Stream=_Stream, Event=_Event, get_elapsed_time=lambda a, b: 0.0,
    runtime=SimpleNamespace(deviceGetStreamPriorityRange=lambda: (0, -1))))


class NumpyPanel:
    """``gpu.panel``'s contract on host arrays: to_words is a transpose, minplus a k loop."""

    UNIT = 64

    @staticmethod
    def word_dtype(dtype):
        return np.dtype(dtype)

    @staticmethod
    def to_words(a, out=None, keep=-1, stream=None):
        out[...] = a.T
        return out

    @staticmethod
    def minplus(c, at, b, arith, *, skip_rows=(0, 0), skip_cols=(0, 0), stream=None, blocks=None):
        assert c.shape[0] % 64 == 0 and c.shape[1] % 64 == 0 and at.shape == (b.shape[0], c.shape[0])
        prod = np.full(c.shape, np.iinfo(c.dtype).max, c.dtype)
        for k in range(at.shape[0]):
            np.minimum(prod, at[k][:, None] + b[k][None, :], out=prod)
        keep = np.ones(c.shape, bool)
        keep[skip_rows[0] * 64:(skip_rows[0] + skip_rows[1]) * 64] = False
        keep[:, skip_cols[0] * 64:(skip_cols[0] + skip_cols[1]) * 64] = False
        new = np.minimum(c, prod)
        c[keep] = np.maximum(new, arith.ninf)[keep] if arith.clamp else new[keep]
        return c

    @staticmethod
    def close_block(view, plan, stream=None):
        for k in range(view.shape[0]):
            np.minimum(view, view[:, k:k + 1] + view[k:k + 1, :], out=view)
        return view


# ---------------------------------------------------------------------- streams in any order
class ScheduledCupy:
    """CuPy's streams, events, device buffers and copies played by NumPy, run in an order the
    code cannot count on: work queued on a stream runs only when something waits for it (a
    synchronize, an event another stream waits on), and then in a random (seeded) order that
    keeps each stream's own order and the events waited for -- any order a GPU may pick, as one
    that other processes share does (its copy engines run while its SMs serve someone else).

    Device buffers are :class:`DeviceArray` s: writing through one (slice assignment) and the
    ``panel`` / ``tiles`` operations of :meth:`install` are queued on the current stream;
    ``runtime.memcpy2DAsync`` on the stream it names.  ``pin=False``: ``hostRegister`` fails
    (the staging path of gpu/host.py)."""

    class CudaError(RuntimeError):
        pass

    def __init__(self, seed: int, *, pin: bool = True):
        from collections import deque

        self._deque = deque
        self.rng = np.random.default_rng(seed)
        self.pin = pin
        self.streams, self.by_ptr = [], {}
        self.running = False
        self.null = self._Stream(self)
        self.current = [self.null]
        rt = SimpleNamespace(memcpyHostToDevice=1, memcpyDeviceToHost=2, memcpyDefault=4,
                             CUDARuntimeError=self.CudaError,
                             memcpy2DAsync=self._memcpy2d, hostRegister=self._register,
                             hostUnregister=lambda ptr: None, memGetInfo=lambda: (1 << 40, 1 << 40))
        self.runtime = rt
        cuda = SimpleNamespace(
            runtime=rt, Stream=lambda non_blocking=False, priority=None: self._Stream(self),
            Event=lambda disable_timing=False: self._Event(self),
            get_current_stream=lambda: self.current[-1],
            Device=lambda *a: SimpleNamespace(id=0, synchronize=self.drain),
            memory=SimpleNamespace(OutOfMemoryError=type("OutOfMemoryError", (MemoryError,), {})),
            driver=SimpleNamespace(CUDADriverError=type("CUDADriverError", (RuntimeError,), {})))
        self.cupy = SimpleNamespace(cuda=cuda, empty=self.empty, full=self.full)
        self.cupyx = SimpleNamespace(empty_pinned=lambda shape, dtype=np.float64: np.empty(shape, dtype))

    # ------------------------------------------------------------------ streams
    class _Stream:
        def __init__(self, sched):
            self.sched, self.queue, self.issued, self.done = sched, sched._deque(), 0, 0
            self.ptr = len(sched.streams) + 1
            sched.streams.append(self)
            sched.by_ptr[self.ptr] = self

        def push(self, run, ready=None):
            self.queue.append((run, ready))
            self.issued += 1

        def __enter__(self):
            self.sched.current.append(self)
            return self

        def __exit__(self, *exc):
            self.sched.current.pop()
            return False

        def record(self):
            return SimpleNamespace(stream=self, position=self.issued)

        def wait_event(self, event):
            self.push(lambda: None, lambda: event.stream.done >= event.position)

        def synchronize(self):
            self.sched.until(lambda: self.done >= self.issued)

    class _Event:
        """A point in a stream's queue, as ``cupy.cuda.Event().record(stream)`` marks."""

        def __init__(self, sched):
            self.sched = sched

        def record(self, stream=None):
            self.stream = stream if stream is not None else self.sched.current[-1]
            self.position = self.stream.issued

    def step(self) -> bool:
        """Run the next operation of one stream (at random) whose next operation may run."""
        ready = [s for s in self.streams if s.queue and (s.queue[0][1] is None or s.queue[0][1]())]
        if not ready:
            return False
        s = ready[int(self.rng.integers(len(ready)))]
        run, _ = s.queue.popleft()
        self.running = True
        try:
            run()
        finally:
            self.running = False
        s.done += 1
        return True

    def until(self, condition):
        while not condition():
            assert self.step(), "a stream waits for an event that never comes"

    def drain(self):
        self.until(lambda: all(not s.queue for s in self.streams))

    def enqueue(self, run):
        """Queue ``run`` on the current stream (run it now while the scheduler runs queued work)."""
        if self.running:
            run()
        else:
            self.current[-1].push(run)

    # ------------------------------------------------------------------ memory
    def empty(self, shape, dtype=np.float64):
        a = np.empty(shape, dtype)
        a[...] = 7 if np.dtype(dtype).kind in "iu" else np.nan     # what a fresh device buffer may hold
        return a.view(DeviceArray).bound(self)

    def full(self, shape, value, dtype=np.float64):
        a = self.empty(shape, dtype)
        a[...] = value                                           # queued, as CuPy's fill kernel
        return a

    def _memcpy2d(self, dst, dpitch, src, spitch, width, height, kind, stream_ptr):
        import ctypes

        def run():
            for r in range(height):
                ctypes.memmove(dst + r * dpitch, src + r * spitch, width)
        self.by_ptr[stream_ptr].push(run)

    def _register(self, ptr, size, flags):
        if not self.pin:
            raise self.CudaError("cudaErrorMemoryAllocation (simulated)")

    def queued(self, fn):
        """``fn`` (a panel or tile operation) queued on the current stream; returns its ``out``."""
        def call(*args, **kw):
            self.enqueue(lambda: fn(*args, **kw))
            return kw.get("out")
        return call

    def install(self, monkeypatch, ooc_module):
        """Play CuPy (and the panel products, by :class:`NumpyPanel`) for the out-of-core engine."""
        import sys

        from floydwarp.gpu import panel

        monkeypatch.setitem(sys.modules, "cupy", self.cupy)
        monkeypatch.setitem(sys.modules, "cupy.cuda", self.cupy.cuda)
        monkeypatch.setitem(sys.modules, "cupy.cuda.runtime", self.runtime)
        monkeypatch.setitem(sys.modules, "cupyx", self.cupyx)
        monkeypatch.setattr(ooc_module, "panel", SimpleNamespace(
            UNIT=64, Arith=panel.Arith, word_dtype=NumpyPanel.word_dtype,
            minplus=self.queued(NumpyPanel.minplus), to_words=self.queued(NumpyPanel.to_words)))
        monkeypatch.setattr(ooc_module, "tiles", SimpleNamespace(close_block=self.queued(NumpyPanel.close_block)))
        monkeypatch.setattr(ooc_module, "device", SimpleNamespace(current=lambda: {"name": "simulated GPU"}))
        monkeypatch.setattr(ooc_module, "pcie_bandwidth", lambda device_id: {"h2d": 25e9, "d2h": 25e9})


class DeviceArray(np.ndarray):
    """A device buffer of :class:`ScheduledCupy`: writes through it are queued on the current
    stream; ``.data.ptr`` is its address, as CuPy's."""

    def bound(self, sched):
        self._sched = sched
        return self

    def __array_finalize__(self, obj):
        self._sched = getattr(obj, "_sched", None)

    def __setitem__(self, key, value):
        base = self.view(np.ndarray)
        if isinstance(value, np.ndarray):
            value = value.view(np.ndarray)
        self._sched.enqueue(lambda: base.__setitem__(key, value))

    @property
    def data(self):
        return SimpleNamespace(ptr=self.ctypes.data)
