"""The device's two ceilings, measured with microbenchmarks (METHOD.md: "two numbers first").

* ``copy_bytes_per_s``: a large device-to-device copy, counting bytes read plus bytes
  written -- the most any memory-bound kernel can move.
* ``addmin_per_s``: ``min(a + b, c)`` per second in registers (C independent chains per
  thread, every SM full) for int32, packed int16 pairs (``int16x2``: two relaxations per
  instruction, counted as two), float32 and float64 -- the most relaxations per second any
  Floyd-Warshall kernel can do.

``measure()`` needs CuPy and a GPU; the numbers feed bench/NOTES.md and ``floydwarp bench``.
"""
from __future__ import annotations

import numpy as np

from . import device, modules

CHAINS = 16  # independent chains per thread in ceilings.cu


def _median_seconds(cp, fn, repeat=5, warmup=1):
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(repeat):
        a, b = cp.cuda.Event(), cp.cuda.Event()
        a.record()
        fn()
        b.record()
        b.synchronize()
        times.append(cp.cuda.get_elapsed_time(a, b) / 1000.0)
    return float(np.median(times))


def copy_bandwidth(nbytes=1 << 30, repeat=5) -> float:
    """Bytes read + written per second by a device-to-device copy of ``nbytes``."""
    import cupy as cp

    src = cp.ones(nbytes // 4, dtype=cp.int32)
    dst = cp.empty_like(src)
    t = _median_seconds(cp, lambda: dst.data.copy_from_device_async(src.data, src.nbytes), repeat)
    return 2.0 * nbytes / t


def addmin_rate(kind: str, iters=4096, repeat=5) -> float:
    """Relaxations (min(a + b, c)) per second for kind in int32, int16x2, float32, float64,
    and float32-nonneg (two relaxations of non-negative floats per three-way integer min)."""
    import cupy as cp

    if kind == "int16x2":
        expr, dtype, per_op = "ceil_addmin_s16x2", np.uint32, 2
    elif kind == "float32-nonneg":
        expr, dtype, per_op = "ceil_addmin2_f32_nonneg", np.dtype(np.float32), 2
    else:
        dtype = np.dtype(kind)
        expr, per_op = modules.name_expression("ceil_addmin", dtype), 1
    group = ("ceil_addmin_s16x2", "ceil_addmin2_f32_nonneg",
             *(modules.name_expression("ceil_addmin", t) for t in ("int32", "float32", "float64")))
    kern = modules.kernel("ceilings.cu", expr, group)
    block = 256
    per_sm = cp.cuda.driver.occupancyMaxActiveBlocksPerMultiprocessor(kern.kernel.ptr, block, 0)
    grid = max(1, per_sm) * device.current()["sm_count"] * 4
    rng = np.random.default_rng(0)
    if dtype == np.uint32:
        host = rng.integers(0, 1 << 13, size=1024, dtype=np.uint32)
        host = host | (host << 16)
    else:
        host = rng.integers(1, 1000, size=1024).astype(dtype)
    inp = cp.asarray(host)
    out = cp.empty(grid * block, dtype=dtype)
    t = _median_seconds(cp, lambda: kern((grid,), (block,), (out, inp, np.int32(iters))), repeat)
    return float(grid * block) * iters * CHAINS * per_op / t


def measure() -> dict:
    """``{"device", "copy_bytes_per_s", "addmin_per_s": {int32, int16x2, float32, float32-nonneg,
    float64}}``."""
    return {
        "device": device.current()["name"],
        "copy_bytes_per_s": copy_bandwidth(),
        "addmin_per_s": {k: addmin_rate(k) for k in ("int32", "int16x2", "float32", "float32-nonneg", "float64")},
    }


if __name__ == "__main__":  # python -m floydwarp.gpu.ceilings
    import json

    print(json.dumps(measure(), indent=2))
