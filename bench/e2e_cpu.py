"""The user's wall time on the CPU, end to end (issue #22): medians and ratios to compute.

    PYTHONPATH=src python3 bench/e2e_cpu.py [--repeats R] [--studies small,...] [--out FILE.json]

Run it under the exclusive lock of the box (``flock -x /tmp/fw-cpu.lock ...``).  Measurements,
each against the compute time (``Result.timings["compute"]``) or SciPy:

* ``in_process``: ``fw.solve(fw.Graph.from_dense(w))`` for the README's graph (n = 2048,
  25 %, seed 1) as a float64 matrix with ``inf`` for no edge, int32; the whole call and
  every stage of ``Result.timings`` (median of R);
* ``process``: the README's main job ``floydwarp solve --generate 2048 -p 25 -s 1`` as a
  fresh process (median of R wall times, and of the compute time it prints), the same
  command on a 2-vertex graph (``tiny_wall_s``: what the process costs besides the solve),
  and the first run after install: an empty Numba cache (``NUMBA_CACHE_DIR`` set to a new
  folder) and the package's ``__pycache__`` folders removed (bytecode too: a pip install
  would have compiled it, so this is a little pessimistic), so every kernel it needs is
  compiled;
* ``small``: 2,000 random graphs of 10-40 vertices (30 % of the pairs, weights 1..16, 0 for
  no edge) through ``fw.floyd_warshall``, ``fw.solve`` (the same graphs with ``inf``) and
  SciPy's ``floyd_warshall``, and again as SciPy CSR matrices through all three, one by one
  (best of R passes, microseconds a graph), and
  per n from 1 to 64 (best of R passes of 500 calls): dense, as SciPy CSR matrices, and as
  edge lists (``fw.solve(fw.Graph.from_edges(...))`` against SciPy on the CSR matrix built
  from the same edges);
* ``floor``: what any process that runs one Numba kernel pays (a fresh interpreter importing
  NumPy and Numba and calling one small cached kernel), against which ``process`` is read,
  with its parts (``parts_s``: NumPy import, Numba import, the first call of a cached kernel);
* ``cold_compile``: with an empty Numba cache, seconds of each kernel the main job's solve
  compiles (top-level compilations, callees included), in the order it needs them.

Works on older trees too (stages they do not report are absent), for before/after tables.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

MAIN_JOB = ["solve", "--generate", "2048", "-p", "25", "-s", "1"]
#: the studies, in the order they run
STUDIES = ("in_process", "small", "process", "floor", "cold_compile")
TINY_JOB = ["solve", "--generate", "2", "-p", "25", "-s", "1"]


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


def _run_cli(env, job=MAIN_JOB):
    t0 = time.perf_counter()
    out = subprocess.run([sys.executable, "-m", "floydwarp", *job], env=env, check=True,
                         capture_output=True, text=True).stdout
    wall = time.perf_counter() - t0
    compute = re.search(r"compute ([\d.]+) (ms|us|s)\b", out)
    scale = {"s": 1.0, "ms": 1e-3, "us": 1e-6}[compute.group(2)]
    return wall, float(compute.group(1)) * scale, out


def _clear_bytecode():
    """Remove the package's __pycache__ folders (bytecode and Numba's default cache)."""
    import floydwarp

    for folder in Path(floydwarp.__file__).parent.rglob("__pycache__"):
        shutil.rmtree(folder, ignore_errors=True)


def process(repeats, first_runs):
    env = dict(os.environ)
    _run_cli(env)                                               # fill the Numba cache
    runs = [_run_cli(env) for _ in range(repeats)]
    wall = statistics.median(r[0] for r in runs)
    compute = statistics.median(r[1] for r in runs)
    tiny = statistics.median(_run_cli(env, TINY_JOB)[0] for _ in range(repeats))
    firsts = []
    for _ in range(first_runs):
        with tempfile.TemporaryDirectory(prefix="floydwarp-numba-cache-") as cache:
            _clear_bytecode()
            firsts.append(_run_cli({**env, "NUMBA_CACHE_DIR": cache})[0])
    _run_cli(env)                                               # the default cache again
    return {"command": "floydwarp " + " ".join(MAIN_JOB), "wall_s": wall, "compute_s": compute,
            "ratio_to_compute": wall / compute, "tiny_command": "floydwarp " + " ".join(TINY_JOB),
            "tiny_wall_s": tiny, "first_run_wall_s": statistics.median(firsts),
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
    sparse = [sp.csr_matrix(w) for w in zero]
    fw.floyd_warshall(zero[0]), fw.solve(inf[0]), fw.floyd_warshall(sparse[0]), fw.solve(sparse[0])
    out = {"graphs": "2000 random graphs, n = 10..40, 30 % of pairs, weights 1..16",
           "scipy_us": 1e6 * _best_per_graph(csg.floyd_warshall, zero, repeats),
           "floyd_warshall_us": 1e6 * _best_per_graph(fw.floyd_warshall, zero, repeats),
           "solve_us": 1e6 * _best_per_graph(fw.solve, inf, repeats),
           "scipy_sparse_us": 1e6 * _best_per_graph(csg.floyd_warshall, sparse, repeats),
           "floyd_warshall_sparse_us": 1e6 * _best_per_graph(fw.floyd_warshall, sparse, repeats),
           "solve_sparse_us": 1e6 * _best_per_graph(fw.solve, sparse, repeats), "per_n": []}
    for n in (1, 2, 4, 8, 12, 16, 20, 24, 32, 40, 48, 64):
        w = rng.integers(1, 17, (n, n)).astype(np.float64)
        w[rng.random((n, n)) > 0.3] = 0
        wi = np.where(w == 0, np.inf, w)
        ws = sp.csr_matrix(w)
        edges = (*np.nonzero(w), w[w != 0])

        def scipy_edges(e, n=n):
            return csg.floyd_warshall(sp.csr_matrix((e[2], (e[0], e[1])), shape=(n, n)))

        def solve_edges(e, n=n):
            return fw.solve(fw.Graph.from_edges(*e, n=n))

        calls = (("scipy_us", csg.floyd_warshall, w), ("floyd_warshall_us", fw.floyd_warshall, w),
                 ("solve_us", fw.solve, wi), ("scipy_sparse_us", csg.floyd_warshall, ws),
                 ("floyd_warshall_sparse_us", fw.floyd_warshall, ws), ("solve_sparse_us", fw.solve, ws),
                 ("scipy_edges_us", scipy_edges, edges), ("solve_edges_us", solve_edges, edges))
        for _, fn, a in calls:
            fn(a)
        out["per_n"].append({"n": n, **{key: 1e6 * _best_per_graph(fn, [a] * 500, repeats) for key, fn, a in calls}})
    return out


_FLOOR = "import numpy as np; from floydwarp.graph import kernels; kernels.weight_scan(np.zeros(1))"

_FLOOR_PARTS = """
import time
t0 = time.perf_counter()
import numpy as np
t1 = time.perf_counter()
import numba
t2 = time.perf_counter()
from floydwarp.graph import kernels
kernels.weight_scan(np.zeros(1))
t3 = time.perf_counter()
print({"numpy_import": t1 - t0, "numba_import": t2 - t1, "first_cached_call": t3 - t2})
"""

_COLD = """
import time
import floydwarp as fw
from numba.core import event
records, open_ = [], []

class Compiles(event.Listener):
    def on_start(self, e):
        open_.append((e.data["dispatcher"].py_func.__qualname__, time.perf_counter()))

    def on_end(self, e):
        name, t = open_.pop()
        if not open_:
            records.append((name, time.perf_counter() - t))

event.register("numba:compile", Compiles())
fw.solve(fw.generate.erdos_renyi(2048, 25, seed=1))
print(records)
"""


def floor(repeats):
    """Seconds of a fresh process that runs one small cached Numba kernel (median of R), and
    its parts (medians)."""
    import ast

    env = dict(os.environ)
    subprocess.run([sys.executable, "-c", _FLOOR], env=env, check=True)
    walls, parts = [], []
    for _ in range(repeats):
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-c", _FLOOR], env=env, check=True)
        walls.append(time.perf_counter() - t0)
        out = subprocess.run([sys.executable, "-c", _FLOOR_PARTS], env=env, check=True, capture_output=True,
                             text=True).stdout
        parts.append(ast.literal_eval(out.strip().splitlines()[-1]))
    empty = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-c", "pass"], env=env, check=True)
        empty.append(time.perf_counter() - t0)
    return {"code": _FLOOR, "wall_s": statistics.median(walls), "python_alone_s": statistics.median(empty),
            "parts_s": {k: statistics.median(p[k] for p in parts) for k in parts[0]}}


def cold_compile():
    """Seconds of each kernel the main job's solve compiles with an empty Numba cache (the
    first also pays Numba's one-time start of its compiler)."""
    import ast

    with tempfile.TemporaryDirectory(prefix="floydwarp-numba-cache-") as cache:
        out = subprocess.run([sys.executable, "-c", _COLD], env={**os.environ, "NUMBA_CACHE_DIR": cache},
                             check=True, capture_output=True, text=True).stdout
    records = ast.literal_eval(out.strip().splitlines()[-1])
    return {"seconds": [{"kernel": name, "s": s} for name, s in records], "kernels_s": sum(s for _, s in records)}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--first-runs", type=int, default=None,
                        help="first runs after install (empty cache) to take the median of (default: repeats // 3)")
    parser.add_argument("--out", default=None)
    parser.add_argument("--label", default="", help="a name for the tree measured (before/after)")
    parser.add_argument("--studies", default=",".join(STUDIES),
                        help=f"comma-separated studies to run (default: all of {', '.join(STUDIES)})")
    args = parser.parse_args(argv)
    import floydwarp as fw

    chosen = args.studies.split(",")
    unknown = set(chosen) - set(STUDIES)
    if unknown:
        parser.error(f"unknown studies: {', '.join(sorted(unknown))}")
    first_runs = args.first_runs or max(1, args.repeats // 3)
    run_study = {"in_process": lambda: in_process(args.repeats), "small": lambda: small(args.repeats),
                 "process": lambda: process(args.repeats, first_runs), "floor": lambda: floor(args.repeats),
                 "cold_compile": cold_compile}
    record = {"label": args.label, "machine": platform.processor() or platform.machine(),
              "cpus": os.cpu_count(), "python": platform.python_version(), "floydwarp": fw.__file__,
              "repeats": args.repeats, **{name: run_study[name]() for name in STUDIES if name in chosen}}
    text = json.dumps(record, indent=1)
    if args.out:
        with open(args.out, "w") as fh:
            fh.write(text + "\n")
    print(text)


if __name__ == "__main__":
    main()
