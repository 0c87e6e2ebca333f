"""Device -> host and host -> device copies of a large matrix, every way we know (gpu/transfer.py).

    PYTHONPATH=src python3 bench/transfer_probe.py N [--out X.json]

Prints one JSON record per method: seconds (median of 3) and GB/s.
"""
import argparse
import json
import os
import statistics
import tempfile
import time

import cupy as cp
import cupyx
import numpy as np

from floydwarp.gpu import transfer

ap = argparse.ArgumentParser()
ap.add_argument("n", type=int)
ap.add_argument("--out")
args = ap.parse_args()
n = args.n
a = cp.arange(n * n, dtype=cp.int32).reshape(n, n)
nbytes = a.nbytes
rt = cp.cuda.runtime
records = []


def timed(name, fn, reps=3, check=None):
    times = []
    for _ in range(reps):
        cp.cuda.Device().synchronize()
        t0 = time.perf_counter()
        res = fn()
        cp.cuda.Device().synchronize()
        times.append(time.perf_counter() - t0)
        if check is not None:
            check(res)
        del res
    t = statistics.median(times)
    rec = {"method": name, "n": n, "bytes": nbytes, "seconds": t, "GBps": nbytes / t / 1e9, "all": times}
    records.append(rec)
    print(json.dumps(rec), flush=True)


def ok(h):
    assert h[n - 1, n - 1] == n * n - 1 and h[1, 0] == n, "wrong copy"


def pageable():
    out = np.empty((n, n), np.int32)
    rt.memcpy(out.ctypes.data, a.data.ptr, nbytes, rt.memcpyDeviceToHost)
    return out


timed("pageable memcpy (before)", pageable, check=ok)
for w in (1, 4, 8, 12, 16):
    transfer.workers_for = lambda nb, w=w: w
    for chunk in (16 << 20, 32 << 20, 64 << 20):
        transfer.CHUNK_BYTES = chunk
        timed(f"staged workers={w} chunk={chunk >> 20}MB", lambda: transfer.to_host(a), check=ok)


def locked():
    """The result path of the in-core engine: pieces page-locked beforehand (during the compute
    there; here a wait), then one DMA per piece straight into them."""
    host = transfer.HostMatrix((n, n), np.int32, lock=True)
    for f in host._futures:               # every piece locked (the copy is what is timed below)
        f.result()
    return host


def locked_fill(host):
    return host.fill(a)


for _ in range(3):
    t0 = time.perf_counter()
    prepared = locked()
    t1 = time.perf_counter()
    timed("page-locked destination (DMA)", lambda: locked_fill(prepared), reps=1, check=ok)
    records[-1]["lock_s"] = t1 - t0
    del prepared


def whole_pinned():
    out = cupyx.empty_pinned((n, n), np.int32)
    rt.memcpy(out.ctypes.data, a.data.ptr, nbytes, rt.memcpyDeviceToHost)
    return out


timed("cupyx.empty_pinned whole + memcpy", whole_pinned, reps=2, check=ok)
cp.get_default_pinned_memory_pool().free_all_blocks()

transfer.workers_for = lambda nb: 8
transfer.CHUNK_BYTES = 32 << 20
host = transfer.to_host(a)
b = cp.empty_like(a)


def up_pageable():
    rt.memcpy(b.data.ptr, host.ctypes.data, nbytes, rt.memcpyHostToDevice)


def up_staged():
    transfer.upload(transfer.Pitched.of(b), transfer.ArraySink(host))


timed("upload pageable memcpy", up_pageable)
timed("upload staged workers=8", up_staged)
assert bool((b == a).all())

with tempfile.TemporaryDirectory(dir="/tmp") as d:
    path = os.path.join(d, "x.bin")

    def to_file():
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
        try:
            transfer.download(transfer.Pitched.of(a), transfer.FileSink(fd, 128))
        finally:
            os.close(fd)

    timed("staged to file (page cache)", to_file, reps=1)
    got = np.fromfile(path, dtype=np.int32, offset=128, count=n * 2)
    assert got[n] == n

if args.out:
    with open(args.out, "w") as f:
        json.dump(records, f, indent=1)
