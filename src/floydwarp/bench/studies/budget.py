"""``budget``: the largest n solved within a time budget, and how far memory goes.

Seed 004 figures 5-12.  For each backend/algorithm/dtype and each budget (default
2 s and 60 s), the largest n whose ``solve()`` wall time (one run on a graph already
in memory; compilation excluded: a warm-up solve at n = 512 compiles most kernels, and
the "compile" stage of a solve that needed more is subtracted) fits the budget:

1. doubling from ``budget_start_n`` (``--n``, default 256) until a solve takes longer
   than the budget -- a size whose time, predicted from the largest size within the
   budget (x n^3), exceeds twice the budget is not run: the doubling jumps to the
   predicted size instead;
2. bisection between the last size within and the first size over the budget, each
   step at the size the n^3 model predicts for the budget (kept inside the middle
   half of the bracket), until the bracket is within 2 % (and a multiple of 8).

Every measured solve is a record; times measured for one budget are reused by the
next.  Memory: the largest n whose matrix plus workspace fits in the available host
RAM (and free GPU memory for the gpu) is computed, not run, from the dtype itemsize
and a per-backend model of the buffers (reported with the formula), and caps the
doubling.
"""
from __future__ import annotations

import math
import time
from pathlib import Path

import numpy as np

from ..report import Column, label, rate_cell, seconds_cell
from . import common

NAME = "budget"
TITLE = "Largest n within a time budget, and how far memory goes"
#: several tiles of every tile size (<= 128), so every phase kernel compiles in the warm-up
WARMUP_N = 512
REL_TOL = 0.02
ALIGN = 8
MAX_STEPS = 40

COLUMNS = [
    Column("backend/algorithm", label, width=-20),
    Column("dtype", "dtype", width=-7),
    Column("budget", "budget_s", lambda v: f"{v:g} s", 7),
    Column("phase", "phase", width=-9),
    Column("n", "n", lambda v: f"{v:,}", 8),
    Column("time", "time_s", seconds_cell, 9),
    Column("within", "within", lambda v: "yes" if v else "no", 6),
    Column("relax/s", "relaxations_per_s", rate_cell, 9),
]


def columns(records=()):
    return COLUMNS


# ---------------------------------------------------------------- memory
def bytes_per_entry(backend, dtype, pool, *, percent=25.0, graph_on="host", predecessors=False,
                    real=False) -> tuple[float, str]:
    """Bytes per matrix entry (times n^2) a solve needs in ``pool`` ("host" or "gpu"), and the model."""
    isz = np.dtype(dtype).itemsize
    pred = 4 if predecessors else 0
    edges = 24.0 * percent / 100.0                     # int64 src, dst, weight per edge
    if pool == "gpu":
        if graph_on == "device":
            from ..graphs import device_weight_dtype

            weights = device_weight_dtype(real=real)
            return weights.itemsize + 2 * isz + pred, (f"{weights.name} input + padded matrix + unpadded result "
                                                       "(+ predecessors)")
        return isz + pred + edges, "padded matrix (+ predecessors) + uploaded edge list"
    if backend == "gpu":
        if graph_on == "device":
            return isz, "the result copied back"
        return isz + edges, "edge list + the result copied back"
    return 2 * (isz + pred) + 1 + edges, "edge list + start matrix + tiled working copy (+ predecessors) + mask"


def memory_limits(backend, dtype, env, config) -> list[dict]:
    pools = [("host", "host RAM (available)", (env.get("memory") or {}).get("available_bytes"))]
    if backend == "gpu":
        free = [g.get("free_bytes") for g in env.get("gpu_memory") or []]
        pools.append(("gpu", "GPU memory (free)", free[0] if free else None))
    out = []
    for pool, text, available in pools:
        per, model = bytes_per_entry(backend, dtype, pool, percent=config.percent, graph_on=config.graph_on,
                                     real=config.real_weights)
        max_n = int(math.isqrt(int(available / per))) if available else None
        out.append({"backend": backend, "dtype": dtype, "pool": text, "available_bytes": available,
                    "bytes_per_entry": per, "model": model, "max_n": max_n,
                    "matrix_only_max_n":
                        int(math.isqrt(int(available / np.dtype(dtype).itemsize))) if available else None})
    return out


# ---------------------------------------------------------------- the search
class Search:
    """Largest n within a budget, by doubling then model-guided bisection (see the module)."""

    def __init__(self, measure, start_n, cap):
        self.measure = measure             # n -> seconds (records itself)
        self.start_n = max(ALIGN, int(start_n))
        self.cap = cap
        self.times: dict[int, float] = {}

    def time(self, n, budget, phase):
        if n not in self.times:
            self.times[n] = self.measure(n, budget, phase)
        return self.times[n]

    def bracket(self, budget):
        within = [n for n, t in self.times.items() if t is not None and t <= budget]
        lo = max(within) if within else None
        over = [n for n, t in self.times.items() if (t is None or t > budget) and (lo is None or n > lo)]
        return lo, (min(over) if over else None)

    def guess(self, lo, budget):
        return lo * (budget / max(self.times[lo], 1e-9)) ** (1 / 3)

    def run(self, budget) -> dict:
        steps = 0
        lo, hi = self.bracket(budget)
        limited = None
        n = self.start_n if lo is None else 2 * lo
        while hi is None and steps < MAX_STEPS:                    # 1. doubling
            if lo is not None and self.times[lo] * (n / lo) ** 3 > 2 * budget:
                n = max(lo + ALIGN, common.round_to(self.guess(lo, budget) * 1.05, ALIGN))
            if self.cap is not None and n > self.cap:
                n = self.cap
                if lo is not None and n <= lo:
                    limited = "memory"
                    break
            t = self.time(n, budget, "doubling")
            steps += 1
            lo, hi = self.bracket(budget)
            if self.cap is not None and n >= self.cap and (t is not None and t <= budget):
                limited = "memory"
                break
            n = 2 * n
        while lo is None and hi is not None and hi > ALIGN and steps < MAX_STEPS:   # too slow from the start
            n = max(ALIGN, common.round_to(hi / 2, ALIGN))
            if n >= hi:
                break
            self.time(n, budget, "halving")
            steps += 1
            lo, hi = self.bracket(budget)
        while lo is not None and hi is not None and hi - lo > max(ALIGN, REL_TOL * lo) and steps < MAX_STEPS:
            quarter = (hi - lo) / 4                                  # 2. bisection, model-guided
            n = min(max(self.guess(lo, budget), lo + quarter), hi - quarter)
            n = common.round_to(n, ALIGN)
            if not lo < n < hi:
                break
            self.time(n, budget, "bisection")
            steps += 1
            lo, hi = self.bracket(budget)
        return {"budget_s": budget, "n": lo, "time_s": self.times.get(lo), "next_n": hi,
                "next_time_s": self.times.get(hi), "limited_by": limited or ("budget" if lo else "too small"),
                "solves": len(self.times)}


def run(config, *, command=None, on_record=None) -> dict:
    import floydwarp as fw

    from ..graphs import GraphCache
    from ..runner import synchronize

    backends = common.backends_for(config, study=NAME)
    wanted = list(config.algorithms or ["auto"])
    common.check_algorithms(backends, wanted)
    env = common.environment(config, command)
    records, limits, memory = [], [], []
    emit = common.emitter(records, on_record)
    graphs = GraphCache(config)
    for backend in backends:
        for algorithm in common.algorithm_names(backend, wanted):
            for dtype in config.dtypes:
                mem = memory_limits(backend, dtype, env, config)
                memory += mem
                caps = [m["max_n"] for m in mem if m["max_n"]]
                cap = min(caps) if caps else None
                options = dict(config.options)
                kwargs = dict(backend=backend, algorithm=algorithm, dtype=dtype, threads=config.threads,
                              block_size=config.block_sizes[0] if config.block_sizes else None, **options)
                try:
                    fw.solve(graphs.get(WARMUP_N, backend), **kwargs)       # compile off the clock
                except Exception as exc:  # noqa: BLE001 -- one skipped record, then the next case
                    emit(common.skipped(WARMUP_N, config, backend, algorithm, dtype,
                                        f"{type(exc).__name__}: {' '.join(str(exc).split())[:300]}"))
                    continue

                def measure(n, budget, phase, backend=backend, algorithm=algorithm, dtype=dtype, kwargs=kwargs):
                    graph = graphs.get(n, backend)
                    rec = {"n": n, "backend": backend, "algorithm": algorithm, "dtype": dtype, "budget_s": budget,
                           "phase": phase, "seed": config.seed, "percent": config.percent,
                           "graph": graphs.source(backend),
                           "graph_s": graphs.generation_s.get((n, graphs.source(backend)))}
                    try:
                        t0 = time.perf_counter()
                        result = fw.solve(graph, **kwargs)
                        synchronize(result)
                        # kernels a size needs for the first time compile inside its solve
                        # (seconds each on a machine without CuPy's disk cache): not counted
                        compiled = result.timings.get("compile", 0.0)
                        wall = time.perf_counter() - t0 - compiled
                    except MemoryError:
                        emit({**rec, "status": "error", "note": "out of memory", "within": False})
                        return None
                    except Exception as exc:  # noqa: BLE001 -- the size is over the limit, say why
                        emit({**rec, "status": "error", "within": False,
                              "note": f"{type(exc).__name__}: {' '.join(str(exc).split())[:300]}"})
                        return None
                    compute = result.compute_time
                    emit({**rec, "status": "ok", "note": "", "time_s": wall, "compute_s": compute,
                          "compile_s": compiled,
                          "stages_s": dict(result.timings), "within": wall <= budget,
                          "relaxations_per_s": float(n) ** 3 / compute if compute > 0 else None})
                    del result
                    return wall

                search = Search(measure, config.n or config.budget_start_n, cap)
                for budget in sorted(config.budgets):
                    found = search.run(budget)
                    limits.append({"backend": backend, "algorithm": algorithm, "dtype": dtype, **found})
                top = max((r for r in records if r.get("status") == "ok" and r["backend"] == backend
                           and r["algorithm"] == algorithm and r["dtype"] == dtype), key=lambda r: r["n"], default=None)
                for m in mem:
                    if m["max_n"] and top and top.get("time_s"):
                        m["algorithm"] = algorithm
                        m["predicted_time_at_max_n_s"] = top["time_s"] * (m["max_n"] / top["n"]) ** 3
                graphs.clear()
    return common.payload(NAME, config, env, records, {"limits": limits, "memory": memory})


# ---------------------------------------------------------------- views
def duration(t: float) -> str:
    for unit, seconds in (("days", 86400), ("h", 3600), ("min", 60)):
        if t >= 2 * seconds:
            return f"{t / seconds:.3g} {unit}"
    return seconds_cell(t)


def summary_lines(data) -> list[str]:
    s = data.get("summary") or {}
    lines = []
    for lim in s.get("limits", []):
        who = f"{lim['backend']}/{lim['algorithm']} {lim['dtype']}"
        if lim.get("n"):
            nxt = (f"; n = {lim['next_n']:,} took {seconds_cell(lim['next_time_s'])}"
                   if lim.get("next_n") and lim.get("next_time_s") else "")
            extra = " (stopped by memory)" if lim.get("limited_by") == "memory" else ""
            lines.append(f"within {lim['budget_s']:g} s: n = {lim['n']:,} with {who} "
                         f"({seconds_cell(lim['time_s'])}){nxt}{extra}")
        else:
            lines.append(f"within {lim['budget_s']:g} s: nothing with {who} (the smallest size tried was too slow)")
    for m in s.get("memory", []):
        if m.get("max_n"):
            t = m.get("predicted_time_at_max_n_s")
            when = f"; a solve there would take ~{duration(t)} at the measured rate" if t else ""
            lines.append(f"memory ({m['backend']} {m['dtype']}, {m['pool']} {m['available_bytes'] / 2**30:.1f} GiB): "
                         f"n <= {m['max_n']:,} at {m['bytes_per_entry']:g} bytes per entry ({m['model']}); "
                         f"the matrix alone up to {m['matrix_only_max_n']:,}{when}")
    return lines


def plots(data, out_dir, ceilings=None, prefix=""):
    from .. import plots as P

    recs = [r for r in common.ok(data.get("records", [])) if r.get("time_s")]
    if not recs:
        return []
    out_dir = Path(out_dir)
    s = data.get("summary") or {}
    many = len({(r["backend"], r["algorithm"], r["dtype"]) for r in recs}) > 1
    groups = {}
    for r in recs:
        groups.setdefault(common.series_label(r, True) if many else common.series_label(r), {})[r["n"]] = r["time_s"]
    series = [{"label": k, "x": list(v), "y": list(v.values()), "style": "none"} for k, v in groups.items()]
    budgets = sorted({lim["budget_s"] for lim in s.get("limits", [])} or {r["budget_s"] for r in recs})
    vlines = [(lim["n"], f"{lim['backend']}/{lim['algorithm']} {lim['dtype']}: n = {lim['n']:,} within "
                         f"{lim['budget_s']:g} s") for lim in s.get("limits", []) if lim.get("n")]
    files = []
    path = out_dir / f"{prefix}{NAME}-search.png"
    P.line_plot(series, path, xlabel="n (vertices)", ylabel="wall time per solve (s)",
                title="Time-budget search: every solve measured", hlines=[(b, f"budget {b:g} s") for b in budgets],
                vlines=vlines[:6])
    files.append((path.name, "Every solve of the doubling and bisection; dashed: the budgets; dotted: the largest n "
                             "within each"))
    bars = [(f"{lim['backend']}/{lim['algorithm']} {lim['dtype']} {lim['budget_s']:g} s", lim["n"])
            for lim in s.get("limits", []) if lim.get("n")]
    bars += [(f"{m['backend']} {m['dtype']} memory ({m['pool'].split(' (')[0]})", m["max_n"])
             for m in s.get("memory", []) if m.get("max_n")]
    if bars:
        path = out_dir / f"{prefix}{NAME}-limits.png"
        P.bar_chart(bars, path, ylabel="n (vertices)", title="Largest n: per time budget (run) and per memory "
                    "(computed)", logy=True)
        files.append((path.name, "Largest n within each budget (measured) and within memory (computed, not run)"))
    return files
