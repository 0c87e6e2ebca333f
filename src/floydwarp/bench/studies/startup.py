"""``startup``: the user's wall time on the CPU beyond the kernels: the call, the process, the first run.

Each part of ``PARTS`` (``parts``, default all) is one record against the compute time:

``in-process``
    ``fw.solve(fw.Graph.from_dense(w))`` for a random graph of ``n`` vertices (default 2048;
    ``percent``, ``seed``) given as a float64 matrix with ``inf`` for no edge, int32: the whole
    call and every stage of ``Result.timings`` (median of ``repeats``);
``process``
    the main job ``floydwarp solve --generate N -p P -s S`` as a fresh process (median of
    ``repeats`` wall times, and of the compute time it prints).  The README's main job is
    ``--n 2048 -p 25 -s 1``;
``tiny-process``
    the same command on 2 vertices: what the process costs besides the solve;
``first-run``
    the main job as the first run after install: an empty Numba cache (``NUMBA_CACHE_DIR`` a
    new folder) and the package's ``__pycache__`` folders removed (bytecode too: a pip install
    would have compiled it, so this is a little pessimistic), so every kernel it needs is
    compiled (median of ``repeats``).  It deletes the source tree's ``__pycache__`` folders:
    later processes compile their bytecode and cached kernels again;
``floor``
    what any process that runs one Numba kernel pays: a fresh interpreter importing NumPy and
    Numba and calling one small cached kernel, with its parts (``parts_s``) and a bare
    ``python -c pass`` (``python_alone_s``);
``cold-compile``
    with an empty Numba cache, the seconds of each kernel the main job's solve compiles
    (top-level compilations, callees included), in the order it needs them.

Child processes run this tree's floydwarp (its folder first on ``PYTHONPATH``).  To compare
two trees, run the study from each (``bench/README.md``: before and after).
"""
from __future__ import annotations

import ast
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from ...errors import FloydwarpError
from ..report import Column, ratio_cell, seconds_cell
from . import common

NAME = "startup"
TITLE = "The user's wall time on the CPU: the call, the process, the first run after install"
PARTS = ("in-process", "process", "tiny-process", "first-run", "floor", "cold-compile")
DEFAULT_N = 2048

COLUMNS = [
    Column("part", "part", width=-13),
    Column("what", "command", width=-44),
    Column("wall", "wall_s", seconds_cell, 9),
    Column("compute", "compute_s", seconds_cell, 9),
    Column("wall/compute", "ratio_to_compute", ratio_cell, 12),
]


def columns(records=()):
    return COLUMNS


def chosen_parts(config) -> list[str]:
    parts = list(config.parts or PARTS)
    unknown = [p for p in parts if p not in PARTS]
    if unknown:
        raise FloydwarpError(f"unknown startup part {', '.join(unknown)}; the parts are {', '.join(PARTS)}")
    return [p for p in PARTS if p in parts]


def child_env(**extra) -> dict:
    """The environment of a child process: this tree's floydwarp first on ``PYTHONPATH``."""
    import floydwarp

    src = str(Path(floydwarp.__file__).resolve().parent.parent)
    env = dict(os.environ, **extra)
    env["PYTHONPATH"] = os.pathsep.join([src, *filter(None, [os.environ.get("PYTHONPATH")])])
    return env


def job(config, n=None) -> list[str]:
    return ["solve", "--generate", str(n or config.n or DEFAULT_N), "-p", f"{config.percent:g}", "-s",
            str(config.seed)]


def run_cli(args, env) -> tuple[float, float]:
    """(wall seconds, the compute seconds the command printed) of ``floydwarp ARGS`` as a process."""
    t0 = time.perf_counter()
    out = subprocess.run([sys.executable, "-m", "floydwarp", *args], env=env, check=True, capture_output=True,
                         text=True).stdout
    wall = time.perf_counter() - t0
    found = re.search(r"compute ([\d.]+) (ms|us|s)\b", out)
    if found is None:
        raise FloydwarpError(f"'floydwarp {' '.join(args)}' printed no compute time: {out[-300:]!r}")
    return wall, float(found.group(1)) * {"s": 1.0, "ms": 1e-3, "us": 1e-6}[found.group(2)]


def clear_bytecode() -> None:
    """Remove the package's ``__pycache__`` folders (bytecode and Numba's default cache)."""
    import floydwarp

    for folder in Path(floydwarp.__file__).parent.rglob("__pycache__"):
        shutil.rmtree(folder, ignore_errors=True)


def in_process(config) -> dict:
    import floydwarp as fw

    n = int(config.n or DEFAULT_N)
    w = fw.generate.erdos_renyi(n, config.percent, seed=config.seed).to_matrix("float64", np.inf)
    fw.solve(fw.Graph.from_dense(w), dtype="int32")            # compile or load the kernels
    walls, stages = [], []
    for _ in range(config.repeats):
        t0 = time.perf_counter()
        r = fw.solve(fw.Graph.from_dense(w), dtype="int32")
        walls.append(time.perf_counter() - t0)
        stages.append(r.timings)
    med = {k: statistics.median(s.get(k, 0.0) for s in stages) for k in stages[0]}
    whole = statistics.median(walls)
    return {"command": f"fw.solve(fw.Graph.from_dense(w)), n = {n}, int32", "n": n, "dtype": "int32",
            "wall_s": whole, "walls_s": walls, "compute_s": med["compute"], "stages_s": med,
            "ratio_to_compute": whole / med["compute"] if med["compute"] else None}


def process(config, args) -> dict:
    env = child_env()
    run_cli(args, env)                                          # fill the Numba cache
    runs = [run_cli(args, env) for _ in range(config.repeats)]
    wall, compute = statistics.median(r[0] for r in runs), statistics.median(r[1] for r in runs)
    return {"command": "floydwarp " + " ".join(args), "wall_s": wall, "walls_s": [r[0] for r in runs],
            "compute_s": compute, "ratio_to_compute": wall / compute if compute else None}


def first_run(config) -> dict:
    env, walls = child_env(), []
    for _ in range(config.repeats):
        with tempfile.TemporaryDirectory(prefix="floydwarp-numba-cache-") as cache:
            clear_bytecode()
            walls.append(run_cli(job(config), {**env, "NUMBA_CACHE_DIR": cache})[0])
    run_cli(job(config), env)                                   # the default cache filled again
    return {"command": "floydwarp " + " ".join(job(config)) + " (empty caches)", "wall_s": statistics.median(walls),
            "walls_s": walls}


FLOOR_CODE = "import numpy as np; from floydwarp.graph import kernels; kernels.weight_scan(np.zeros(1))"
FLOOR_PARTS_CODE = """
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


def run_python(code, env, *, capture=False):
    t0 = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", code], env=env, check=True, capture_output=capture, text=True)
    return time.perf_counter() - t0, out.stdout


def floor(config) -> dict:
    env = child_env()
    run_python(FLOOR_CODE, env)                                 # the kernel cached
    walls = [run_python(FLOOR_CODE, env)[0] for _ in range(config.repeats)]
    parts = [ast.literal_eval(run_python(FLOOR_PARTS_CODE, env, capture=True)[1].strip().splitlines()[-1])
             for _ in range(config.repeats)]
    alone = [run_python("pass", env)[0] for _ in range(config.repeats)]
    return {"command": "python: NumPy, Numba, one cached kernel", "code": FLOOR_CODE,
            "wall_s": statistics.median(walls), "python_alone_s": statistics.median(alone),
            "parts_s": {k: statistics.median(p[k] for p in parts) for k in parts[0]}}


COLD_CODE = """
import sys, time
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
fw.solve(fw.generate.erdos_renyi(int(sys.argv[1]), float(sys.argv[2]), seed=int(sys.argv[3])))
print(records)
"""


def cold_compile(config) -> dict:
    n = int(config.n or DEFAULT_N)
    with tempfile.TemporaryDirectory(prefix="floydwarp-numba-cache-") as cache:
        out = subprocess.run([sys.executable, "-c", COLD_CODE, str(n), str(config.percent), str(config.seed)],
                             env=child_env(NUMBA_CACHE_DIR=cache), check=True, capture_output=True, text=True).stdout
    kernels = [{"kernel": name, "s": s} for name, s in ast.literal_eval(out.strip().splitlines()[-1])]
    return {"command": f"kernels of fw.solve, n = {n}, empty Numba cache", "kernels": kernels,
            "wall_s": sum(k["s"] for k in kernels)}


def run(config, *, command=None, on_record=None) -> dict:
    parts = chosen_parts(config)
    env = common.environment(config, command)
    records = []
    emit = common.emitter(records, on_record)
    measure = {"in-process": lambda: in_process(config), "process": lambda: process(config, job(config)),
               "tiny-process": lambda: process(config, job(config, 2)), "first-run": lambda: first_run(config),
               "floor": lambda: floor(config), "cold-compile": lambda: cold_compile(config)}
    for part in parts:
        rec = {"part": part, "n": int(config.n or DEFAULT_N), "percent": config.percent, "seed": config.seed,
               "repeats": config.repeats, "status": "ok", "note": ""}
        try:
            rec.update(measure[part]())
        except (subprocess.CalledProcessError, FloydwarpError) as exc:
            detail = getattr(exc, "stderr", None) or str(exc)
            rec.update(status="error", note=f"{type(exc).__name__}: {' '.join(str(detail).split())[-300:]}")
        emit(rec)
    return common.payload(NAME, config, env, records)


# ---------------------------------------------------------------- views
def summary_lines(data) -> list[str]:
    lines = []
    for r in common.ok(data.get("records", [])):
        ratio = f" ({ratio_cell(r['ratio_to_compute'])} the compute time)" if r.get("ratio_to_compute") else ""
        lines.append(f"{r['part']}: {seconds_cell(r['wall_s'])}{ratio}: {r['command']}")
        if r["part"] == "cold-compile":
            lines += [f"    {k['kernel']}: {seconds_cell(k['s'])}" for k in r["kernels"]]
    return lines


def plots(data, out_dir, ceilings=None, prefix=""):
    from .. import plots as P

    recs = [r for r in common.ok(data.get("records", [])) if r["part"] != "cold-compile"]
    if not recs:
        return []
    path = Path(out_dir) / f"{prefix}{NAME}-wall.png"
    P.bar_chart([(r["part"], r["wall_s"]) for r in recs], path, ylabel="seconds (median)",
                title="The user's wall time on the CPU, by part")
    return [(path.name, "Wall time of each part (median of the repeats)")]
