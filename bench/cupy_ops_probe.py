"""Seconds CuPy spends compiling (NVRTC) the first use of operations floydwarp's array code calls,
with an empty CUPY_CACHE_DIR: reductions compile for seconds, elementwise kernels for ~0.1 s."""
import time

import cupy as cp

import nvrtc_clock

compiles = nvrtc_clock.install()
m = cp.random.random((300, 300)) < 0.5
x = cp.arange(1000, dtype=cp.int64)
ops = {
    "count_nonzero 2d": lambda: int(cp.count_nonzero(m)),
    "bool sum 2d": lambda: int(m.sum()),
    "bool sum int64": lambda: int(m.sum(dtype=cp.int64)),
    "any 1d": lambda: bool((x < 0).any()),
    "max int64": lambda: int(x.max()),
    "searchsorted": lambda: cp.searchsorted(x, cp.arange(10)),
    "cumsum int64": lambda: cp.cumsum(x),
    "nonzero 2d": lambda: cp.nonzero(m),
    "bincount": lambda: cp.bincount(x, minlength=2000),
}
for name, op in ops.items():
    n0, s0 = len(compiles), sum(compiles)
    t = time.perf_counter()
    op()
    cp.cuda.Device().synchronize()
    print(f"{name:18s} wall {time.perf_counter() - t:6.2f}s nvrtc {len(compiles) - n0} calls "
          f"{sum(compiles) - s0:6.2f}s", flush=True)
