"""CPU microbenchmarks for the ceilings study: memory copy bandwidth and the add-min rate.

* :func:`copy_bandwidth`: bytes read + written per second copying a large array,
  by ``np.copyto`` (one thread) and by a Numba ``prange`` copy (every core); the
  ceiling is the larger.
* :func:`addmin_rate`: relaxations ``c = min(c, s + b)`` per second on cache-resident
  arrays, the inner loop of Floyd-Warshall: per thread ``ACC`` independent rows of
  accumulators, ``K`` pivot rows, vectorized over ``L`` columns; all cores through
  ``prange``.  The most relaxations per second a CPU kernel can do with the data in
  L1 -- what a tile kernel approaches, never exceeds.

Imports Numba: only the ceilings study imports this module.
"""
from __future__ import annotations

import time

import numba
import numpy as np
from numba import njit, prange
from numba.extending import overload
from numba.np.numpy_support import as_dtype

#: accumulator rows per thread, pivot rows, columns: 32 x 256 int32 = 32 KiB of pivot rows and
#: 4 KiB of accumulators -- in L1 (L2 for 8-byte types)
ACC, K, L = 4, 32, 256


@njit(parallel=True, cache=True)
def _parallel_copy(dst, src, chunks):
    n = src.size
    step = (n + chunks - 1) // chunks
    for c in prange(chunks):
        lo = c * step
        hi = min(n, lo + step)
        for i in range(lo, hi):
            dst[i] = src[i]


def narrow(value, arr):
    """``value`` in ``arr``'s dtype: Numba widens int32 + int32 to int64, which halves the lanes."""
    return value


@overload(narrow, inline="always")
def _narrow_impl(value, arr):
    scalar = as_dtype(arr.dtype).type

    def impl(value, arr):
        return scalar(value)

    return impl


@njit(parallel=True, cache=True, fastmath=True)
def _addmin(s, b, c, reps):
    """For every thread t, rep, k (by 4) and row pair i (by 4), over columns j:
    ``c[t, i, j] = min(c[t, i, j], s[t, i, k] + b[k, j])`` -- 16 independent relaxations
    per loaded c vector, as a register-blocked Floyd-Warshall tile kernel does."""
    acc, kk, w = c.shape[1], b.shape[0], b.shape[1]
    for t in prange(c.shape[0]):
        ct = c[t]
        st = s[t]
        for _ in range(reps):
            for i in range(0, acc, 4):
                for k in range(0, kk, 4):
                    a00 = st[i, k]; a01 = st[i, k + 1]; a02 = st[i, k + 2]; a03 = st[i, k + 3]
                    a10 = st[i + 1, k]; a11 = st[i + 1, k + 1]; a12 = st[i + 1, k + 2]; a13 = st[i + 1, k + 3]
                    a20 = st[i + 2, k]; a21 = st[i + 2, k + 1]; a22 = st[i + 2, k + 2]; a23 = st[i + 2, k + 3]
                    a30 = st[i + 3, k]; a31 = st[i + 3, k + 1]; a32 = st[i + 3, k + 2]; a33 = st[i + 3, k + 3]
                    for j in range(w):
                        b0 = b[k, j]; b1 = b[k + 1, j]; b2 = b[k + 2, j]; b3 = b[k + 3, j]
                        c0 = ct[i, j]; c1 = ct[i + 1, j]; c2 = ct[i + 2, j]; c3 = ct[i + 3, j]
                        x = narrow(a00 + b0, ct); c0 = x if x < c0 else c0
                        x = narrow(a10 + b0, ct); c1 = x if x < c1 else c1
                        x = narrow(a20 + b0, ct); c2 = x if x < c2 else c2
                        x = narrow(a30 + b0, ct); c3 = x if x < c3 else c3
                        x = narrow(a01 + b1, ct); c0 = x if x < c0 else c0
                        x = narrow(a11 + b1, ct); c1 = x if x < c1 else c1
                        x = narrow(a21 + b1, ct); c2 = x if x < c2 else c2
                        x = narrow(a31 + b1, ct); c3 = x if x < c3 else c3
                        x = narrow(a02 + b2, ct); c0 = x if x < c0 else c0
                        x = narrow(a12 + b2, ct); c1 = x if x < c1 else c1
                        x = narrow(a22 + b2, ct); c2 = x if x < c2 else c2
                        x = narrow(a32 + b2, ct); c3 = x if x < c3 else c3
                        x = narrow(a03 + b3, ct); c0 = x if x < c0 else c0
                        x = narrow(a13 + b3, ct); c1 = x if x < c1 else c1
                        x = narrow(a23 + b3, ct); c2 = x if x < c2 else c2
                        x = narrow(a33 + b3, ct); c3 = x if x < c3 else c3
                        ct[i, j] = c0; ct[i + 1, j] = c1; ct[i + 2, j] = c2; ct[i + 3, j] = c3


def copy_bandwidth(nbytes: int = 1 << 28, repeat: int = 5) -> dict:
    """``{"numpy": B/s, "parallel": B/s, "bytes": nbytes}``: bytes read + written per second."""
    src = np.ones(nbytes // 8, dtype=np.float64)
    dst = np.empty_like(src)
    np.copyto(dst, src)                              # first touch: page faults off the clock
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        np.copyto(dst, src)
        times.append(time.perf_counter() - t0)
    one = 2.0 * src.nbytes / min(times)
    chunks = 8 * numba.get_num_threads()
    _parallel_copy(dst, src, chunks)
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        _parallel_copy(dst, src, chunks)
        times.append(time.perf_counter() - t0)
    every = 2.0 * src.nbytes / min(times)
    return {"numpy": one, "parallel": every, "bytes": int(src.nbytes)}


def addmin_rate(dtype="int32", seconds: float = 0.3, repeat: int = 3) -> float:
    """Relaxations per second of the add-min loop in ``dtype`` on every Numba thread."""
    dt = np.dtype(dtype)
    threads = numba.get_num_threads()
    rng = np.random.default_rng(0)
    s = rng.integers(0, 1000, size=(threads, ACC, K)).astype(dt)
    b = rng.integers(0, 1000, size=(K, L)).astype(dt)
    c = np.full((threads, ACC, L), 30000, dtype=dt)
    _addmin(s, b, c, 1)                              # compile (or load) off the clock
    per_rep = threads * ACC * K * L
    reps = 16
    while True:                                      # size the run to about ``seconds``
        t0 = time.perf_counter()
        _addmin(s, b, c, reps)
        t = time.perf_counter() - t0
        if t >= seconds / 4 or reps > 1 << 24:
            break
        reps *= 4
    reps = max(1, int(reps * seconds / max(t, 1e-9)))
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        _addmin(s, b, c, reps)
        times.append(time.perf_counter() - t0)
    return per_rep * reps / min(times)               # a ceiling: the best of the repeats
