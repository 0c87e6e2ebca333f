#!/usr/bin/env python3
"""Time every gpu algorithm x dtype at a few n, plus block-size and R sweeps.

Needs CuPy and a CUDA GPU.  Run from the repository root:

    PYTHONPATH=src python3 bench/gpu_kernels.py --out bench/results/gpu_kernels.json

Reports, per run: compute time (Result.timings["compute"], CUDA events around the
kernels only), relaxations per second (n^3 / compute), the traffic model's bytes
(registry option ``bytes_moved``) per second, and the fractions of the measured copy
and add-min ceilings (gpu/ceilings.py).  Graphs are random (25 % of the pairs, weights
1..16, as seed 000) and built on the device, so no n^2 host matrix is involved.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

import floydwarp as fw
from floydwarp import registry

PER_K = ["naive", "naive-shared-k", "naive-vec", "pseudo-blocked", "work-per-thread", "grid-sync"]
BLOCKED = ["blocked", "blocked-vec", "fast"]
DTYPES = ["int16", "int32", "int64", "float32", "float64"]
ADDMIN_KIND = {"int16": "int16x2", "int32": "int32", "float32": "float32", "float64": "float64"}


def device_graph(n, seed=0, percent=25.0):
    import cupy as cp

    rs = cp.random.RandomState(seed)
    w = rs.randint(1, 17, size=(n, n), dtype=cp.int32)
    w[rs.random_sample((n, n), dtype=cp.float32) >= percent / 100.0] = 0
    # int32 weights with 0 = "no edge": the start matrix is built without a float
    # detour (INF of int32 is not exact in float32)
    return fw.Graph.from_dense(w, missing=0)


class Bench:
    def __init__(self, out: Path, budget_s: float):
        self.out = out
        self.t0 = time.perf_counter()
        self.budget = budget_s
        self.graphs = {}
        self.data = {"runs": [], "skipped": []}
        self.impls = {i.algorithm: i for i in registry.algorithms("gpu")}

    def elapsed(self):
        return time.perf_counter() - self.t0

    def graph(self, n):
        if n not in self.graphs:
            self.graphs.clear()
            import cupy as cp
            cp.get_default_memory_pool().free_all_blocks()
            self.graphs[n] = device_graph(n, seed=n)
        return self.graphs[n]

    def save(self):
        self.out.parent.mkdir(parents=True, exist_ok=True)
        self.out.write_text(json.dumps(self.data, indent=1))

    def run(self, algorithm, dtype, n, repeat=3, block_size=None, **options):
        label = dict(algorithm=algorithm, dtype=dtype, n=n, block_size=block_size, **options)
        if self.elapsed() > self.budget:
            self.data["skipped"].append(label)
            return None
        import cupy as cp

        try:
            # warm-up (compiles the module) on a small graph
            fw.solve(self.graph_small(), backend="gpu", algorithm=algorithm, dtype=dtype,
                     block_size=block_size, output="device", **options)
            g = self.graph(n)
            times, total, phases = [], [], {}
            for _ in range(repeat):
                r = fw.solve(g, backend="gpu", algorithm=algorithm, dtype=dtype, block_size=block_size,
                             output="device", **options)
                times.append(r.timings["compute"])
                total.append(r.time)
                phases = {k: v for k, v in r.timings.items() if k.startswith("phase")}
                del r
                cp.get_default_memory_pool().free_all_blocks()
                if times[-1] > 2.0:
                    break
        except Exception as exc:  # record and go on: one failure must not lose the rest
            label["error"] = f"{type(exc).__name__}: {exc}"[:500]
            self.data["runs"].append(label)
            print("ERROR", label, flush=True)
            self.save()
            return None
        t = float(np.median(times))
        itemsize = np.dtype(dtype).itemsize
        moved = self.impls[algorithm].options["bytes_moved"](n, itemsize, block_size)
        rate = n ** 3 / t
        ceil = self.data.get("ceilings", {})
        copy = ceil.get("copy_bytes_per_s")
        addmin = ceil.get("addmin_per_s", {}).get(ADDMIN_KIND.get(dtype, ""), None)
        rec = dict(label, compute_s=t, compute_all_s=times, total_s=float(np.median(total)),
                   relax_per_s=rate, bytes_model=moved, bytes_per_s=moved / t,
                   frac_copy=(moved / t / copy) if copy else None,
                   frac_addmin=(rate / addmin) if addmin else None, **phases)
        self.data["runs"].append(rec)
        print(f"{algorithm:16s} {dtype:8s} n={n:6d} bs={block_size} {options or ''} "
              f"{t * 1e3:10.2f} ms {rate / 1e12:7.3f} T/s {moved / t / 1e9:8.1f} GB/s", flush=True)
        self.save()
        return rec

    def graph_small(self):
        if "small" not in self.__dict__:
            self.small = device_graph(300, seed=1)
        return self.small


def crossover(bench, sizes=(32, 64, 128, 256, 512, 1024)):
    """Whole-solve time (copies included, host input) of gpu/fast vs the cpu backend."""
    rows = []
    try:
        registry.resolve_backend("cpu", 1)
    except Exception as exc:
        bench.data["crossover_error"] = f"cpu backend unavailable: {exc}"
        return rows
    for n in sizes:
        if bench.elapsed() > bench.budget:
            break
        g = fw.generate.erdos_renyi(n, 25, seed=n)
        row = {"n": n}
        for backend in ("cpu", "gpu"):
            fw.solve(g, backend=backend)  # warm-up / compile
            ts = []
            for _ in range(5):
                t0 = time.perf_counter()
                fw.solve(g, backend=backend)
                ts.append(time.perf_counter() - t0)
            row[backend + "_s"] = float(np.median(ts))
        rows.append(row)
        print("crossover", row, flush=True)
    bench.data["crossover"] = rows
    bench.save()
    return rows


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default="bench/results/gpu_kernels.json")
    ap.add_argument("--budget", type=float, default=420.0, help="seconds; later runs are skipped after it")
    ap.add_argument("--quick", action="store_true", help="one small size per algorithm (smoke test)")
    ap.add_argument("--only", default="", help="comma-separated algorithms")
    args = ap.parse_args(argv)

    from floydwarp.gpu import ceilings

    bench = Bench(Path(args.out), args.budget)
    bench.data["ceilings"] = ceilings.measure()
    bench.data["device"] = bench.data["ceilings"]["device"]
    print("ceilings", json.dumps(bench.data["ceilings"]), flush=True)
    bench.save()
    only = set(filter(None, args.only.split(",")))

    def want(a):
        return not only or a in only

    if args.quick:
        for a in ["sequential"] + PER_K + BLOCKED:
            if want(a):
                for dt in ("int16", "int32", "float32"):
                    bench.run(a, dt, 256 if a == "sequential" else 2048, repeat=2)
    else:
        # where the time goes in the blocked kernels (CUDA events around every launch)
        for a in ("fast", "blocked"):
            if want(a):
                for dt in ("int16", "int32", "float32"):
                    bench.run(a, dt, 16384, repeat=1, phases=True)
        if want("fast"):
            for n in (16384, 8192):
                for dt in ("int16", "int32", "float32"):
                    for v in ("tiled", "async", "vec"):
                        if not (dt == "int16" and v == "async"):
                            bench.run("fast", dt, n, repeat=2, fast_variant=v, phases=True)
        # the production kernel first, biggest sizes first: the numbers that matter most
        for n in (16384, 8192, 4096):
            for a in ("fast", "blocked", "blocked-vec"):
                if want(a):
                    for dt in DTYPES:
                        bench.run(a, dt, n, repeat=3 if n < 16384 else 2)
        for a in PER_K:
            if want(a):
                for dt in DTYPES:
                    bench.run(a, dt, 4096, repeat=2)
        if want("sequential"):
            for dt in DTYPES:
                bench.run("sequential", dt, 128, repeat=1)
            bench.run("sequential", "int32", 256, repeat=1)
        if want("blocked"):
            for bs in (16, 32, 64, 128):
                for dt in ("int16", "int32"):
                    bench.run("blocked", dt, 8192, repeat=2, block_size=bs)
                    bench.run("blocked-vec", dt, 8192, repeat=2, block_size=bs)
        if want("pseudo-blocked"):
            for R in (1, 2, 4, 8):
                bench.run("pseudo-blocked", "int32", 4096, repeat=2, R=R)
        if not only:
            crossover(bench)

    bench.data["elapsed_s"] = bench.elapsed()
    bench.save()
    table(bench.data)


def table(data):
    c = data.get("ceilings", {})
    print()
    print(f"device {data.get('device')}: copy {c.get('copy_bytes_per_s', 0) / 1e12:.2f} TB/s; add-min T/s "
          + ", ".join(f"{k} {v / 1e12:.2f}" for k, v in c.get("addmin_per_s", {}).items()))
    print(f"{'algorithm':15s} {'dtype':7s} {'n':>6s} {'opt':>6s} {'compute':>10s} {'T relax/s':>9s} "
          f"{'GB/s':>7s} {'%copy':>6s} {'%addmin':>7s}")
    for r in data["runs"]:
        opt = r.get("block_size") or r.get("R") or r.get("fast_variant") or ""
        if "error" in r:
            print(f"{r['algorithm']:15s} {r['dtype']:7s} {r['n']:6d} {opt!s:>6s} ERROR {r['error'][:60]}")
            continue
        fc = f"{100 * r['frac_copy']:.0f}" if r.get("frac_copy") else "-"
        fa = f"{100 * r['frac_addmin']:.0f}" if r.get("frac_addmin") else "-"
        ph = " ".join(f"{k}={r[k] * 1e3:.1f}ms" for k in ("phase1", "phase2", "phase3") if k in r)
        print(f"{r['algorithm']:15s} {r['dtype']:7s} {r['n']:6d} {opt!s:>6s} {r['compute_s'] * 1e3:8.1f}ms "
              f"{r['relax_per_s'] / 1e12:9.3f} {r['bytes_per_s'] / 1e9:7.0f} {fc:>6s} {fa:>7s} {ph}")
    if data.get("skipped"):
        print(f"skipped (time budget): {len(data['skipped'])}")
    for row in data.get("crossover", []):
        print("crossover", row)


if __name__ == "__main__":
    sys.exit(main())
