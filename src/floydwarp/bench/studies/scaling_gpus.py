"""``scaling --gpus 1,2,4``: the multi-GPU engine against one GPU, strong and weak, end to end.

What a user sees: for each GPU count P and mode, an Erdos-Renyi graph (``--percent``, weights
1..16, ``--seed``) is made once as host edge arrays; then ``--repeats`` times the user's call,
``fw.Graph.from_edges`` ("graph") and ``fw.solve`` to a host ``Result`` ("whole"): one GPU runs
``backend="gpu"`` (the ``fast`` kernels), P > 1 ``backend="multigpu", gpus=P`` (the first call of
each P, on a small graph, starts its workers and compiles: the records time later calls).

* strong: the same n (``--n``, default 32768) at every P;
* weak: n^3 / P fixed from ``--n`` on one GPU, n_P = n * P^(1/3) rounded to 64.

Speedups are against one GPU in the same mode: strong S = t(1) / t(P), weak E = t(1) / t(P)
and S = P E, both for the whole call and for the compute stage.  ``per_gpu_rate`` is n^3 / P
over the compute time, as a share of one GPU's rate.  ``visible_comm_s`` is the longest time a
GPU's main stream waited for panels (the round timeline's ``main_waits``, ``-O timeline=true``,
which every multi-GPU record of this study asks for, from one call more than the timed ones).
The largest P's strong run keeps its whole timeline (every span of every GPU), which the plots
draw as a Gantt chart.
"""
from __future__ import annotations

import statistics
import time
from pathlib import Path

import numpy as np

from ...errors import FloydwarpError
from ..report import Column, percent_cell, ratio_cell, seconds_cell
from . import common

DEFAULT_N = 32768
DEFAULT_PERCENT = 5.0
UNIT = 64

COLUMNS = [
    Column("mode", "mode", width=-6),
    Column("gpus", "gpus", width=4),
    Column("n", "n", lambda v: f"{v:,}", 7),
    Column("grid", "grid", lambda v: "x".join(map(str, v)) if v else "-", 5),
    Column("whole", "whole_s", seconds_cell, 9),
    Column("compute", "compute_s", seconds_cell, 9),
    Column("speedup", "speedup", ratio_cell, 8),
    Column("efficiency", "efficiency", percent_cell, 10),
    Column("compute x", "compute_speedup", ratio_cell, 9),
    Column("per GPU", "per_gpu_share", percent_cell, 8),
    Column("waits", "visible_comm_s", seconds_cell, 9),
]


def weak_n(n1: int, gpus: int) -> int:
    return max(UNIT, int(round(n1 * gpus ** (1 / 3) / UNIT)) * UNIT)


def solver(gpus: int) -> dict:
    """``solve()`` arguments for P GPUs: one GPU is ``backend="gpu"``, more the multigpu backend."""
    if gpus == 1:
        return {"backend": "gpu"}
    return {"backend": "multigpu", "gpus": gpus}


def _edges(n, percent, seed):
    from ... import generate

    g = generate.erdos_renyi(n, percent, seed=seed)
    return tuple(np.ascontiguousarray(a) for a in g.edges())


def measure(n, gpus, dtype, edges, repeats, options) -> dict:
    """``repeats`` user calls from host edge arrays: medians, every stage, the last metadata."""
    import floydwarp as fw

    how = solver(gpus)
    if how["backend"] == "multigpu":
        how.update(options)
    # the round timeline comes from one more call, off the clock: reading its events back
    # took ~50 ms of a 0.74 s call (n = 32768, 4 GPUs), which no user without it pays
    timeline = how.pop("timeline", False)
    walls, builds, stages, meta = [], [], [], {}
    for _ in range(repeats):
        t0 = time.perf_counter()
        graph = fw.Graph.from_edges(*edges, n=n)
        t1 = time.perf_counter()
        result = fw.solve(graph, dtype=dtype, **how)
        walls.append(time.perf_counter() - t1)
        builds.append(t1 - t0)
        stages.append(dict(result.timings))
        meta = dict(result.metadata)
        del graph, result                    # the next call's result must not meet this one's in memory
    if timeline:
        meta["timeline"] = fw.solve(fw.Graph.from_edges(*edges, n=n), dtype=dtype, timeline=timeline,
                                    **how).metadata.get("timeline")
    keys = list(dict.fromkeys(k for s in stages for k in s))
    med = {k: statistics.median(s.get(k, 0.0) for s in stages) for k in keys}
    return {"whole_s": statistics.median(walls), "all_s": walls, "graph_s": statistics.median(builds),
            "stages_s": med, "compute_s": med.get("compute"), "metadata": meta}


def _timeline_facts(rec, keep_spans: bool) -> None:
    """The record's timeline summary (per GPU) and visible waits; the spans only if kept."""
    timeline = rec["metadata"].pop("timeline", None)
    if not timeline:
        return
    summary = timeline["summary"]
    rec["timeline_summary"] = summary
    rec["visible_comm_s"] = max(s["main_waits"]["total"] for s in summary) / 1000.0
    rec["nccl_s"] = max(s["nccl"] for s in summary) / 1000.0
    if keep_spans:
        rec["timeline"] = {"columns": timeline["columns"], "ranks": timeline["ranks"]}


def _ratios(rec, base) -> None:
    """Speedups and efficiencies against one GPU in the same mode (``base``)."""
    p = rec["gpus"]
    whole, compute = base["whole_s"] / rec["whole_s"], base["compute_s"] / rec["compute_s"]
    if rec["mode"] == "weak":
        rec["efficiency"], rec["speedup"] = whole, p * whole
        rec["compute_efficiency"], rec["compute_speedup"] = compute, p * compute
    else:
        rec["speedup"], rec["efficiency"] = whole, whole / p
        rec["compute_speedup"], rec["compute_efficiency"] = compute, compute / p
    one = base["n"] ** 3 / base["compute_s"]
    rec["per_gpu_rate"] = rec["n"] ** 3 / rec["compute_s"] / p
    rec["per_gpu_share"] = rec["per_gpu_rate"] / one


def run(config, *, command=None, on_record=None) -> dict:
    gpus = sorted(dict.fromkeys(int(p) for p in config.gpus))
    if gpus[0] != 1:
        raise FloydwarpError("the multi-GPU scaling study measures against one GPU: --gpus must include 1")
    if len(config.dtypes) != 1:
        raise FloydwarpError("the scaling study runs one --dtype at a time")
    dtype = config.dtypes[0]
    n1 = int(config.n or DEFAULT_N)
    options = dict({"timeline": True}, **(config.options or {}))
    env = common.environment(config, command)
    records = []
    emit = common.emitter(records, on_record)
    import floydwarp as fw

    for p in gpus:                       # workers started and kernels compiled, off the records
        fw.solve(fw.generate.erdos_renyi(300, 5, seed=1), dtype=dtype, **solver(p))
    for mode in config.modes:
        base = None
        for p in gpus:
            n = n1 if mode == "strong" else weak_n(n1, p)
            edges = _edges(n, config.percent, config.seed)
            rec = {"mode": mode, "gpus": p, "n": n, "dtype": dtype, "percent": config.percent,
                   "edges": int(edges[0].size), "repeats": config.repeats, **solver(p),
                   **measure(n, p, dtype, edges, config.repeats, options)}
            del edges
            rec["grid"] = rec["metadata"].get("grid")
            rec["status"] = "ok"
            _timeline_facts(rec, keep_spans=mode == "strong" and p == gpus[-1])
            base = base or rec
            _ratios(rec, base)
            emit(rec)
    return common.payload("scaling", config, env, records, {"gpus": gpus, "n": n1, "options": options})


# ---------------------------------------------------------------- views
def summary_lines(data) -> list[str]:
    lines = []
    for r in common.ok(data.get("records", [])):
        if r["gpus"] == 1:
            continue
        lines.append(f"{r['mode']} {r['gpus']} GPUs at n = {r['n']:,}: whole call {ratio_cell(r['speedup'])} "
                     f"one GPU ({percent_cell(r['efficiency'])}), compute {ratio_cell(r['compute_speedup'])}, "
                     f"per-GPU rate {percent_cell(r['per_gpu_share'])} of one GPU's"
                     + (f", main streams waited {seconds_cell(r['visible_comm_s'])}"
                        if r.get("visible_comm_s") is not None else ""))
    return lines


#: colours of the Gantt chart's operations
OP_COLORS = {"next": "tab:blue", "rest": "tab:cyan", "all": "tab:cyan", "band": "tab:olive",
             "close": "tab:red", "panels": "tab:orange", "bcast_pivot": "tab:purple", "bcast_panels": "tab:pink"}


def timeline_lanes(timeline) -> list:
    """The Gantt chart's lanes: each GPU's main and side stream, its spans in milliseconds."""
    cols = timeline["columns"]
    lanes = []
    for gpu, spans in enumerate(timeline["ranks"]):
        rows = [dict(zip(cols, row)) for row in spans]
        for stream in ("main", "side"):
            lanes.append((f"GPU {gpu} {stream}", [(r["start_ms"], r["end_ms"] - r["start_ms"], r["op"])
                                                  for r in rows if r["stream"] == stream]))
    return lanes


def plots(data, out_dir, ceilings=None, prefix=""):
    from .. import plots as P

    recs = [r for r in common.ok(data.get("records", [])) if r.get("speedup") is not None]
    out_dir = Path(out_dir)
    files = []
    for mode in dict.fromkeys(r["mode"] for r in recs):
        mine = [r for r in recs if r["mode"] == mode]
        xs = [r["gpus"] for r in mine]
        path = out_dir / f"{prefix}scaling-gpus-{mode}.png"
        P.line_plot([{"label": "whole call", "x": xs, "y": [r["speedup"] for r in mine]},
                     {"label": "compute", "x": xs, "y": [r["compute_speedup"] for r in mine]}], path,
                    xlabel="GPUs", ylabel="speedup over one GPU (x)", ideal=[(p, p) for p in xs],
                    title=f"{mode.capitalize()} scaling, {mine[0]['dtype']}, n = "
                          + (f"{mine[0]['n']:,}" if mode == "strong" else f"{mine[0]['n']:,} .. {mine[-1]['n']:,}"),
                    logx=True, logy=False)
        files.append((path.name, f"{mode.capitalize()} scaling over GPUs: the whole call and the compute stage"))
    for r in recs:
        if r.get("timeline"):
            path = out_dir / f"{prefix}scaling-gpus-timeline-{r['gpus']}.png"
            P.gantt(timeline_lanes(r["timeline"]), path, xlabel="time since the rounds began (ms)",
                    title=f"Rounds on {r['gpus']} GPUs, n = {r['n']:,} {r['dtype']}", colors=OP_COLORS)
            files.append((path.name, f"Round timeline on {r['gpus']} GPUs: each GPU's main and side stream"))
    return files
