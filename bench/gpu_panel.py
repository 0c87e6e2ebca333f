"""Rates of the panel product (gpu/panel.py) and of the PCIe link that out-of-core runs stream over.

    PYTHONPATH=src python3 bench/gpu_panel.py [--out FILE.json] [--size M] [--k K]

For each dtype, ``panel.minplus`` on an M x M block with K-wide panels (median of 5, after a
warm-up) as relaxations per second, and the pinned host <-> device copy rates; the
out-of-core engine chooses its panel width from these two numbers.  Whole checked runs
(out of core, multi-GPU): ``bench/checked_run.py``.
"""
from __future__ import annotations

import argparse
import json
import statistics
import time

import cupy as cp
import numpy as np

from floydwarp.gpu import host, panel
from floydwarp.gpu.device import info as device_info
from floydwarp.numeric import inf_of


def time_minplus(dtype, m, k, nonneg=False, repeats=5):
    """One product on random entries in [0, 1000); ``nonneg``: tell the kernel they are >= 0."""
    rng = np.random.default_rng(0)
    c = cp.asarray(rng.integers(0, 1000, size=(m, m)).astype(dtype))
    a = cp.asarray(rng.integers(0, 1000, size=(m, k)).astype(dtype))
    b = cp.asarray(rng.integers(0, 1000, size=(k, m)).astype(dtype))
    at = panel.to_words(a)
    arith = panel.Arith(-inf_of(dtype) if np.dtype(dtype).kind == "i" else -np.inf, nonneg=nonneg)
    panel.minplus(c, at, b, arith)
    cp.cuda.Device().synchronize()
    times = []
    for _ in range(repeats):
        start, end = cp.cuda.Event(), cp.cuda.Event()
        start.record()
        panel.minplus(c, at, b, arith)
        end.record()
        end.synchronize()
        times.append(cp.cuda.get_elapsed_time(start, end) / 1000.0)
    t = statistics.median(times)
    return {"dtype": np.dtype(dtype).name, "nonneg": panel.variant(dtype, arith)[1], "m": m, "k": k,
            "seconds": t, "rate": m * m * k / t}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out")
    ap.add_argument("--size", type=int, default=16384)
    ap.add_argument("--k", type=int, default=4096)
    args = ap.parse_args()
    dev = device_info(cp.cuda.Device().id)
    rows = [time_minplus(dt, args.size, args.k) for dt in ("int16", "int32", "float32", "int64", "float64")]
    rows.append(time_minplus("float32", args.size, args.k, nonneg=True))
    t0 = time.perf_counter()
    pcie = host.pcie_bandwidth(cp.cuda.Device().id)
    for r in rows:
        print(f"minplus {r['dtype'] + (' nonneg' if r['nonneg'] else ''):15s} M={r['m']} K={r['k']}: "
              f"{r['seconds'] * 1e3:8.2f} ms "
              f"{r['rate'] / 1e12:6.2f} T relax/s")
    print(f"pinned PCIe: h2d {pcie['h2d'] / 1e9:.1f} GB/s, d2h {pcie['d2h'] / 1e9:.1f} GB/s "
          f"(probe {time.perf_counter() - t0:.2f} s)")
    if args.out:
        with open(args.out, "w") as fh:
            json.dump({"device": dev["name"], "minplus": rows, "pcie": pcie}, fh, indent=1)


if __name__ == "__main__":
    main()
