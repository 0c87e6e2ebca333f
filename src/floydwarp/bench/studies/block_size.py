"""``block-size``: rate vs tile size, and vs the thread-block options of the GPU kernels.

Seed 000 figures 8-11, seed 001 figures 1-5.  For each algorithm of the backend
(default: the gpu when usable, else the cpu) one parameter is swept:

* ``block_size`` (the tile edge B) for the blocked algorithms;
* the plan option ``R`` (cells per thread: R x R) for gpu ``pseudo-blocked``;
* the plan option ``threads_per_block`` for gpu ``work-per-thread`` and ``grid-sync``;

or whatever ``sweep={"name": ..., "values": [...]}`` (``--sweep NAME=V,V``) or
``block_sizes`` (``-b``) says for every algorithm.  Plan options reach the engine
through ``solve(..., **options)`` -> ``plan.options``.  Each point is a timed case
(median of repeats after a warm-up); a value the engine refuses is a skipped record.
Runs at ``n`` (default 8192 on the gpu, 1024 elsewhere) or at each of ``sizes``.
"""
from __future__ import annotations

from pathlib import Path

from ..report import Column, label, percent_cell, rate_cell, seconds_cell
from . import ceilings as C
from . import common
from .kernels import DEFAULT_N

NAME = "block-size"
TITLE = "Rate vs tile size and thread-block options"

BLOCKS = {"gpu": [16, 32, 64, 128], "cpu": [16, 32, 64, 128, 256], "mpi": [16, 32, 64, 128, 256]}
#: (backend, algorithm) -> (parameter, values); block_size sweeps use BLOCKS
SWEEPS = {
    ("gpu", "blocked"): "block_size",
    ("gpu", "blocked-vec"): "block_size",
    ("gpu", "pseudo-blocked"): ("R", [1, 2, 4, 8]),
    ("gpu", "work-per-thread"): ("threads_per_block", [64, 128, 256, 512, 1024]),
    ("gpu", "grid-sync"): ("threads_per_block", [64, 128, 256, 512, 1024]),
    ("cpu", "blocked"): "block_size",
    ("mpi", "blocked-2d"): "block_size",
}

COLUMNS = [
    Column("backend/algorithm", label, width=-24),
    Column("n", "n", lambda v: f"{v:,}", 7),
    Column("dtype", "dtype", width=-7),
    Column("parameter", "sweep", width=-17),
    Column("value", "value", width=6),
    Column("time", "time_s", seconds_cell, 9),
    Column("compute", "compute_s", seconds_cell, 9),
    Column("relax/s", "relaxations_per_s", rate_cell, 9),
    Column("GB/s", "gb_per_s", lambda v: f"{v:.1f}", 7),
    Column("% add-min", "pct_addmin", percent_cell, 9),
]


def columns(records=()):
    return COLUMNS


def sweep_for(backend, algorithm, config):
    """(parameter, values) swept for one algorithm, or None when it has nothing to sweep."""
    if config.sweep:
        return config.sweep["name"], list(config.sweep["values"])
    blocks = [b for b in config.block_sizes if b is not None]
    if blocks:
        return "block_size", blocks
    spec = SWEEPS.get((backend, algorithm))
    if spec is None:
        return None
    if spec == "block_size":
        return "block_size", BLOCKS.get(backend, BLOCKS["cpu"])
    return spec


def run(config, *, command=None, on_record=None) -> dict:
    from ..graphs import GraphCache

    default = None if config.backends else ("gpu" if common.usable("gpu") else "cpu")
    backends = common.backends_for(config, default=default, study=NAME)
    env = common.environment(config, command)
    records = []
    emit = common.emitter(records, on_record)
    graphs = GraphCache(config)
    for backend in backends:
        if config.algorithms:
            common.check_algorithms([backend], config.algorithms)
            algorithms = common.algorithm_names(backend, config.algorithms)
        else:
            algorithms = [a for (b, a) in SWEEPS if b == backend]
        ns = [config.n] if config.n else (list(config.sizes) or [DEFAULT_N.get(backend, 1024)])
        for n in ns:
            for algorithm in algorithms:
                spec = sweep_for(backend, algorithm, config)
                if spec is None:
                    emit(common.skipped(n, config, backend, algorithm, config.dtypes[0],
                                        "nothing to sweep: give --sweep NAME=V,V or --block-size B,B"))
                    continue
                param, values = spec
                for dtype in config.dtypes:
                    for value in values:
                        options = dict(config.options)
                        block = None
                        if param == "block_size":
                            block = int(value)
                        else:
                            options[param] = value
                        rec = common.measure(backend, algorithm, dtype, n, graphs.get(n, backend), config,
                                             block_size=block, options=options, graph_source=graphs.source(backend),
                                             sweep=param, value=value)
                        emit(C.add_fractions(rec, config.ceilings))
    return common.payload(NAME, config, env, records, {"best": best(records)})


def best(records) -> list[dict]:
    """The fastest value per (backend, algorithm, n, dtype, parameter)."""
    groups = {}
    for r in common.ok(records):
        key = (r["backend"], r["algorithm"], r["n"], r["dtype"], r.get("sweep"))
        if key not in groups or r["relaxations_per_s"] > groups[key]["relaxations_per_s"]:
            groups[key] = r
    return [{"backend": k[0], "algorithm": k[1], "n": k[2], "dtype": k[3], "sweep": k[4], "value": r["value"],
             "relaxations_per_s": r["relaxations_per_s"]} for k, r in groups.items()]


# ---------------------------------------------------------------- views
def summary_lines(data) -> list[str]:
    lines = []
    for b in (data.get("summary") or {}).get("best") or best(data.get("records", [])):
        lines.append(f"best {b['sweep']} for {b['backend']}/{b['algorithm']} ({b['dtype']}, n = {b['n']:,}): "
                     f"{b['value']} ({rate_cell(b['relaxations_per_s'])} relax/s)")
    return lines


def plots(data, out_dir, ceilings=None, prefix=""):
    from .. import plots as P
    from .sizes import ceiling_lines

    recs = [r for r in common.ok(data.get("records", [])) if isinstance(r.get("value"), (int, float))]
    if not recs:
        return []
    out_dir = Path(out_dir)
    files = []
    many_n = len({r["n"] for r in recs}) > 1
    many_dt = len({r["dtype"] for r in recs}) > 1
    for param in dict.fromkeys(r["sweep"] for r in recs):
        mine = [r for r in recs if r["sweep"] == param]
        groups = {}
        for r in mine:
            name = common.series_label(r) + (f" n={r['n']:,}" if many_n else "") + (f" {r['dtype']}" if many_dt else "")
            groups.setdefault(name, []).append(r)
        series = [{"label": k, "x": [r["value"] for r in v], "y": [r["relaxations_per_s"] for r in v]}
                  for k, v in groups.items()]
        where = "n = " + ", ".join(f"{n:,}" for n in sorted({r['n'] for r in mine}))
        xlabel = {"block_size": "block size B (tile edge, cells)", "R": "R (each thread updates R x R cells)",
                  "threads_per_block": "threads per block"}.get(param, param)
        slug = param.replace("_", "-")
        path = out_dir / f"{prefix}{NAME}-{slug}-rate.png"
        P.line_plot(series, path, xlabel=xlabel, ylabel="relaxations / s (n^3 / compute)",
                    title=f"Rate vs {param} ({where})", hlines=ceiling_lines(mine, ceilings), logy=True)
        files.append((path.name, f"Relaxations per second vs {param}; dashed: add-min ceiling"))
        if param == "block_size" and any(r.get("gb_per_s") for r in mine):
            series = [{"label": k, "x": [r["value"] for r in v], "y": [r.get("gb_per_s") for r in v]}
                      for k, v in groups.items()]
            path = out_dir / f"{prefix}{NAME}-{slug}-bandwidth.png"
            P.line_plot(series, path, xlabel=xlabel, ylabel="GB/s (traffic model / compute)",
                        title=f"Bandwidth vs {param} ({where})",
                        hlines=[(y / 1e9, t) for y, t in ceiling_lines(mine, ceilings, "copy")], logy=True)
            files.append((path.name, "Model bandwidth vs block size: larger tiles move fewer bytes; "
                                     "dashed: copy ceiling"))
    return files
