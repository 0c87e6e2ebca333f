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

from ..cpu.kernels import minplus

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


@njit(parallel=True, cache=True)
def _addmin(s, b, c, reps):
    """Every thread runs the cpu backend's own min-plus tile kernel ``reps`` times on
    cache-resident operands: ``c[t] = min(c[t], s[t] (x) b)``."""
    for t in prange(c.shape[0]):
        for _ in range(reps):
            minplus(c[t], s[t], b)


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
