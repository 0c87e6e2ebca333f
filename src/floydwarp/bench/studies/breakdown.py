"""``breakdown``: where the time of a file-to-file solve goes (seed 001 section 3.5).

For each backend (default: those ``backend="auto"`` may pick), algorithm (default
its own) and n, the pipeline a user runs with ``floydwarp solve graph.in -o dist.out``:

    generate -> write_graph(file) -> read_graph(file) -> solve -> write_result(file)

each step timed (median of ``repeats``, generation once), and the solve split by its
``Result.timings``: "prepare" (graph checks, weight statistics, dtype choice), the
engine's "start" (the start matrix on the cpu), "compile", "h2d" (building and uploading
the start matrix), "setup", "compute" -- on the gpu split into "phase1", "phase2",
"phase3" with the ``phases=True`` option, the rest of the kernel time shown as "other
kernels" -- "d2h", for MPI "comm" (inside compute) and "gather", then "finish"
(normalizing unreachable entries, negative-cycle check).  "solve overhead" is the
solve's wall time covered by no stage.  Files are written in a temporary folder
(``tmp_dir``) and deleted; formats by extension (``file_formats``, default
``in``/``out``: the NTHU homework binaries).
"""
from __future__ import annotations

import statistics
import tempfile
import time
from pathlib import Path

from ...result import NESTED_STAGES
from ..report import Column, label, rate_cell, seconds_cell
from . import common

NAME = "breakdown"
TITLE = "Where the time goes: files, host-device copies, phases"
WARMUP_N = 64
#: engine stages in the order they happen (others follow in the order reported)
STAGE_ORDER = ("prepare", "start", "compile", "h2d", "setup", "phase1", "phase2", "phase3", "compute", "comm",
               "gather", "d2h", "finish")
#: the stacked bars, bottom up
SEGMENT_ORDER = ("generate", "write graph file", "read graph file", "prepare", "start", "compile", "h2d", "setup",
                 "phase1", "phase2", "phase3", "other kernels", "compute", "gather", "d2h", "finish", "solve overhead",
                 "write result file")
#: stages that are parts of "compute" (not added again)
INSIDE_COMPUTE = NESTED_STAGES


def _step(name):
    return lambda r: (r.get("steps_s") or {}).get(name)


def _stage(name):
    return lambda r: (r.get("stages_s") or {}).get(name)


COLUMNS = [
    Column("backend/algorithm", label, width=-22),
    Column("n", "n", lambda v: f"{v:,}", 7),
    Column("dtype", "dtype", width=-7),
    Column("write graph", _step("write graph"), seconds_cell, 11),
    Column("read graph", _step("read graph"), seconds_cell, 10),
    Column("h2d", _stage("h2d"), seconds_cell, 9),
    Column("compute", _stage("compute"), seconds_cell, 9),
    Column("d2h", _stage("d2h"), seconds_cell, 9),
    Column("solve", _step("solve"), seconds_cell, 9),
    Column("write result", _step("write result"), seconds_cell, 12),
    Column("relax/s", "relaxations_per_s", rate_cell, 9),
]


def columns(records=()):
    return COLUMNS


def run(config, *, command=None, on_record=None) -> dict:
    import floydwarp as fw
    from floydwarp import io as fio

    from ...generate import erdos_renyi
    from ..graphs import GraphCache

    backends = common.backends_for(config, study=NAME)
    wanted = list(config.algorithms or ["auto"])
    common.check_algorithms(backends, wanted)
    gext, rext = (f".{e.lstrip('.')}" for e in config.file_formats)
    env = common.environment(config, command)
    records = []
    emit = common.emitter(records, on_record)
    graphs = GraphCache(config)
    warm = erdos_renyi(WARMUP_N, config.percent, seed=config.seed)
    with tempfile.TemporaryDirectory(prefix="floydwarp-breakdown-", dir=config.tmp_dir) as tmp:
        tmp = Path(tmp)
        for n in sorted(dict.fromkeys(config.sizes)):
            t0 = time.perf_counter()
            graph = graphs.get(n)
            generate_s = graphs.generation_s.get((n, "erdos-renyi"), time.perf_counter() - t0)
            gpath = tmp / f"graph-{n}{gext}"
            write_graph = _timed(lambda: fio.write_graph(graph, gpath), config.repeats)
            for backend in backends:
                for algorithm in common.algorithm_names(backend, wanted):
                    for dtype in config.dtypes:
                        options = dict(config.options)
                        if backend == "gpu":
                            options.setdefault("phases", True)
                        kwargs = dict(backend=backend, algorithm=algorithm, dtype=dtype, threads=config.threads,
                                      block_size=config.block_sizes[0] if config.block_sizes else None, **options)
                        rec = {"n": n, "edges": graph.num_edges, "backend": backend, "algorithm": algorithm,
                               "dtype": dtype, "percent": config.percent, "seed": config.seed,
                               "repeats": config.repeats, "graph_format": gext, "result_format": rext,
                               "options": options or None, "status": "ok", "note": ""}
                        try:
                            fw.solve(warm, **kwargs)                                # compile off the clock
                            rec.update(_pipeline(fw, fio, gpath, tmp / f"result-{n}{rext}", kwargs, config.repeats))
                        except Exception as exc:  # noqa: BLE001 -- recorded; the study goes on
                            rec.update(status="error" if not isinstance(exc, fw.FloydwarpError) else "skipped",
                                       note=f"{type(exc).__name__}: {' '.join(str(exc).split())[:300]}")
                            emit(rec)
                            continue
                        rec["steps_s"] = {"generate": generate_s, "write graph": write_graph,
                                          **rec.pop("pipeline_s")}
                        rec["graph_file_bytes"] = gpath.stat().st_size
                        rec["total_s"] = sum(rec["steps_s"].values())
                        emit(rec)
            gpath.unlink(missing_ok=True)
            graphs.clear()
    return common.payload(NAME, config, env, records)


def _timed(fn, repeats):
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def _pipeline(fw, fio, gpath, rpath, kwargs, repeats) -> dict:
    reads, solves, writes, stages = [], [], [], []
    result = None
    for _ in range(repeats):
        t0 = time.perf_counter()
        graph = fio.read_graph(gpath)
        t1 = time.perf_counter()
        result = fw.solve(graph, **kwargs)
        t2 = time.perf_counter()
        fio.write_result(result, rpath)
        t3 = time.perf_counter()
        reads.append(t1 - t0)
        solves.append(t2 - t1)
        writes.append(t3 - t2)
        stages.append(dict(result.timings))
        size = rpath.stat().st_size
        rpath.unlink(missing_ok=True)
        del graph
    keys = list(dict.fromkeys(k for s in stages for k in s))
    med = {k: statistics.median(s.get(k, 0.0) for s in stages) for k in keys}
    solve = statistics.median(solves)
    covered = sum(v for k, v in med.items() if k not in INSIDE_COMPUTE)
    compute = med.get("compute", 0.0)
    out = {"pipeline_s": {"read graph": statistics.median(reads), "solve": solve,
                          "write result": statistics.median(writes)},
           "stages_s": med, "time_s": solve, "compute_s": compute,
           "solve_overhead_s": max(0.0, solve - covered), "result_file_bytes": size,
           "relaxations_per_s": float(result.n) ** 3 / compute if compute else None}
    return out


# ---------------------------------------------------------------- views
def segments(record, *, files=True, generation=True) -> dict:
    """The stacked-bar pieces of one record, in pipeline order (seconds)."""
    steps = record.get("steps_s") or {}
    stages = dict(record.get("stages_s") or {})
    seg = {}
    if generation:
        seg["generate"] = steps.get("generate")
    if files:
        if generation:
            seg["write graph file"] = steps.get("write graph")
        seg["read graph file"] = steps.get("read graph")
    phases = [k for k in ("phase1", "phase2", "phase3") if k in stages]
    order = [k for k in STAGE_ORDER if k in stages] + [k for k in stages if k not in STAGE_ORDER]
    for k in order:
        if k == "comm":
            continue                                  # inside compute: shown in the scaling study
        if k == "compute" and phases:
            rest = stages["compute"] - sum(stages[p] for p in phases)
            if rest > 0:
                seg["other kernels"] = rest
            continue
        seg[k] = stages[k]
    seg["solve overhead"] = record.get("solve_overhead_s")
    if files:
        seg["write result file"] = steps.get("write result")
    return seg


def summary_lines(data) -> list[str]:
    lines = []
    for r in common.ok(data.get("records", [])):
        seg = segments(r, generation=False)
        total = sum(v for v in seg.values() if v)
        if not total:
            continue
        top = sorted(((v, k) for k, v in seg.items() if v), reverse=True)[:3]
        parts = ", ".join(f"{k} {100 * v / total:.0f}%" for v, k in top)
        lines.append(f"{label(r)} {r['dtype']} n = {r['n']:,}: file to file {seconds_cell(total)}; {parts}")
    return lines


def plots(data, out_dir, ceilings=None, prefix=""):
    from .. import plots as P

    recs = common.ok(data.get("records", []))
    if not recs:
        return []
    out_dir = Path(out_dir)
    many_dt = len({r["dtype"] for r in recs}) > 1
    cats = [f"{label(r)}{' ' + r['dtype'] if many_dt else ''}\nn={r['n']:,}" for r in recs]
    files = []
    for name, kw, title, caption in (
            ("pipeline", dict(files=True, generation=False), "File to file: read, solve stages, write",
             "Where a file-to-file solve spends its time (median of the repeats)"),
            ("share", dict(files=True, generation=False, normalize=True), "File to file: share of each step",
             "The same, as shares of each run's total (total time on top)"),
            ("all", dict(files=True, generation=True), "Every step, graph generation and graph file included",
             "Every step, from generating the graph to writing the result file"),
            ("solve", dict(files=False, generation=False), "Inside solve(): the engine's stages",
             "Inside solve(): host-to-device, phases, device-to-host and the library's own overhead")):
        normalize = kw.pop("normalize", False)
        segs = [segments(r, **kw) for r in recs]
        keys = sorted(dict.fromkeys(k for s in segs for k in s),
                      key=lambda k: SEGMENT_ORDER.index(k) if k in SEGMENT_ORDER else len(SEGMENT_ORDER))
        stacked = {k: [s.get(k) or 0.0 for s in segs] for k in keys}
        path = out_dir / f"{prefix}{NAME}-{name}.png"
        P.stacked_bars(cats, stacked, path, ylabel="share of the time (%)" if normalize else "seconds",
                       title=title, normalize=normalize)
        files.append((path.name, caption))
    return files
