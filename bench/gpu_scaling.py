#!/usr/bin/env python3
"""Strong and weak scaling of the multi-GPU engine (``multigpu/gpu-2d``) against one GPU.

Needs CuPy with NCCL and GPUs.  Run from the repository root, e.g. on 2 GPUs:

    NCCL_NVLS_ENABLE=0 PYTHONPATH=src python3 bench/gpu_scaling.py --strong-gpus 1 2 \
        --weak-gpus 1 2 --strong-n 65536 --weak-n 32768 --out bench/results/gpu_scaling.json

* strong: the same n (int32) on 1 GPU with ``gpu/fast`` (the single-GPU kernel, in this
  process), then on 1, 2, ... GPUs with ``gpu-2d`` (one spawned worker per GPU, as
  ``floydwarp solve --gpus N`` runs it);
* weak (seed 001): n^3 per GPU constant, n_P = n_1 * P^(1/3) rounded to 64.

Every graph is random (25 % of pairs, weights 1..16, seed 0) and built on each GPU
(``bench.graphs.device_graph``), so no n^2 host matrix is involved; every worker builds
the same graph and uploads only its block.  Times are the engine's "compute" (the
slowest worker, rounds only: no graph, no upload, no gather); "comm" is the GPU time
inside NCCL broadcasts (with lookahead most of it overlaps phase 3, so comm share is an
upper bound of what communication costs).  Speedup and efficiency:

* strong: S = t_fast(1 GPU) / t(P), E = S / P (also against gpu-2d on 1 GPU);
* weak: E = t_fast(n_1, 1 GPU) / t(n_P, P GPUs).
"""
from __future__ import annotations

import argparse
import json
import platform
import time
from pathlib import Path

import floydwarp as fw
from floydwarp.dist import gpu_engine
from floydwarp.dist.launch import run_workers
from floydwarp.gpu.layout import round_up
from floydwarp.plan import Plan
from floydwarp import numeric


def weak_n(n1: int, gpus: int) -> int:
    return round_up(round(n1 * gpus ** (1 / 3)), 64)


def _plan(n, width, options):
    dt = numeric.canonical_dtype("int32")
    return Plan(n=n, dtype=dt, inf=numeric.inf_of(dt), clamp=False, backend="multigpu", algorithm="gpu-2d",
                block_size=width, options=dict(options))


def bench_worker(control, rank, n, width, options, seed):
    """One worker of a timed run: the device graph, its block, the rounds (no gather)."""
    import cupy as cp

    from floydwarp.bench.graphs import device_graph, free_device_memory
    from floydwarp.gpu.engine import _device

    cp.cuda.Device(rank).use()
    graph = device_graph(n, seed=seed)
    plan = _plan(n, width, options)

    def read_rows(lo, hi, c0, c1):
        return graph.matrix_rows(lo, hi, plan.dtype, plan.inf, xp=cp)[:, c0:c1]

    L, part, grid, timings, negative, meta = gpu_engine.run_rank(control, plan, read_rows, rank, width=width)
    del L, graph
    free_device_memory()
    return {"timings": timings, "metadata": meta, "device": _device()["name"]}


def run_fast(n, seed):
    """One GPU, the single-GPU ``fast`` kernel, in this process."""
    import cupy as cp

    from floydwarp.bench.graphs import device_graph, free_device_memory
    from floydwarp.gpu.engine import _device

    graph = device_graph(n, seed=seed)
    fw.solve(device_graph(256, seed=seed), backend="gpu", algorithm="fast", dtype="int32", output="device")
    r = fw.solve(graph, backend="gpu", algorithm="fast", dtype="int32", output="device")
    cp.cuda.Device().synchronize()
    out = {"timings": dict(r.timings), "device": _device()["name"]}
    del r, graph
    free_device_memory()
    return out


def record(mode, algorithm, gpus, n, got, width=None, lookahead=True):
    t = got["timings"]
    compute = t["compute"]
    rec = {"mode": mode, "algorithm": algorithm, "gpus": gpus, "n": n, "dtype": "int32", "device": got["device"],
           "compute_s": compute, "comm_s": t.get("comm", 0.0), "comm_share": t.get("comm", 0.0) / compute,
           "relaxations_per_s": float(n) ** 3 / compute, "setup_s": t.get("setup"), "panel_width": width,
           "lookahead": lookahead}
    if "metadata" in got:
        rec["grid"] = got["metadata"]["grid"]
        rec["rounds"] = got["metadata"]["rounds"]
    return rec


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--strong-gpus", type=int, nargs="+", default=[1, 2],
                    help="GPU counts of gpu-2d at --strong-n (1 GPU gpu/fast always runs)")
    ap.add_argument("--weak-gpus", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--strong-n", type=int, default=65536)
    ap.add_argument("--weak-n", type=int, default=32768)
    ap.add_argument("--width", type=int, default=gpu_engine.DEFAULT_WIDTH)
    ap.add_argument("--no-lookahead-too", action="store_true", help="also time the largest P without lookahead")
    ap.add_argument("--reserve-sms", type=int, nargs="*", default=[],
                    help="also time the largest P with phase 3 leaving this many SMs to the lookahead stream")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args(argv)

    records = []

    def save():
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps({"study": "gpu-scaling", "host": platform.node(), "args": vars(args) | {
            "out": str(args.out)}, "records": records}, indent=1))

    def emit(rec):
        records.append(rec)
        print(json.dumps(rec), flush=True)
        save()

    def multi(mode, n, gpus, lookahead=True, reserve=0):
        opts = {"lookahead": lookahead, "reserve_sms": reserve}
        got = run_workers(bench_worker, (n, args.width, opts, args.seed), gpus, timeout=900)[0]
        return dict(record(mode, "gpu-2d", gpus, n, got, args.width, lookahead), reserve_sms=reserve)

    plans = (("strong", lambda p: args.strong_n, args.strong_gpus),
             ("weak", lambda p: weak_n(args.weak_n, p), args.weak_gpus))
    for mode, n_of, gpu_counts in plans:
        if (mode == "strong" and not args.strong_n) or (mode == "weak" and not args.weak_n):
            continue
        base_fast = record(mode, "fast", 1, n_of(1), run_fast(n_of(1), args.seed))
        base_fast.update(speedup=1.0, efficiency=1.0)
        emit(base_fast)
        base_2d = None
        for p in gpu_counts:
            variants = [(True, 0)]
            if p == max(gpu_counts) and p > 1:
                variants += [(False, 0)] if args.no_lookahead_too else []
                variants += [(True, k) for k in args.reserve_sms if k]
            for lookahead, reserve in variants:
                t0 = time.perf_counter()
                rec = multi(mode, n_of(p), p, lookahead, reserve)
                rec["wall_s"] = time.perf_counter() - t0
                if base_2d is None and p == 1:
                    base_2d = rec
                if mode == "strong":
                    rec["speedup"] = base_fast["compute_s"] / rec["compute_s"]
                    rec["efficiency"] = rec["speedup"] / p
                    if base_2d is not None:
                        rec["speedup_vs_gpu2d_1"] = base_2d["compute_s"] / rec["compute_s"]
                        rec["efficiency_vs_gpu2d_1"] = rec["speedup_vs_gpu2d_1"] / p
                else:
                    rec["efficiency"] = base_fast["compute_s"] / rec["compute_s"]
                    rec["speedup"] = rec["efficiency"] * p
                    if base_2d is not None:
                        rec["efficiency_vs_gpu2d_1"] = base_2d["compute_s"] / rec["compute_s"]
                emit(rec)
    save()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
