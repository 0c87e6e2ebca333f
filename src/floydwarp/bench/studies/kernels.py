"""``kernels``: every algorithm of a backend at one n -- time, GB/s, relax/s, % of the ceilings.

Seed 000 figures 4-6, seed 001's GOPS.  Runs on the backend asked for (default
``gpu``; without a GPU that is a one-line error, and ``--backend cpu`` runs the CPU
algorithms).  Bytes moved come from the traffic model each implementation registers
(``impl.bytes_moved(n, itemsize, block_size)``; the cpu algorithms get the
bench's blocked / per-k-sweep models), so GB/s = model bytes / compute time, and the
percentages are of the ceilings study's copy bandwidth and add-min rate -- measured
now when no ceilings JSON is given or found.
"""
from __future__ import annotations

from pathlib import Path

from ..report import Column, label, percent_cell, rate_cell, seconds_cell
from . import ceilings as C
from . import common

NAME = "kernels"
TITLE = "Every algorithm at one n: time, bandwidth, rate and % of the device ceilings"

#: default n per backend
DEFAULT_N = {"gpu": 8192, "cpu": 1024, "mpi": 1024, "reference": 256}

COLUMNS = [
    Column("backend/algorithm", label, width=-26),
    Column("n", "n", lambda v: f"{v:,}", 7),
    Column("dtype", "dtype", width=-7),
    Column("time", "time_s", seconds_cell, 9),
    Column("compute", "compute_s", seconds_cell, 9),
    Column("relax/s", "relaxations_per_s", rate_cell, 9),
    Column("GB/s", "gb_per_s", lambda v: f"{v:.1f}", 7),
    Column("% copy", "pct_copy", percent_cell, 7),
    Column("% add-min", "pct_addmin", percent_cell, 9),
]


def columns(records=()):
    return COLUMNS


def default_n(backend, config) -> int:
    return int(config.n or DEFAULT_N.get(backend, 1024))


def run(config, *, command=None, on_record=None) -> dict:
    from ..graphs import GraphCache

    backends = common.backends_for(config, default="gpu", study=NAME)
    wanted = list(config.algorithms or ["all"])
    common.check_algorithms(backends, wanted)
    env = common.environment(config, command)
    ceilings = ensure_ceilings(config, env, backends)
    records = []
    emit = common.emitter(records, on_record)
    graphs = GraphCache(config)
    for backend in backends:
        n = default_n(backend, config)
        for algorithm in common.algorithm_names(backend, wanted):
            for dtype in config.dtypes:
                rec = common.measure(backend, algorithm, dtype, n, graphs.get(n, backend), config,
                                     block_size=config.block_sizes[0] if config.block_sizes else None,
                                     graph_source=graphs.source(backend))
                if rec["status"] == "ok" and rec.get("bytes_moved"):
                    rec["relaxations_per_byte"] = float(n) ** 3 / rec["bytes_moved"]
                emit(C.add_fractions(rec, ceilings))
    return common.payload(NAME, config, env, records, {"ceilings": ceilings})


def ensure_ceilings(config, env, backends):
    """The ceilings of each backend run: from the config (a file) or measured now."""
    have = list(config.ceilings or [])
    for backend in backends:
        kind = "gpu" if backend == "gpu" else "cpu"
        if any(c.get("backend") == kind for c in have):
            continue
        common.warn(f"no {kind} ceilings given or found: measuring them (floydwarp bench ceilings)")
        try:
            have.append(C.measure_gpu() if kind == "gpu" else C.measure_cpu(C.CPU_DTYPES, env))
        except Exception as exc:  # noqa: BLE001 -- the study runs without the % columns
            common.warn(f"could not measure the {kind} ceilings: {type(exc).__name__}: {exc}")
    config.ceilings = have or None
    return have


# ---------------------------------------------------------------- views
def summary_lines(data) -> list[str]:
    lines = []
    recs = common.ok(data.get("records", []))
    for backend in dict.fromkeys(r["backend"] for r in recs):
        for dtype in dict.fromkeys(r["dtype"] for r in recs if r["backend"] == backend):
            mine = [r for r in recs if r["backend"] == backend and r["dtype"] == dtype]
            top = max(mine, key=lambda r: r.get("relaxations_per_s") or 0)
            pct = f", {100 * top['pct_addmin']:.1f}% of the add-min ceiling" if top.get("pct_addmin") else ""
            lines.append(f"fastest {backend} {dtype} at n = {top['n']:,}: {top['algorithm']}, "
                         f"{rate_cell(top['relaxations_per_s'])} relax/s{pct}")
            bw = max(mine, key=lambda r: r.get("gb_per_s") or 0)
            if bw.get("gb_per_s"):
                pct = f" ({100 * bw['pct_copy']:.1f}% of the copy ceiling)" if bw.get("pct_copy") else ""
                if (bw.get("pct_copy") or 0) > 1:
                    pct += ": above 100%, the matrix is served from cache, not memory"
                lines.append(f"most bandwidth {backend} {dtype}: {bw['algorithm']}, {bw['gb_per_s']:.1f} GB/s{pct}")
    return lines


def plots(data, out_dir, ceilings=None, prefix=""):
    from .. import plots as P

    recs = common.ok(data.get("records", []))
    if not recs:
        return []
    out_dir = Path(out_dir)
    ceilings = ceilings if ceilings is not None else (data.get("summary") or {}).get("ceilings")
    multi = len({(r["backend"], r["dtype"]) for r in recs}) > 1
    name = (lambda r: f"{common.series_label(r)} {r['dtype']}") if multi else (lambda r: r["algorithm"])
    where = f"n = {', '.join(f'{n:,}' for n in sorted({r['n'] for r in recs}))}"
    files = []
    adds = _lines(recs, ceilings, "addmin")
    path = out_dir / f"{prefix}{NAME}-rate.png"
    P.bar_chart([(name(r), r.get("relaxations_per_s")) for r in recs], path, ylabel="relaxations / s",
                title=f"Rate per algorithm ({where})", hlines=adds, logy=True)
    files.append((path.name, "Relaxations per second per algorithm (log scale); dashed: add-min ceiling"))
    bw = [r for r in recs if r.get("gb_per_s")]
    if bw:
        path = out_dir / f"{prefix}{NAME}-bandwidth.png"
        P.bar_chart([(name(r), r["gb_per_s"]) for r in bw], path, ylabel="GB/s (traffic model / compute time)",
                    title=f"Memory bandwidth per algorithm ({where})",
                    hlines=[(y / 1e9, t) for y, t in _lines(recs, ceilings, "copy")])
        files.append((path.name, "Bandwidth per algorithm (model bytes / compute time); dashed: copy ceiling"))
    for backend in dict.fromkeys(r["backend"] for r in bw):
        for dtype in dict.fromkeys(r["dtype"] for r in bw if r["backend"] == backend):
            c = C.lookup(ceilings, backend, dtype)
            if not c or not c.get("copy") or not c.get("addmin"):
                continue
            pts = [(r["algorithm"], r.get("relaxations_per_byte"), r.get("relaxations_per_s")) for r in bw
                   if r["backend"] == backend and r["dtype"] == dtype]
            path = out_dir / f"{prefix}{NAME}-roofline-{backend}-{dtype}.png"
            P.roofline(pts, path, copy_bytes_per_s=c["copy"], addmin_per_s=c["addmin"],
                       title=f"Roofline: {backend} {dtype}, {where} ({c.get('device')})")
            files.append((path.name, f"Roofline ({backend}, {dtype}): each algorithm at its traffic model's "
                                     "intensity; dashed: min(add-min, intensity x copy bandwidth)"))
    return files


def _lines(recs, ceilings, kind):
    out = []
    for backend in dict.fromkeys(r["backend"] for r in recs):
        for dtype in dict.fromkeys(r["dtype"] for r in recs if r["backend"] == backend):
            c = C.lookup(ceilings, backend, dtype)
            if c and c.get(kind):
                text = (f"{backend} add-min ceiling ({c['key']})" if kind == "addmin" else f"{backend} copy ceiling")
                if (c[kind], text) not in out:
                    out.append((c[kind], text))
    return out
