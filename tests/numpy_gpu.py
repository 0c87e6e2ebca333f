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
