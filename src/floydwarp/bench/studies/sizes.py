"""``sizes``: time vs n for every backend and algorithm, SciPy side by side; the CPU/GPU crossover.

Seed 000 figure 3, seed 002 tables 2, 4, 5.  Every (backend, algorithm, dtype) runs
at each n (one Erdos-Renyi graph per n, shared by all cases; see runner.py for the
timing rules).  Slow algorithms stop by themselves: a case whose single solve is
predicted (its time at the previous n scaled by n^3) to take longer than
``max_seconds`` is skipped with a note, and so are the larger sizes after it; SciPy
also stops above ``scipy_max_n``.

Summary: per dtype, the best cpu and gpu wall times (copies included) at each n, and
the crossover n from which the GPU is faster for every larger n measured
(interpolated in log-log between the two sizes around it).
"""
from __future__ import annotations

import math
from pathlib import Path

from ..report import Column, label, ratio_cell, rate_cell, seconds_cell
from . import ceilings as C
from . import common

NAME = "sizes"
TITLE = "Time vs n per backend and algorithm, SciPy side by side, CPU/GPU crossover"

COLUMNS = [
    Column("n", "n", lambda v: f"{v:,}", 7),
    Column("backend/algorithm", label, width=-26),
    Column("dtype", "dtype", width=-7),
    Column("time", "time_s", seconds_cell, 9),
    Column("compute", "compute_s", seconds_cell, 9),
    Column("relax/s", "relaxations_per_s", rate_cell, 9),
    Column("vs SciPy", "speedup_vs_scipy", ratio_cell, 8),
    Column("GB/s", "gb_per_s", lambda v: f"{v:.1f}", 7),
]


def columns(records=()):
    return COLUMNS


def run(config, *, command=None, on_record=None) -> dict:
    from ..graphs import GraphCache
    from ..runner import time_scipy

    backends = common.backends_for(config, study=NAME)
    wanted = list(config.algorithms or ["all"])
    common.check_algorithms(backends, wanted)
    pairs = [(b, a) for b in backends for a in common.algorithm_names(b, wanted)]
    dtypes = list(config.dtypes)
    env = common.environment(config, command)
    records = []
    emit = common.emitter(records, on_record)
    graphs = GraphCache(config)
    last: dict[tuple, dict] = {}
    stopped: dict[tuple, str] = {}
    for n in sorted(dict.fromkeys(config.sizes)):
        scipy_record, scipy_dist = None, None
        if config.scipy:
            key = ("scipy", "floyd_warshall", "float64")
            pred = common.predicted_seconds(last.get(key), n)
            if key in stopped:
                emit(common.skipped(n, config, "scipy", "floyd_warshall", "float64", stopped[key]))
            elif pred is not None and pred > config.max_seconds:
                stopped[key] = _cap_note(pred, last[key], config.max_seconds)
                emit(common.skipped(n, config, "scipy", "floyd_warshall", "float64", stopped[key]))
            else:
                scipy_record, scipy_dist = time_scipy(graphs.get(n), config)
                emit(scipy_record)
                if scipy_record["status"] == "ok":
                    last[key] = scipy_record
        for backend, algorithm in pairs:
            for dtype in dtypes:
                key = (backend, algorithm, dtype)
                pred = common.predicted_seconds(last.get(key), n)
                if key in stopped:
                    emit(common.skipped(n, config, backend, algorithm, dtype, stopped[key]))
                    continue
                if pred is not None and pred > config.max_seconds:
                    stopped[key] = _cap_note(pred, last[key], config.max_seconds)
                    emit(common.skipped(n, config, backend, algorithm, dtype, stopped[key]))
                    continue
                source = graphs.source(backend)
                host = source == "erdos-renyi"
                rec = common.measure(backend, algorithm, dtype, n, graphs.get(n, backend), config,
                                     scipy_record=scipy_record if host else None,
                                     scipy_dist=scipy_dist if host else None, graph_source=source)
                C.add_fractions(rec, config.ceilings)
                emit(rec)
                if rec["status"] == "ok":
                    last[key] = rec
        graphs.clear()
    summary = {"crossover": crossover(records)}
    return common.payload(NAME, config, env, records, summary)


def _cap_note(pred, prev, cap):
    return (f"predicted {pred:.3g} s per solve (from {prev['time_s']:.3g} s at n = {prev['n']:,}, x n^3), "
            f"above --max-seconds {cap:g}")


# ---------------------------------------------------------------- crossover
def best_times(records, backend, dtype) -> dict[int, tuple[float, str]]:
    """n -> (fastest wall time, algorithm) among a backend's ok records of one dtype."""
    best = {}
    for r in common.ok(records):
        if r.get("backend") == backend and r.get("dtype") == dtype and common.finite(r.get("time_s")):
            if r["n"] not in best or r["time_s"] < best[r["n"]][0]:
                best[r["n"]] = (r["time_s"], r["algorithm"])
    return best


def crossover(records) -> list[dict]:
    """Per dtype with both cpu and gpu records: where the GPU's best wall time beats the CPU's."""
    out = []
    dtypes = list(dict.fromkeys(r.get("dtype") for r in common.ok(records) if r.get("backend") == "gpu"))
    for dtype in dtypes:
        cpu, gpu = best_times(records, "cpu", dtype), best_times(records, "gpu", dtype)
        ns = sorted(set(cpu) & set(gpu))
        if not ns:
            continue
        faster = [gpu[n][0] < cpu[n][0] for n in ns]
        first = next((i for i in range(len(ns)) if all(faster[i:])), None)
        entry = {"dtype": dtype, "sizes": ns, "cpu_best": {n: list(cpu[n]) for n in ns},
                 "gpu_best": {n: list(gpu[n]) for n in ns}, "measure": "wall time of solve(), copies included"}
        if first is None:
            entry.update(crossover_n=None, text=f"the CPU is faster at every n measured (up to {ns[-1]:,})")
        elif first == 0:
            entry.update(crossover_n=None, upper_bound=ns[0],
                         text=f"the GPU is faster at every n measured (from {ns[0]:,})")
        else:
            lo, hi = ns[first - 1], ns[first]
            r_lo = math.log(gpu[lo][0] / cpu[lo][0])
            r_hi = math.log(gpu[hi][0] / cpu[hi][0])
            t = r_lo / (r_lo - r_hi) if r_lo != r_hi else 0.5
            x = math.exp(math.log(lo) + t * (math.log(hi) - math.log(lo)))
            entry.update(crossover_n=int(round(x)), bounds=[lo, hi],
                         text=f"the GPU is faster from n ~ {int(round(x)):,} (between {lo:,} and {hi:,})")
        out.append(entry)
    return out


# ---------------------------------------------------------------- views
def summary_lines(data) -> list[str]:
    lines = []
    for c in (data.get("summary") or {}).get("crossover") or crossover(data.get("records", [])):
        lines.append(f"CPU/GPU crossover ({c['dtype']}): {c['text']}")
    recs = [r for r in common.ok(data.get("records", [])) if r.get("backend") != "scipy"]
    for dtype in dict.fromkeys(r.get("dtype") for r in recs):
        mine = [r for r in recs if r.get("dtype") == dtype]
        n = max(r["n"] for r in mine)
        at_n = [r for r in mine if r["n"] == n]
        wall = min(at_n, key=lambda r: r.get("time_s") or float("inf"))
        rate = max(at_n, key=lambda r: r.get("relaxations_per_s") or 0)
        lines.append(f"largest n measured ({n:,}, {dtype}): fastest solve {label(wall)} "
                     f"{seconds_cell(wall['time_s'])}; highest rate {label(rate)} "
                     f"{rate_cell(rate['relaxations_per_s'])} relax/s (n^3 / compute)")
        lines += _algorithm_ratios(at_n, rate, dtype)
        lines += _scipy_ratio(mine, data.get("records", []), dtype)
    return lines


def _algorithm_ratios(at_n, best, dtype) -> list[str]:
    """The highest-rate algorithm against the others of its backend, same graph and n."""
    others = [r for r in at_n if r.get("backend") == best.get("backend") and r is not best
              and common.finite(r.get("compute_s"))]
    return [f"at n = {best['n']:,} ({dtype}): {label(best)} {ratio_cell(r['compute_s'] / best['compute_s'])} "
            f"the rate of {label(r)} (compute)" for r in others]


def _scipy_ratio(mine, records, dtype) -> list[str]:
    """SciPy's wall time over the fastest solve at the largest n SciPy ran.  Records on a
    device-built graph had SciPy timed on the host graph of the same n and density:
    another instance, the same O(n^3) work."""
    scipy = {r["n"]: r["time_s"] for r in common.ok(records) if r.get("backend") == "scipy"}
    timed = [r for r in mine if r["n"] in scipy and common.finite(r.get("time_s"))]
    if not timed:
        return []
    n = max(r["n"] for r in timed)
    top = min((r for r in timed if r["n"] == n), key=lambda r: r["time_s"])
    speedup = top.get("speedup_vs_scipy") or scipy[n] / top["time_s"]
    where = "" if top.get("speedup_vs_scipy") else ", SciPy on the host graph of that n and density"
    return [f"vs SciPy at n = {n:,} ({dtype}): {label(top)} {ratio_cell(speedup)} faster (wall time{where})"]


def _series(records, key, with_dtype):
    groups = {}
    for r in common.ok(records):
        if not common.finite(r.get(key)):
            continue
        name = common.series_label(r, with_dtype and r.get("backend") != "scipy")
        if r.get("backend") == "scipy":
            name = "SciPy floyd_warshall (float64)"
        groups.setdefault(name, []).append((r["n"], r[key]))
    return [{"label": k, "x": [p[0] for p in v], "y": [p[1] for p in v],
             **({"color": "black", "style": "--"} if k.startswith("SciPy") else
                {"style": BACKEND_STYLE.get(k.split("/")[0], "-")})} for k, v in groups.items()]


#: line style per backend: the GPU solid, the CPU dashed, MPI dash-dot (SciPy: black dashed)
BACKEND_STYLE = {"gpu": "-", "cpu": "--", "mpi": "-.", "reference": ":"}


def ceiling_lines(records, ceilings, kind="addmin"):
    lines = []
    for backend in dict.fromkeys(r.get("backend") for r in common.ok(records)):
        if backend == "scipy":
            continue
        for dtype in dict.fromkeys(r.get("dtype") for r in common.ok(records) if r.get("backend") == backend):
            c = C.lookup(ceilings, backend, dtype)
            if c and c.get(kind):
                name = "gpu" if backend == "gpu" else "cpu"
                text = (f"{name} add-min ceiling ({c['key']})" if kind == "addmin"
                        else f"{name} copy ceiling")
                if (c[kind], text) not in lines:
                    lines.append((c[kind], text))
    return lines


def plots(data, out_dir, ceilings=None, prefix=""):
    from .. import plots as P

    records = data.get("records", [])
    if not common.ok(records):
        return []
    out_dir = Path(out_dir)
    stem = data.get("study") or NAME
    with_dtype = len({r.get("dtype") for r in common.ok(records) if r.get("backend") != "scipy"}) > 1
    files = []
    vlines = [(c["crossover_n"], f"CPU/GPU crossover ({c['dtype']}) n ~ {c['crossover_n']:,}")
              for c in (data.get("summary") or {}).get("crossover") or [] if c.get("crossover_n")]
    series = _series(records, "time_s", with_dtype)
    # the time the add-min ceiling allows: n^3 / rate (a lower bound for any kernel)
    ns = sorted({r["n"] for r in common.ok(records)})
    floor = min((y for s in series for y in s["y"] if y and y > 0), default=0) / 10
    for rate, text in ceiling_lines(records, ceilings):
        pts = [(n, n ** 3 / rate) for n in ns if n ** 3 / rate >= floor]       # not far below the data
        if pts:
            series.append({"label": f"n^3 / {text}", "x": [p[0] for p in pts], "y": [p[1] for p in pts],
                           "style": ":", "color": "0.55", "marker": ""})
    path = out_dir / f"{prefix}{stem}-time.png"
    P.line_plot(series, path, xlabel="n (vertices)", ylabel="wall time per solve (s)",
                title="Floyd-Warshall time vs n (log-log)", vlines=vlines,
                note=f"{_where(data)}; median of {data.get('config', {}).get('repeats', '?')} runs")
    files.append((path.name, "Time vs n (log-log): every backend and algorithm, SciPy dashed; dotted: n^3 at the "
                             "add-min ceiling"))
    path = out_dir / f"{prefix}{stem}-rate.png"
    P.line_plot(_series(records, "relaxations_per_s", with_dtype), path, xlabel="n (vertices)",
                ylabel="relaxations / s  (n^3 / compute time)", title="Floyd-Warshall rate vs n",
                hlines=ceiling_lines(records, ceilings), note=_where(data))
    files.append((path.name, "Relaxations per second vs n; dashed: add-min ceilings"))
    speed = [s for s in _series(records, "speedup_vs_scipy", with_dtype)]
    if speed:
        path = out_dir / f"{prefix}{stem}-vs-scipy.png"
        P.line_plot(speed, path, xlabel="n (vertices)", ylabel="speedup over SciPy (x, wall time)",
                    title="Speedup over scipy.sparse.csgraph.floyd_warshall", hlines=[(1.0, "SciPy")],
                    note=_where(data))
        files.append((path.name, "Speedup over SciPy (its time / ours, same graph)"))
    return files


def _where(data):
    env = data.get("environment") or {}
    gpus = ", ".join(g.get("name", "?") for g in env.get("gpus") or [])
    return f"{env.get('cpu', '?')}" + (f" + {gpus}" if gpus else "")
