"""The GPU main job as processes from the shell, two source trees in one run (issue 37).

    python3 bench/device/process_gpu.py [--before OLD/src] --after src --work DIR --out FILE.json \
        [--fresh] [--bytecode] [--gpus 2,4]

Each measurement is a new ``python3 -m floydwarp solve ...`` process (``PYTHONPATH`` = the tree)
timed from its spawn to its exit, with the lines it prints.  Each tree is compiled to bytecode
first, as ``pip install`` does: the device exports ``PYTHONDONTWRITEBYTECODE=1``, and a tree
without ``__pycache__`` there compiles floydwarp's modules from source in every process (60-70 ms
more of ``gpu start`` on one H200, bench/results/process-gpu-h200-s22/).  The kinds:

* ``cold``: the main job (``--generate 32768 -p 5 -s 3 --dtype int32 --backend gpu``) with empty
  kernel caches (a new ``CUPY_CACHE_DIR`` and ``FLOYDWARP_CACHE_DIR`` per process): the first
  run on a fresh machine; 3 per tree, alternated; each record names the CuPy kernels the run
  compiled (``cupy_kernels_compiled``: the files it left in CuPy's cache);
* ``fresh`` (with ``--fresh``; root only): the cold run with the kernel's page cache emptied
  first (``/proc/sys/vm/drop_caches``), so NumPy, CuPy and the CUDA libraries come from disk as
  on a newly started machine; 3 per tree, alternated, each followed by a floor process from an
  emptied page cache (``floor-fresh``);
* ``warm``: the same with those caches filled by the cold runs: the second run; 3 per tree,
  alternated, and the new tree again with ``--generate-on host`` (the host's generator, the
  rest of the new path);
* ``file``: ``--backend gpu`` on a graph file (``.in``, n = 16,384, 5 %, written once): 3 per tree;
* ``floor``: what any CuPy program pays around the main job's compute, 3 alternated with the
  warm runs: a process that starts the driver and GPU 0's context in a thread
  (:func:`floydwarp.launch.begin`, as the ``floydwarp`` command does), imports NumPy and CuPy,
  holds the main job's matrix on the GPU, sleeps for the last warm run's compute and exits; its
  wall over that compute is the least ratio a CuPy program reaches on the machine;
* ``in_process``: ``bench/e2e_gpu.py`` of the new tree at the main job's size (the call's
  figures in a running program, the target of the process's);
* ``multi`` (with ``--gpus 2,4``, issue 38): the main job on N GPUs, as threads (``--gpus N``,
  ``threads-N``) and under ``mpiexec -n N ... --distributed -a gpu-2d`` (``mpi-N``; with
  ``HWLOC_COMPONENTS`` exported, as the README advises on one host), 3 per tree, alternated.

With ``--bytecode``, every process reads bytecode, from a cache folder of its own
(``PYTHONPYCACHEPREFIX``), for the trees and for all that the main and file jobs import (NumPy,
CuPy, Numba, Click, the standard library), as ``pip install`` leaves an environment.  The device
ships no bytecode for NumPy and exports ``PYTHONDONTWRITEBYTECODE=1``, so there, without it,
every process compiles NumPy from source (0.3-0.5 s of a process on one H200,
bench/results/process-gpu-h200-s23/).

Medians per tree and kind go to stdout and, with every process's wall time and lines, to
``--out``.  Each process's wall over its printed compute is the ratio the issue's goals name.
"""
from __future__ import annotations

import argparse
import compileall
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

MAIN = ["solve", "--generate", "32768", "-p", "5", "-s", "3", "--dtype", "int32", "--backend", "gpu"]
#: the floor kind's process (argument: the seconds to hold the GPU); its matrix is the main job's
FLOOR = """
import sys, time
from floydwarp.launch import begin
begin((0,))
import numpy, cupy
matrix = cupy.zeros((32768, 32768), dtype=cupy.int32)
cupy.cuda.runtime.deviceSynchronize()
time.sleep(float(sys.argv[1]))
"""
#: the main job that lists, in the file named by its first argument, the source of every module it imported
IMPORTED = """
import atexit, runpy, sys
listing, sys.argv = sys.argv[1], ["floydwarp", *sys.argv[2:]]
atexit.register(lambda: open(listing, "w").write("\\n".join(sorted({
    m.__file__ for m in list(sys.modules.values()) if (getattr(m, "__file__", None) or "").endswith(".py")}))))
runpy.run_module("floydwarp", run_name="__main__")
"""
#: what every measured process gets on top of this one's environment (--bytecode adds its cache folder)
EXTRA_ENV = {}
FILE_N, FILE_PERCENT = 16384, 5
UNITS = {"s": 1.0, "ms": 1e-3, "us": 1e-6, "ns": 1e-9}


def seconds(text: str) -> float:
    value, unit = text.split()
    return float(value) * UNITS[unit]


def parse(stdout: str) -> dict:
    """The report's timing lines as numbers: time, compute, stages, before."""
    out = {}
    m = re.search(r"^time: +(\S+ \S+) \(compute (\S+ \S+)\)", stdout, re.M)
    if m:
        out["call_s"], out["compute_s"] = seconds(m[1]), seconds(m[2])
    for line in ("stages", "before"):
        m = re.search(rf"^{line}: +(.*)$", stdout, re.M)
        if m:
            out[line] = {p[1]: seconds(p[2]) for p in re.finditer(r"([a-z0-9 ]+?) (\S+ [mun]?s)(?: \([^)]*\))?(?:, |$)",
                                                                  m[1])}
    return out


#: what ``mpiexec`` gets on one host: the ranks may run as root (the device), and hwloc skips the PCI scan
#: that took most of the launcher's own 0.7-0.9 s (bench/results/mpi-launch-h200x2-s19/)
MPI_ENV = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
           "HWLOC_COMPONENTS": "-pci,-opencl,-cuda,-nvml,-rsmi,-levelzero,-gl"}


def multi_gpu_runs(gpus: int, mpiexec: str | None) -> dict:
    """``{name: (launcher words, floydwarp arguments)}`` of the main job on ``gpus`` GPUs: a thread
    each (``--gpus N``), and a rank each under ``mpiexec`` where there is one."""
    job = [w for w in MAIN if w not in ("--backend", "gpu")]
    runs = {f"threads-{gpus}": ([], [*job, "--gpus", str(gpus)])}
    if mpiexec:
        runs[f"mpi-{gpus}"] = ([mpiexec, "-n", str(gpus)], [*job, "--distributed", "-a", "gpu-2d"])
    return runs


def run(tree: str, args: list, caches: Path, launcher=(), program=("-m", "floydwarp")) -> dict:
    env = {**os.environ, **EXTRA_ENV, "PYTHONPATH": tree, "CUPY_CACHE_DIR": str(caches / "cupy"),
           "FLOYDWARP_CACHE_DIR": str(caches / "floydwarp"), **(MPI_ENV if launcher else {})}
    t0 = time.perf_counter()
    done = subprocess.run([*launcher, sys.executable, *program, *args], env=env, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    print(f"--- {tree} {' '.join([*launcher, *args])}: {wall:.2f} s (exit {done.returncode})\n{done.stdout}"
          f"{done.stderr[-2000:]}", flush=True)
    record = {"tree": tree, "args": [*launcher, *args], "wall_s": wall, "exit": done.returncode, "stdout": done.stdout,
              **parse(done.stdout)}
    if "compute_s" in record:
        record["wall_over_compute"] = wall / record["compute_s"]
    return record


def bytecode_for_imports(trees: dict, jobs: list, work: Path) -> Path:
    """Compile the trees, and every module that ``jobs`` (floydwarp argument lists) import, into
    a cache folder of their own (``sys.pycache_prefix``); that folder, for ``PYTHONPYCACHEPREFIX``.
    A module left out would be compiled from source in every process: list every job measured."""
    prefix, sources = work / "pycache", set()
    for i, job in enumerate(jobs):
        listing = work / f"imported-{i}.txt"
        run(trees["after"], [str(listing), *job], work / "listing", program=("-c", IMPORTED))
        sources.update(listing.read_text().split())
    saved, sys.pycache_prefix = sys.pycache_prefix, str(prefix)
    try:
        for source in sorted(sources):
            compileall.compile_file(source, quiet=2)
        for tree in trees.values():
            compileall.compile_dir(tree, quiet=1)
    finally:
        sys.pycache_prefix = saved
    return prefix


def drop_page_cache():
    """Empties the page cache (root only): the next process reads its libraries from disk."""
    os.sync()
    Path("/proc/sys/vm/drop_caches").write_text("3\n")


def floor_run(tree: str, hold: float, caches: Path) -> dict:
    record = {**run(tree, [str(hold)], caches, program=("-c", FLOOR)), "held_s": hold}
    if hold:
        record["wall_over_compute"] = record["wall_s"] / hold
    return record


def medians(records) -> dict:
    keys = ("wall_s", "call_s", "compute_s", "wall_over_compute")
    out = {k: statistics.median(r[k] for r in records) for k in keys if all(k in r for r in records)}
    for line in ("stages", "before"):
        names = list(dict.fromkeys(n for r in records for n in r.get(line, {})))
        out[line] = {n: statistics.median(r.get(line, {}).get(n, 0.0) for r in records) for n in names}
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--before", help="an older tree's src/, measured alternately with --after")
    ap.add_argument("--after", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--gpus", default="", help="GPU counts of the multi kind, e.g. 2,4 (default: none)")
    ap.add_argument("--bytecode", action="store_true", help="every process reads bytecode of all it imports")
    ap.add_argument("--fresh", action="store_true", help="also the fresh kind: the page cache emptied before each run")
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    trees = {name: str(Path(tree).resolve()) for name, tree in (("before", a.before), ("after", a.after)) if tree}
    work = Path(a.work)
    graph = work / "g.in"
    file_job = ["solve", str(graph), "--backend", "gpu", "--dtype", "int32"]
    run(trees["after"], ["generate", str(FILE_N), "-p", str(FILE_PERCENT), "-s", "3", "-o", str(graph)], work / "gen")
    if a.bytecode:
        EXTRA_ENV["PYTHONPYCACHEPREFIX"] = str(bytecode_for_imports(trees, [MAIN, file_job], work))
    else:
        for tree in trees.values():
            compileall.compile_dir(tree, quiet=1)
    records = {}

    def add(kind, name, rec):
        records.setdefault(f"{kind}/{name}", []).append(rec)

    warm = {name: work / f"warm-{name}" for name in trees}
    for i in range(a.repeats):                                  # cold: fresh caches each time
        for name in (trees if i % 2 == 0 else list(trees)[::-1]):
            cold = Path(tempfile.mkdtemp(dir=work, prefix=f"cold-{name}-"))
            record = run(trees[name], MAIN, cold)
            record["cupy_kernels_compiled"] = sorted(p.name for p in (cold / "cupy").glob("*.cubin"))
            add("cold", name, record)
            if i == 0:
                run(trees[name], MAIN, warm[name])              # fills this tree's caches for the warm runs
    for i in range(a.repeats if a.fresh else 0):               # fresh: no kernel nor page cache
        for name in (trees if i % 2 == 0 else list(trees)[::-1]):
            cold = Path(tempfile.mkdtemp(dir=work, prefix=f"fresh-{name}-"))
            drop_page_cache()
            add("fresh", name, run(trees[name], MAIN, cold))
        drop_page_cache()
        add("floor-fresh", "after", floor_run(trees["after"], records["fresh/after"][-1].get("compute_s", 0.0), cold))
    for i in range(a.repeats):                                  # warm: the caches kept
        for name in (trees if i % 2 == 0 else list(trees)[::-1]):
            add("warm", name, run(trees[name], MAIN, warm[name]))
        hold = records["warm/after"][-1].get("compute_s", 0.0)
        add("floor", "after", floor_run(trees["after"], hold, warm["after"]))
        add("warm", "after-host-generator", run(trees["after"], [*MAIN, "--generate-on", "host"], warm["after"]))
    for i in range(a.repeats):
        for name in (trees if i % 2 == 0 else list(trees)[::-1]):
            add("file", name, run(trees[name], file_job, warm[name]))
    mpiexec = shutil.which("mpiexec")
    for gpus in (int(g) for g in a.gpus.split(",") if g):
        for i in range(a.repeats):
            for name in (trees if i % 2 == 0 else list(trees)[::-1]):
                for kind, (launcher, args) in multi_gpu_runs(gpus, mpiexec).items():
                    add("multi", f"{kind}/{name}", run(trees[name], args, warm[name], launcher))
    e2e = subprocess.run([sys.executable, "bench/e2e_gpu.py", "--sizes", "32768", "--dtypes", "int32", "-p", "5",
                          "--repeats", "3"], env={**os.environ, **EXTRA_ENV, "PYTHONPATH": trees["after"]},
                         capture_output=True,
                         text=True)
    in_process = [json.loads(line) for line in e2e.stdout.splitlines() if line.startswith("{")]
    summary = {key: medians(recs) for key, recs in records.items()}
    print(json.dumps(summary, indent=1))
    print(json.dumps([{k: r[k] for k in ("whole_s", "ratio_to_compute", "stages_s") if k in r} for r in in_process]))
    Path(a.out).write_text(json.dumps({"trees": trees, "main_job": MAIN, "env": EXTRA_ENV, "summary": summary,
                                       "records": records, "in_process": in_process,
                                       "e2e_stderr": e2e.stderr[-4000:]}, indent=1))


if __name__ == "__main__":
    main()
