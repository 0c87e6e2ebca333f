"""``threads``: CPU speedup and efficiency vs threads (seed 002 figures 6-7).

The cpu algorithms (default ``blocked`` and ``rows``) at one n (default 2048), with
``threads`` = each of ``thread_counts`` (default 1..the cores Numba may use).
Speedup = compute time at the fewest threads measured x that count / compute time at
T threads (so T = 1 gives the classic t1 / tT), efficiency = speedup / T.
"""
from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from ...errors import FloydwarpError
from ..report import Column, label, percent_cell, rate_cell, ratio_cell, seconds_cell
from . import common

NAME = "threads"
TITLE = "CPU speedup and efficiency vs threads"
DEFAULT_N = 2048
DEFAULT_ALGORITHMS = ("blocked", "rows")

COLUMNS = [
    Column("backend/algorithm", label, width=-18),
    Column("n", "n", lambda v: f"{v:,}", 7),
    Column("dtype", "dtype", width=-7),
    Column("threads", "threads", width=7),
    Column("time", "time_s", seconds_cell, 9),
    Column("compute", "compute_s", seconds_cell, 9),
    Column("relax/s", "relaxations_per_s", rate_cell, 9),
    Column("speedup", "speedup", ratio_cell, 8),
    Column("efficiency", "efficiency", percent_cell, 10),
]


def columns(records=()):
    return COLUMNS


def thread_counts(config) -> list[int]:
    import numba

    limit = int(numba.config.NUMBA_NUM_THREADS)
    counts = list(config.thread_counts or range(1, limit + 1))
    too_many = [t for t in counts if t > limit or t < 1]
    if too_many:
        raise FloydwarpError(f"threads {', '.join(map(str, too_many))} out of range: Numba runs 1..{limit} "
                             "threads here (set NUMBA_NUM_THREADS before starting for more)")
    return sorted(dict.fromkeys(counts))


def run(config, *, command=None, on_record=None) -> dict:
    from ..graphs import GraphCache

    backends = common.backends_for(config, wanted=("cpu",), default="cpu", study=NAME)
    wanted = list(config.algorithms or DEFAULT_ALGORITHMS)
    common.check_algorithms(backends, wanted)
    counts = thread_counts(config)
    n = int(config.n or DEFAULT_N)
    env = common.environment(config, command)
    records = []
    emit = common.emitter(records, on_record)
    graph = GraphCache(config).get(n)
    block = config.block_sizes[0] if config.block_sizes else None
    for algorithm in common.algorithm_names("cpu", wanted):
        for dtype in config.dtypes:
            base = None
            for t in counts:
                rec = common.measure("cpu", algorithm, dtype, n, graph, replace(config, threads=t), block_size=block)
                if rec["status"] == "ok":
                    if base is None:
                        base = rec
                    rec["baseline_threads"] = base["threads"]
                    rec["speedup"] = (base["compute_s"] * base["threads"] / rec["compute_s"]
                                      if rec["compute_s"] else None)
                    rec["efficiency"] = rec["speedup"] / t if rec["speedup"] else None
                    rec["wall_speedup"] = base["time_s"] * base["threads"] / rec["time_s"] if rec["time_s"] else None
                emit(rec)
    return common.payload(NAME, config, env, records)


# ---------------------------------------------------------------- views
def summary_lines(data) -> list[str]:
    lines = []
    recs = common.ok(data.get("records", []))
    for key in dict.fromkeys((r["algorithm"], r["dtype"]) for r in recs):
        mine = sorted((r for r in recs if (r["algorithm"], r["dtype"]) == key), key=lambda r: r["threads"])
        top = mine[-1]
        if top.get("speedup"):
            lines.append(f"cpu/{key[0]} {key[1]}, n = {top['n']:,}: {ratio_cell(top['speedup'])} on {top['threads']} "
                         f"threads ({percent_cell(top['efficiency'])} efficiency)")
    return lines


def _groups(recs):
    many = len({r["dtype"] for r in recs}) > 1
    groups = {}
    for r in recs:
        groups.setdefault(common.series_label(r, many), []).append(r)
    return groups


def plots(data, out_dir, ceilings=None, prefix=""):
    from .. import plots as P

    recs = [r for r in common.ok(data.get("records", [])) if r.get("speedup")]
    if not recs:
        return []
    out_dir = Path(out_dir)
    groups = _groups(recs)
    counts = sorted({r["threads"] for r in recs})
    where = f"n = {', '.join(f'{n:,}' for n in sorted({r['n'] for r in recs}))}"
    files = []
    path = out_dir / f"{prefix}{NAME}-speedup.png"
    P.line_plot([{"label": k, "x": [r["threads"] for r in v], "y": [r["speedup"] for r in v]}
                 for k, v in groups.items()], path, xlabel="threads", ylabel="speedup (x, compute time)",
                title=f"CPU speedup vs threads ({where})", ideal=[(t, t) for t in counts], logx=False, logy=False)
    files.append((path.name, "Speedup over one thread (compute time); dotted: ideal"))
    path = out_dir / f"{prefix}{NAME}-efficiency.png"
    P.line_plot([{"label": k, "x": [r["threads"] for r in v], "y": [100 * r["efficiency"] for r in v]}
                 for k, v in groups.items()], path, xlabel="threads", ylabel="parallel efficiency (%)",
                title=f"CPU efficiency vs threads ({where})", ideal=[(t, 100.0) for t in counts], logx=False,
                logy=False, ylim=(0, 110))
    files.append((path.name, "Parallel efficiency = speedup / threads"))
    return files
