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


# ---------------------------------------------------------------------- the "pipe" study
#: measured add-min ceilings on the lent H100 (bench/NOTES.md; ceilings.measure())
H100_ADDMIN = {"int16": 32.56e12, "int32": 16.26e12, "float32": 14.58e12, "float64": 3.40e12}


def _check_equal(label, got, want, log):
    import cupy as cp

    got = cp.asnumpy(got) if hasattr(got, "get") else np.asarray(got)
    want = cp.asnumpy(want) if hasattr(want, "get") else np.asarray(want)
    ok = got.shape == want.shape and bool(np.array_equal(got, want))
    log.append({"check": label, "ok": ok})
    print(("ok   " if ok else "FAIL ") + label, flush=True)
    return ok


def pipe_correctness(log, dtypes=("int16", "int32", "float32"), shapes=((4, 4), (8, 4))):
    """Bit-exact checks of the "pipe" variant: against the reference backend (small n),
    against gpu/blocked (larger n, not a multiple of the tile, negative weights), with
    few phase-3 blocks (long tile runs), and the device-built start matrix of an edge
    list against the dense upload path."""
    gen = fw.generate.erdos_renyi
    ok = True
    g = gen(300, 10, seed=5, potential=20)
    ref = fw.solve(g, backend="reference", dtype="float64").to_dense()
    for dt in dtypes:
        r = fw.solve(g, backend="gpu", algorithm="fast", dtype=dt)
        ok &= _check_equal(f"reference n=300 neg {dt} {r.metadata.get('tile')}", r.to_dense(), ref, log)
    cases = [(1000, 8, 11, 20), (1025, 8, 12, 0), (2100, 5, 13, 20), (130, 30, 14, 0)]
    for n, pct, seed, pot in cases:
        g = gen(n, pct, seed=seed, potential=pot)
        for dt in dtypes:
            try:
                want = fw.solve(g, backend="gpu", algorithm="blocked", dtype=dt, output="device").dist
            except fw.FloydwarpError as exc:
                print("skip", n, dt, exc)
                continue
            for shape in shapes:
                for grid in (None, 5):
                    if shape == shapes[0]:
                        r = fw.solve(g, backend="gpu", algorithm="fast", dtype=dt, fast_variant="pipe",
                                     pipe_shape=shape, pipe_unroll=16, pipe_grid=grid, output="device")
                        ok &= _check_equal(f"pipe {dt} n={n} pot={pot} shape={shape} unroll=16 grid={grid}",
                                           r.dist, want, log)
                    r = fw.solve(g, backend="gpu", algorithm="fast", dtype=dt, fast_variant="pipe",
                                 pipe_shape=shape, pipe_grid=grid, output="device")
                    ok &= _check_equal(f"pipe {dt} n={n} pot={pot} shape={shape} grid={grid}", r.dist, want, log)
            dense = fw.solve(g.to_matrix("float64", np.inf), backend="gpu", algorithm="fast", dtype=dt,
                             output="device")
            r = fw.solve(g, backend="gpu", algorithm="fast", dtype=dt, output="device")
            ok &= _check_equal(f"edge upload == dense upload {dt} n={n}", r.dist, dense.dist, log)
    # predecessors (blocked kernels): distances equal, every predecessor edge tight
    g = gen(1000, 8, seed=21, potential=20)
    for dt in ("int32", "float32"):
        r = fw.solve(g, backend="gpu", algorithm="fast", dtype=dt, predecessors=True)
        want = fw.solve(g, backend="gpu", algorithm="blocked", dtype=dt).to_dense()
        ok &= _check_equal(f"pred dist {dt}", r.to_dense(), want, log)
        d, pred = r.to_dense(), r.pred
        w = g.to_matrix("float64", np.inf)
        reach = np.isfinite(d)
        np.fill_diagonal(reach, False)
        i, j = np.nonzero(reach)
        pp = pred[i, j]
        tight = bool(((pp >= 0) & (pp < 1000)).all()) and bool(np.array_equal(d[i, pp] + w[pp, j], d[i, j]))
        log.append({"check": f"pred tight {dt}", "ok": tight})
        print(("ok   " if tight else "FAIL ") + f"pred tight {dt}", flush=True)
        ok &= tight
    return ok


def _time_solve(g, repeat, **kw):
    import cupy as cp

    times, phases = [], {}
    for _ in range(repeat):
        r = fw.solve(g, backend="gpu", output="device", **kw)
        times.append(r.timings["compute"])
        phases = {k: v for k, v in r.timings.items() if k.startswith("phase")}
        del r
        cp.get_default_memory_pool().free_all_blocks()
    return float(np.median(times)), times, phases


def pipe_timing(rows, sizes=(16384,), configs=None, repeat=3):
    import cupy as cp

    configs = configs or {
        dt: [dict(fast_variant="pipe")]
        for dt in ("int16", "int32", "float32")
    }
    small = device_graph(300, seed=1)
    for n in sizes:
        cp.get_default_memory_pool().free_all_blocks()
        g = device_graph(n, seed=n)
        for dt, cfgs in configs.items():
            for kw in cfgs:
                fw.solve(small, backend="gpu", algorithm="fast", dtype=dt, output="device", **kw)  # compile
                t, times, _ = _time_solve(g, repeat, algorithm="fast", dtype=dt, **kw)
                rate = n ** 3 / t
                row = dict(n=n, dtype=dt, **{k: (list(v) if isinstance(v, tuple) else v) for k, v in kw.items()},
                           compute_s=t, all_s=times, tps=rate / 1e12, frac=rate / H100_ADDMIN[dt])
                rows.append(row)
                print(f"{dt:8s} n={n:6d} {kw} {t * 1e3:9.2f} ms {rate / 1e12:7.2f} T/s "
                      f"{100 * rate / H100_ADDMIN[dt]:5.1f} %", flush=True)
        del g


def small_n(rows, sizes=(1024, 2048), repeat=15):
    """End-to-end solve() of a host graph (edge list, default dtype), host result."""
    for n in sizes:
        g = fw.generate.erdos_renyi(n, 25, seed=n)
        for label, kw in (("default", {}), ("pred", dict(predecessors=True))):
            fw.solve(g, backend="gpu", **kw)
            walls, stages = [], []
            for _ in range(repeat):
                t0 = time.perf_counter()
                r = fw.solve(g, backend="gpu", **kw)
                walls.append(time.perf_counter() - t0)
                stages.append(dict(r.timings))
            i = int(np.argsort(walls)[len(walls) // 2])
            row = dict(n=n, case=label, dtype=r.dtype.name, wall_s=float(np.median(walls)), all_s=walls,
                       stages=stages[i])
            rows.append(row)
            print(f"small n={n} {label} {r.dtype.name}: {1e3 * row['wall_s']:.2f} ms  "
                  + " ".join(f"{k}={1e3 * v:.2f}" for k, v in stages[i].items()), flush=True)
        # the matrix already on the device, result left there
        import cupy as cp

        m = cp.asarray(g.to_matrix("float64", np.inf))
        fw.solve(m, backend="gpu")
        walls = []
        for _ in range(repeat):
            cp.cuda.Device().synchronize()
            t0 = time.perf_counter()
            r = fw.solve(m, backend="gpu")
            cp.cuda.Device().synchronize()
            walls.append(time.perf_counter() - t0)
        rows.append(dict(n=n, case="device", wall_s=float(np.median(walls)), stages=dict(r.timings)))
        r = fw.solve(m, backend="gpu", phases=True)
        rows.append(dict(n=n, case="device-phases", stages=dict(r.timings)))
        print(f"small n={n} phases: " + " ".join(f"{k}={1e3 * v:.3f}" for k, v in r.timings.items()), flush=True)
        print(f"small n={n} device-resident: {1e3 * np.median(walls):.2f} ms "
              + " ".join(f"{k}={1e3 * v:.2f}" for k, v in r.timings.items()), flush=True)


def cp_free():
    import cupy as cp

    cp.get_default_memory_pool().free_all_blocks()


def pipe_study(out: Path, parts):
    data = {"checks": [], "timing": [], "small": []}

    def save():
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(data, indent=1))

    t0 = time.perf_counter()
    if "check" in parts:
        data["correct"] = bool(pipe_correctness(data["checks"]))
        save()
        print(f"correctness: {data['correct']} ({time.perf_counter() - t0:.0f} s)", flush=True)
    if "small" in parts:
        small_n(data["small"])
        save()
    if "time" in parts:
        pipe_timing(data["timing"])
        save()
    if "big" in parts:
        pipe_timing(data["timing"], sizes=(32768,), repeat=1, configs={dt: [dict(fast_variant="pipe")]
                                                             for dt in ("int16", "int32", "float32")})
        save()
    if "final" in parts:
        final = data.setdefault("final", [])
        for n in (16384, 32768):
            pipe_timing(final, sizes=(n,), repeat=3, configs={dt: [dict()] for dt in ("int16", "int32", "float32")})
            save()
        cp_free()
        g = device_graph(16384, seed=16384)
        for dt in ("int16", "int32", "float32"):
            fw.solve(device_graph(300, seed=1), backend="gpu", dtype=dt, predecessors=True, output="device")
            t, times, _ = _time_solve(g, 1, algorithm="fast", dtype=dt, predecessors=True)
            rate = 16384 ** 3 / t
            final.append(dict(n=16384, dtype=dt, predecessors=True, compute_s=t, tps=rate / 1e12,
                              frac=rate / H100_ADDMIN[dt]))
            print(f"{dt:8s} n= 16384 predecessors {t * 1e3:9.2f} ms {rate / 1e12:7.2f} T/s", flush=True)
            save()
        del g
        cp_free()
    if "phases" in parts:
        g = device_graph(16384, seed=16384)
        for dt in ("int16", "int32", "float32"):
            t, _, ph = _time_solve(g, 1, algorithm="fast", dtype=dt, phases=True)
            data.setdefault("phases", []).append(dict(dtype=dt, compute_s=t, **ph))
            print(f"phases {dt}: compute {t * 1e3:.1f} ms " + " ".join(f"{k}={v * 1e3:.1f}" for k, v in ph.items()),
                  flush=True)
        save()
    data["elapsed_s"] = time.perf_counter() - t0
    save()
    print(f"pipe study done in {data['elapsed_s']:.0f} s")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default="bench/results/gpu_kernels.json")
    ap.add_argument("--budget", type=float, default=420.0, help="seconds; later runs are skipped after it")
    ap.add_argument("--quick", action="store_true", help="one small size per algorithm (smoke test)")
    ap.add_argument("--only", default="", help="comma-separated algorithms")
    ap.add_argument("--pipe", default="", help="run the 'pipe' study parts (check,small,time,big,phases) only")
    args = ap.parse_args(argv)

    if args.pipe:
        pipe_study(Path(args.out), set(args.pipe.split(",")))
        return 0

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
                    for v in ("pipe", "tiled", "async", "vec"):
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
