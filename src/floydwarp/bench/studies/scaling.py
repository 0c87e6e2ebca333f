"""``scaling``: MPI ranks, strong and weak (seed 001 figure 7; seed 002 figures 2-4); with
``--gpus 1,2,4`` the multi-GPU engine against one GPU instead (:mod:`.scaling_gpus`).

For each process count P in ``ranks`` (default 1, 2, 4) one MPI job is launched,

    mpiexec -n P [--oversubscribe] python -m floydwarp.bench.mpi_worker --jobs ... ,

(``--oversubscribe`` only for Open MPI, found from ``mpiexec --version``; the
environment carries ``OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
NCCL_NVLS_ENABLE=0``), running every algorithm (default ``blocked-2d`` and ``rows``)
for each mode:

* strong: the same n at every P (``--n``, default 1024);
* weak: n^3 / P constant, n_P = n * P^(1/3) rounded to a multiple of 8.

Speedup and efficiency are of rank 0's "compute" time against the smallest P run
(P0): strong S = t(P0) P0 / t(P), E = S / P; weak E = t(P0) / t(P), S = P E (scaled
speedup).  The communication share is timings["comm"] / timings["compute"] (seconds
inside MPI calls, lookahead overlap included, over the compute stage).

``threads`` is the CPU threads per rank (default 1: ranks = cores used).  The worker
takes ``scaling_backend`` and ``devices_per_rank`` through, for the multi-GPU path.
"""
from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

from ...errors import BackendUnavailableError, FloydwarpError
from ..report import Column, percent_cell, rate_cell, ratio_cell, seconds_cell
from . import common, scaling_gpus

NAME = "scaling"
TITLE = "Strong and weak scaling over MPI ranks"
DEFAULT_N = 1024
DEFAULT_ALGORITHMS = ("blocked-2d", "rows")
LAUNCH_ENV = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1", "NCCL_NVLS_ENABLE": "0",
              "PYTHONUNBUFFERED": "1"}

COLUMNS = [
    Column("mode", "mode", width=-6),
    Column("algorithm", "algorithm", width=-11),
    Column("ranks", "ranks", width=5),
    Column("n", "n", lambda v: f"{v:,}", 7),
    Column("time", "time_s", seconds_cell, 9),
    Column("compute", "compute_s", seconds_cell, 9),
    Column("comm", "comm_s", seconds_cell, 9),
    Column("comm %", "comm_share", percent_cell, 7),
    Column("relax/s", "relaxations_per_s", rate_cell, 9),
    Column("speedup", "speedup", ratio_cell, 8),
    Column("efficiency", "efficiency", percent_cell, 10),
]


def columns(records=()):
    if any("gpus" in r for r in records):
        return scaling_gpus.COLUMNS
    return COLUMNS


def weak_n(n1: int, ranks: int) -> int:
    return common.round_to(n1 * ranks ** (1 / 3), 8)


def find_mpiexec(config) -> str:
    exe = config.mpiexec or shutil.which("mpiexec") or shutil.which("mpirun")
    if exe is None:
        raise BackendUnavailableError("no mpiexec (or mpirun) on PATH: install MPICH or Open MPI to run the "
                                      "scaling study")
    return exe


def is_open_mpi(mpiexec: str) -> bool:
    try:
        out = subprocess.run([mpiexec, "--version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return False
    text = (out.stdout + out.stderr).lower()
    return "open mpi" in text or "openrte" in text or "open-mpi" in text


def launch_env(threads) -> dict:
    import floydwarp

    env = dict(os.environ, **LAUNCH_ENV)
    src = str(Path(floydwarp.__file__).resolve().parents[1])
    env["PYTHONPATH"] = src + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    if threads:
        env["NUMBA_NUM_THREADS"] = str(threads)
    return env


def worker_command(mpiexec, ranks, jobs, config, threads, openmpi) -> list[str]:
    cmd = [mpiexec, "-n", str(ranks)] + (["--oversubscribe"] if openmpi else [])
    cmd += [sys.executable, "-m", "floydwarp.bench.mpi_worker", "--jobs", json.dumps(jobs),
            "--backend", config.scaling_backend, "--dtype", config.dtypes[0], "--percent", str(config.percent),
            "--seed", str(config.seed), "--repeats", str(config.repeats)]
    if threads:
        cmd += ["--threads", str(threads)]
    block = config.block_sizes[0] if config.block_sizes else None
    if block:
        cmd += ["--block-size", str(block)]
    if config.devices_per_rank:
        cmd += ["--devices-per-rank", str(config.devices_per_rank)]
    for key, value in (config.options or {}).items():
        cmd += ["--option", f"{key}={json.dumps(value)}"]
    return cmd


def run(config, *, command=None, on_record=None) -> dict:
    from ... import registry

    if config.gpus:
        return scaling_gpus.run(config, command=command, on_record=on_record)
    from ..mpi_worker import PREFIX

    backend = config.scaling_backend
    if config.backends and list(config.backends) != [backend]:
        raise FloydwarpError(f"the scaling study runs the {backend!r} backend under mpiexec; "
                             f"not {', '.join(config.backends)}")
    reason = registry.unavailable_reason(backend)
    if reason:
        raise BackendUnavailableError(f"backend {backend!r} is not available: {reason}")
    wanted = list(config.algorithms or DEFAULT_ALGORITHMS)
    common.check_algorithms([backend], wanted)
    algorithms = common.algorithm_names(backend, wanted)
    if len(config.dtypes) != 1:
        raise FloydwarpError("the scaling study runs one --dtype at a time")
    mpiexec = find_mpiexec(config)
    openmpi = is_open_mpi(mpiexec)
    n1 = int(config.n or DEFAULT_N)
    threads = config.threads or 1
    env = common.environment(config, command)
    records, launches = [], []
    emit = common.emitter(records, on_record)
    base: dict[tuple, dict] = {}
    for ranks in sorted(dict.fromkeys(config.ranks)):
        wanted_jobs = []
        for algorithm in algorithms:
            for mode in config.modes:
                wanted_jobs.append({"n": n1 if mode == "strong" else weak_n(n1, ranks), "algorithm": algorithm,
                                    "mode": mode})
        unique = list({(j["n"], j["algorithm"]): j for j in wanted_jobs}.values())
        cmd = worker_command(mpiexec, ranks, unique, config, threads, openmpi)
        launches.append(shlex.join(cmd))
        got, failure = _launch(cmd, launch_env(threads), config.mpi_timeout, PREFIX)
        for job in wanted_jobs:
            rec = got.get((job["n"], job["algorithm"]))
            if rec is None:
                rec = {"n": job["n"], "algorithm": job["algorithm"], "ranks": ranks, "backend": backend,
                       "dtype": config.dtypes[0], "threads_per_rank": threads, "status": "error",
                       "note": failure or "the MPI job printed no record for this case"}
            rec = dict(rec, mode=job["mode"], threads=threads)
            _speedup(rec, base)
            emit(rec)
    return common.payload(NAME, config, env, records, {"launches": launches, "mpiexec": mpiexec,
                                                        "open_mpi": openmpi, "threads_per_rank": threads})


def _launch(cmd, env, timeout, prefix):
    """Run one MPI job; ({(n, algorithm): record}, failure text or None)."""
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
    except subprocess.TimeoutExpired as exc:
        out = exc.stdout.decode() if isinstance(exc.stdout, bytes) else (exc.stdout or "")
        return _records(out, prefix), f"mpiexec timed out after {timeout:g} s"
    except OSError as exc:
        return {}, f"cannot start mpiexec: {exc}"
    got = _records(proc.stdout, prefix)
    failure = None
    if proc.returncode != 0:
        tail = " ".join(proc.stderr.strip().splitlines()[-3:])[-400:]
        failure = f"mpiexec exited with status {proc.returncode}: {tail}"
    return got, failure


def _records(text, prefix):
    got = {}
    for line in (text or "").splitlines():
        if line.startswith(prefix):
            rec = json.loads(line[len(prefix):])
            got[(rec["n"], rec["algorithm"])] = rec
    return got


def _speedup(rec, base):
    if rec.get("status") != "ok" or not rec.get("compute_s"):
        return
    key = (rec["mode"], rec["algorithm"])
    b = base.setdefault(key, rec)
    p0, t0, p, t = b["ranks"], b["compute_s"], rec["ranks"], rec["compute_s"]
    rec["baseline_ranks"] = p0
    if rec["mode"] == "weak":
        rec["efficiency"] = t0 / t
        rec["speedup"] = p * rec["efficiency"] / p0
        rec["wall_efficiency"] = b["time_s"] / rec["time_s"] if rec.get("time_s") else None
    else:
        rec["speedup"] = t0 * p0 / t
        rec["efficiency"] = rec["speedup"] / p
        rec["wall_speedup"] = b["time_s"] * p0 / rec["time_s"] if rec.get("time_s") else None


# ---------------------------------------------------------------- views
def summary_lines(data) -> list[str]:
    if (data.get("summary") or {}).get("gpus"):
        return scaling_gpus.summary_lines(data)
    lines = []
    recs = common.ok(data.get("records", []))
    for key in dict.fromkeys((r["mode"], r["algorithm"]) for r in recs):
        mine = sorted((r for r in recs if (r["mode"], r["algorithm"]) == key), key=lambda r: r["ranks"])
        top = mine[-1]
        if top.get("efficiency") is None:
            continue
        share = (f", communication {percent_cell(top['comm_share'])} of compute"
                 if top.get("comm_share") is not None else "")
        lines.append(f"{key[0]} {key[1]}: {top['ranks']} ranks at n = {top['n']:,}: speedup "
                     f"{ratio_cell(top['speedup'])}, efficiency {percent_cell(top['efficiency'])}{share}")
    s = data.get("summary") or {}
    if s.get("threads_per_rank"):
        lines.append(f"{s['threads_per_rank']} CPU thread(s) per rank; launcher {s.get('mpiexec')}"
                     f"{' (Open MPI, --oversubscribe)' if s.get('open_mpi') else ''}")
    return lines


def plots(data, out_dir, ceilings=None, prefix=""):
    from .. import plots as P

    if (data.get("summary") or {}).get("gpus"):
        return scaling_gpus.plots(data, out_dir, ceilings, prefix)
    recs = [r for r in common.ok(data.get("records", [])) if r.get("speedup") is not None]
    if not recs:
        return []
    out_dir = Path(out_dir)
    files = []
    for mode in dict.fromkeys(r["mode"] for r in recs):
        mine = [r for r in recs if r["mode"] == mode]
        groups = {}
        for r in mine:
            groups.setdefault(r["algorithm"], []).append(r)
        ranks = sorted({r["ranks"] for r in mine})
        ns = sorted({r["n"] for r in mine})
        where = f"n = {ns[0]:,}" if mode == "strong" else f"n = {ns[0]:,} .. {ns[-1]:,} (n^3 / P fixed)"
        p0 = min(r.get("baseline_ranks", 1) for r in mine)
        if mode == "strong":
            path = out_dir / f"{prefix}{NAME}-strong-speedup.png"
            P.line_plot([{"label": k, "x": [r["ranks"] for r in v], "y": [r["speedup"] for r in v]}
                         for k, v in groups.items()], path, xlabel="MPI ranks", ylabel="speedup (x, compute time)",
                        title=f"Strong scaling ({where})", ideal=[(p, p) for p in ranks], logx=True, logy=False)
            files.append((path.name, f"Strong scaling: speedup over {p0} rank(s); dotted: ideal"))
        path = out_dir / f"{prefix}{NAME}-{mode}-efficiency.png"
        P.line_plot([{"label": k, "x": [r["ranks"] for r in v], "y": [100 * r["efficiency"] for r in v]}
                     for k, v in groups.items()], path, xlabel="MPI ranks", ylabel="parallel efficiency (%)",
                    title=f"{mode.capitalize()} scaling efficiency ({where})", ideal=[(p, 100.0) for p in ranks],
                    logx=True, logy=False, ylim=(0, 110))
        files.append((path.name, f"{mode.capitalize()} scaling efficiency" +
                      (" = t(P0) / t(P)" if mode == "weak" else " = speedup / ranks")))
        shares = [r for r in mine if r.get("comm_share") is not None]
        if shares:
            path = out_dir / f"{prefix}{NAME}-{mode}-comm.png"
            P.line_plot([{"label": k, "x": [r["ranks"] for r in v], "y": [100 * r["comm_share"] for r in v]}
                         for k, v in groups.items()], path, xlabel="MPI ranks",
                        ylabel="communication (% of compute time)", title=f"Time in MPI calls, {mode} scaling",
                        logx=True, logy=False)
            files.append((path.name, f"Share of the compute stage spent in MPI calls ({mode} scaling)"))
    return files
