"""Where the witness pass of `fast` with predecessors spends its time (gpu/predecessors/witness.py), at one n:

    PYTHONPATH=src python3 bench/gpu_witness.py --n 16384 --dtype int16 [--real-weights]

Graph: ``bench.graphs.device_graph`` (25 % of the pairs, weights 1..16, built on the device).
Distances from `fast` without predecessors; then the candidate lists (``candidates``: the count
kernel, the host's sum of the blocks' sizes, the fill kernel) and the witness kernel, each timed
with CUDA events (median of ``--repeats``); prints one JSON line.
"""
from __future__ import annotations

import argparse
import json
import statistics

import cupy as cp
import numpy as np

import floydwarp as fw
from floydwarp import numeric
from floydwarp.bench.graphs import device_graph
from floydwarp.gpu.predecessors import witness


def timed(fn, repeats):
    out, times = None, []
    for _ in range(repeats + 1):                      # the first is a warm-up
        a, b = cp.cuda.Event(), cp.cuda.Event()
        a.record()
        out = fn()
        b.record()
        b.synchronize()
        times.append(cp.cuda.get_elapsed_time(a, b))
    return out, round(statistics.median(times[1:]), 2)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=16384)
    ap.add_argument("--dtype", default="int16")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--real-weights", action="store_true")
    args = ap.parse_args()
    dt = np.dtype(args.dtype)
    g = device_graph(args.n, real=args.real_weights)
    start = g.to_matrix(dt, numeric.inf_of(dt), xp=cp)
    cp.fill_diagonal(start, 0)
    d = fw.solve(g, backend="gpu", algorithm="fast", dtype=dt, output="device").dist
    wp = witness.plan_witness(_plan(g, dt), args.n, False)
    cand, t_lists = timed(lambda: witness.candidates(d, start, wp.slack, args.n ** 2), args.repeats)
    pred = cp.empty((args.n, args.n), cp.int32)
    misses, t_kernel = timed(lambda: witness.recover(d, pred, wp.slack, cand), args.repeats)
    total = cand.count
    n = args.n
    print(json.dumps({"n": n, "dtype": dt.name, "real_weights": args.real_weights, "slack": wp.slack,
                      "candidates": total, "per_column": total / n, "misses": misses,
                      "ms": {"lists": t_lists, "kernel": t_kernel},
                      "kernel_candidate_rows_per_s": n * total / (t_kernel / 1e3)}), flush=True)


def _plan(g, dt):
    from floydwarp.plan import Plan

    stats = g.weight_stats()
    return Plan(n=g.n, dtype=dt, inf=numeric.inf_of(dt), clamp=False, backend="gpu", algorithm="fast",
                predecessors=True, stats=stats)


if __name__ == "__main__":
    main()
