"""The user's wall time on the CPU, end to end (issue #22): medians and ratios to compute.

    PYTHONPATH=src python3 bench/e2e_cpu.py [--repeats R] [--out FILE.json]

Three measurements, each against the compute time (``Result.timings["compute"]``) or SciPy:

* ``in_process``: ``fw.solve(fw.Graph.from_dense(w))`` for the README's graph (n = 2048,
  25 %, seed 1) as a float64 matrix with ``inf`` for no edge, int32; the whole call and
  every stage of ``Result.timings`` (median of R);
* ``process``: the README's main job ``floydwarp solve --generate 2048 -p 25 -s 1`` as a
  fresh process (median of R wall times, and of the compute time it prints), and the first
  run after install: the same with an empty Numba cache (``NUMBA_CACHE_DIR`` set to a new
  folder), so every kernel it needs is compiled;
* ``small``: 2,000 random graphs of 10-40 vertices (30 % of the pairs, weights 1..16, 0 for
  no edge) through ``fw.floyd_warshall``, ``fw.solve`` (the same graphs with ``inf``) and
  SciPy's ``floyd_warshall``, one by one (best of R passes, microseconds a graph), and
  per n from 1 to 64 (best of R passes of 500 calls), dense and as SciPy CSR matrices;
* ``floor``: what any process that runs one Numba kernel pays (a fresh interpreter importing
  NumPy and Numba and calling one small cached kernel), against which ``process`` is read;
* ``cold_compile``: with an empty Numba cache, seconds of each kernel's first call (the
  main job's int32 kernels, in the order the job needs them).

Works on older trees too (stages they do not report are absent), for before/after tables.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

MAIN_JOB = ["solve", "--generate", "2048", "-p", "25", "-s", "1"]


def in_process(repeats):
    import floydwarp as fw

    w = fw.generate.erdos_renyi(2048, 25, seed=1).to_matrix("float64", np.inf)
    fw.solve(fw.Graph.from_dense(w), dtype="int32")            # compile or load the kernels
    walls, stages = [], []
    for _ in range(repeats):
        t0 = time.perf_counter()
        r = fw.solve(fw.Graph.from_dense(w), dtype="int32")
        walls.append(time.perf_counter() - t0)
        stages.append(r.timings)
    med = {k: statistics.median(s.get(k, 0.0) for s in stages) for k in stages[0]}
    whole = statistics.median(walls)
    return {"n": 2048, "dtype": "int32", "whole_s": whole, "stages_s": med,
            "ratio_to_compute": whole / med["compute"]}


def _run_cli(env):
    t0 = time.perf_counter()
    out = subprocess.run([sys.executable, "-m", "floydwarp", *MAIN_JOB], env=env, check=True,
                         capture_output=True, text=True).stdout
    wall = time.perf_counter() - t0
    compute = re.search(r"compute ([\d.]+) (ms|us|s)\b", out)
    scale = {"s": 1.0, "ms": 1e-3, "us": 1e-6}[compute.group(2)]
    return wall, float(compute.group(1)) * scale, out


def process(repeats):
    env = dict(os.environ)
    _run_cli(env)                                               # fill the Numba cache
    runs = [_run_cli(env) for _ in range(repeats)]
    wall = statistics.median(r[0] for r in runs)
    compute = statistics.median(r[1] for r in runs)
    firsts = []
    for _ in range(max(1, repeats // 3)):
        with tempfile.TemporaryDirectory(prefix="floydwarp-numba-cache-") as cache:
            firsts.append(_run_cli({**env, "NUMBA_CACHE_DIR": cache})[0])
    return {"command": "floydwarp " + " ".join(MAIN_JOB), "wall_s": wall, "compute_s": compute,
            "ratio_to_compute": wall / compute, "first_run_wall_s": statistics.median(firsts),
            "first_runs_s": firsts, "output": runs[-1][2]}


def _best_per_graph(fn, graphs, repeats):
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        for g in graphs:
            fn(g)
        best = min(best, (time.perf_counter() - t0) / len(graphs))
    return best


def small(repeats):
    import scipy.sparse as sp
    import scipy.sparse.csgraph as csg

    import floydwarp as fw

    rng = np.random.default_rng(0)
    zero, inf = [], []
    for _ in range(2000):
        n = int(rng.integers(10, 41))
        w = rng.integers(1, 17, (n, n)).astype(np.float64)
        w[rng.random((n, n)) > 0.3] = 0
        zero.append(w)
        inf.append(np.where(w == 0, np.inf, w))
    fw.floyd_warshall(zero[0]), fw.solve(inf[0])
    out = {"graphs": "2000 random graphs, n = 10..40, 30 % of pairs, weights 1..16",
           "scipy_us": 1e6 * _best_per_graph(csg.floyd_warshall, zero, repeats),
           "floyd_warshall_us": 1e6 * _best_per_graph(fw.floyd_warshall, zero, repeats),
           "solve_us": 1e6 * _best_per_graph(fw.solve, inf, repeats), "per_n": []}
    for n in (1, 2, 4, 8, 12, 16, 20, 24, 32, 40, 48, 64):
        w = rng.integers(1, 17, (n, n)).astype(np.float64)
        w[rng.random((n, n)) > 0.3] = 0
        wi = np.where(w == 0, np.inf, w)
        ws = sp.csr_matrix(w)
        fw.floyd_warshall(w), fw.solve(wi), fw.floyd_warshall(ws), fw.solve(ws)
        out["per_n"].append({"n": n, **{key: 1e6 * _best_per_graph(fn, [a] * 500, repeats) for key, fn, a in (
            ("scipy_us", csg.floyd_warshall, w), ("floyd_warshall_us", fw.floyd_warshall, w),
            ("solve_us", fw.solve, wi), ("scipy_sparse_us", csg.floyd_warshall, ws),
            ("floyd_warshall_sparse_us", fw.floyd_warshall, ws), ("solve_sparse_us", fw.solve, ws))}})
    return out


_FLOOR = "import numpy as np; from floydwarp.graph import kernels; kernels.weight_scan(np.zeros(1))"

_COLD = """
import time, numpy as np
t = time.perf_counter()
from floydwarp.cpu import kernels as K
from floydwarp.graph import kernels as G
x, lo, i64 = np.zeros((2, 2, 3, 3), np.int32), np.int32(-5), np.zeros(1, np.int64)
calls = [("edge_tiles", G.edge_tiles, (i64, i64, i64 + 1, i64, i64 + 1, 6, i64, i64, i64, 100, x,
                                       np.zeros((0, 0, 0, 0), np.int32), False)),
         ("close_pivot", K.close_pivot, (x, 0, True, lo)), ("update_panels", K.update_panels, (x, 0, True, lo)),
         ("product", K.product, (x, 0, True, lo)), ("unpack", K.unpack, (x, np.zeros((6, 6), np.int32)))]
times = {"import": time.perf_counter() - t}
for name, fn, args in calls:
    t = time.perf_counter()
    fn(*args)
    times[name] = time.perf_counter() - t
print(times)
"""


def floor(repeats):
    """Seconds of a fresh process that runs one small cached Numba kernel (median of R)."""
    env = dict(os.environ)
    subprocess.run([sys.executable, "-c", _FLOOR], env=env, check=True)
    walls = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-c", _FLOOR], env=env, check=True)
        walls.append(time.perf_counter() - t0)
    return {"code": _FLOOR, "wall_s": statistics.median(walls)}


def cold_compile():
    """Seconds of each main-job kernel's first call with an empty Numba cache (the first is
    also Numba's one-time start of its compiler)."""
    import ast

    with tempfile.TemporaryDirectory(prefix="floydwarp-numba-cache-") as cache:
        out = subprocess.run([sys.executable, "-c", _COLD], env={**os.environ, "NUMBA_CACHE_DIR": cache},
                             check=True, capture_output=True, text=True).stdout
    times = ast.literal_eval(out.strip().splitlines()[-1])
    return {"seconds": times, "kernels_s": sum(v for k, v in times.items() if k != "import")}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--out", default=None)
    parser.add_argument("--label", default="", help="a name for the tree measured (before/after)")
    args = parser.parse_args(argv)
    import floydwarp as fw

    record = {"label": args.label, "machine": platform.processor() or platform.machine(),
              "cpus": os.cpu_count(), "python": platform.python_version(), "floydwarp": fw.__file__,
              "repeats": args.repeats, "in_process": in_process(args.repeats), "small": small(args.repeats),
              "process": process(args.repeats), "floor": floor(args.repeats), "cold_compile": cold_compile()}
    text = json.dumps(record, indent=1)
    if args.out:
        with open(args.out, "w") as fh:
            fh.write(text + "\n")
    print(text)


if __name__ == "__main__":
    main()
