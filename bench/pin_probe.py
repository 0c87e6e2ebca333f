"""How long pinning a large host matrix takes, two ways (cudaHostAlloc, cudaHostRegister).

    PYTHONPATH=src python3 bench/pin_probe.py GIB
"""
import sys
import time

import cupy as cp
import cupyx
import numpy as np

gib = float(sys.argv[1])
nbytes = int(gib * 2**30)
t0 = time.perf_counter()
try:
    a = cupyx.empty_pinned(nbytes, np.uint8)
    print(f"cupyx.empty_pinned {gib} GiB: {time.perf_counter() - t0:.1f} s", flush=True)
    del a
    cp.get_default_pinned_memory_pool().free_all_blocks()
except Exception as exc:
    print(f"cupyx.empty_pinned {gib} GiB failed after {time.perf_counter() - t0:.1f} s: {exc!r}", flush=True)
t0 = time.perf_counter()
b = np.empty(nbytes, np.uint8)
b[::4096] = 0
t1 = time.perf_counter()
try:
    cp.cuda.runtime.hostRegister(b.ctypes.data, nbytes, 0)
    print(f"touch {t1 - t0:.1f} s, cudaHostRegister {time.perf_counter() - t1:.1f} s", flush=True)
    cp.cuda.runtime.hostUnregister(b.ctypes.data)
except Exception as exc:
    print(f"cudaHostRegister failed: {exc!r}", flush=True)
