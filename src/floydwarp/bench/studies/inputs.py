"""``inputs``: what it takes to get a graph: generating it, building it from edge arrays, reading a file.

For each n of ``sizes`` (default 8192; ``percent`` of the pairs, weights 1..16):

``erdos_renyi``
    :func:`floydwarp.generate.erdos_renyi`, median of ``repeats`` graphs (seeds 0, 1, ...)
    after one unmeasured graph (a fresh process pays the first touch of its pages once);
``from_edges ORDER TYPES``
    ``fw.Graph.from_edges`` on the graph of ``seed`` as host edge arrays, in the generator's
    order (``sorted``: by source and target) and in a random one (``shuffled``: as files and
    data frames often hold them, so the graph must sort them), with int64 and with int32 ids
    and weights;
``read_graph text ...``
    the shuffled edges as a text edge list (``source target weight`` lines, written once into
    ``tmp_dir``), read by :func:`floydwarp.io.read_graph` (the CLI's ``floydwarp solve FILE``
    input stage): once with the integer weights, once with real ones (the weights over 3, to 4
    decimals).

Every case runs once off the clock (kernels compiled or loaded), then ``repeats`` times:
``time_s`` is the median, ``best_s`` the best, ``edges_per_s`` = edges / ``time_s``.
"""
from __future__ import annotations

import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

from ..report import Column, format_rate, seconds_cell
from . import common

NAME = "inputs"
TITLE = "Getting a graph: generating it, building it from edge arrays, reading a text file"
DEFAULT_SIZES = (8192,)
#: edges the warm-up call of from_edges gets
WARM_EDGES = 1000

COLUMNS = [
    Column("case", "case", width=-32),
    Column("n", "n", lambda v: f"{v:,}", 7),
    Column("edges", "edges", lambda v: f"{v:,}", 12),
    Column("time", "time_s", seconds_cell, 9),
    Column("best", "best_s", seconds_cell, 9),
    Column("edges/s", "edges_per_s", lambda v: format_rate(v, "edges/s"), 15),
    Column("MB/s", "mb_per_s", lambda v: f"{v:.0f}", 6),
]


def columns(records=()):
    return COLUMNS


def timed(fn, repeats: int) -> list[float]:
    walls = []
    for i in range(repeats):
        t0 = time.perf_counter()
        fn(i)
        walls.append(time.perf_counter() - t0)
    return walls


def record(config, n, case, edges, walls, **extra) -> dict:
    t = statistics.median(walls)
    return {"case": case, "n": n, "percent": config.percent, "seed": config.seed, "repeats": config.repeats,
            "edges": int(edges), "time_s": t, "best_s": min(walls), "times_s": walls,
            "edges_per_s": edges / t if t > 0 else None, "status": "ok", "note": "", **extra}


def generation(config, n) -> dict:
    from ...generate import erdos_renyi

    erdos_renyi(n, config.percent, seed=config.repeats)       # off the clock: pages, imports
    edges = []

    def make(seed):
        edges.append(erdos_renyi(n, config.percent, seed=seed).num_edges)

    walls = timed(make, config.repeats)
    return record(config, n, "erdos_renyi", edges[-1], walls,
                  ns_per_edge=statistics.median(walls) / edges[-1] * 1e9 if edges[-1] else None)


def from_edges(config, n, arrays, order, types) -> dict:
    import floydwarp as fw

    s, d, w = (a.astype(types) for a in arrays)
    fw.Graph.from_edges(s[:WARM_EDGES], d[:WARM_EDGES], w[:WARM_EDGES], n=n)
    walls = timed(lambda _: fw.Graph.from_edges(s, d, w, n=n), config.repeats)
    return record(config, n, f"from_edges {order} {types}", s.size, walls, order=order, types=types)


def text_file(config, n, arrays, weights, fmt, case) -> dict:
    from ...io import read_graph

    s, d, _ = arrays
    with tempfile.TemporaryDirectory(dir=config.tmp_dir) as folder:
        path = Path(folder) / "edges.txt"
        np.savetxt(path, np.stack([s, d, weights], axis=1), fmt=["%d", "%d", fmt])
        read_graph(path)
        walls = timed(lambda _: read_graph(path), config.repeats)
        size = path.stat().st_size
    return record(config, n, case, s.size, walls, order="shuffled", bytes=size,
                  mb_per_s=size / statistics.median(walls) / 1e6)


def run(config, *, command=None, on_record=None) -> dict:
    from ...generate import erdos_renyi

    env = common.environment(config, command)
    records = []
    emit = common.emitter(records, on_record)
    for n in config.sizes:
        n = int(n)
        emit(generation(config, n))
        src, dst, w = (np.ascontiguousarray(a) for a in erdos_renyi(n, config.percent, seed=config.seed).edges())
        shuffle = np.random.default_rng(config.seed).permutation(src.size)
        shuffled = (src[shuffle], dst[shuffle], w[shuffle])
        for order, arrays in (("sorted", (src, dst, w)), ("shuffled", shuffled)):
            for types in ("int64", "int32"):
                emit(from_edges(config, n, arrays, order, types))
        weights = shuffled[2]
        emit(text_file(config, n, shuffled, weights, "%d", "read_graph text, integer weights"))
        emit(text_file(config, n, shuffled, np.round(weights / 3, 4), "%.4f", "read_graph text, real weights"))
    return common.payload(NAME, config, env, records)


# ---------------------------------------------------------------- views
def summary_lines(data) -> list[str]:
    return [f"{r['case']}, n = {r['n']:,} ({r['edges']:,} edges): {seconds_cell(r['time_s'])} "
            f"({format_rate(r['edges_per_s'], 'edges/s')})" for r in common.ok(data.get("records", []))
            if r.get("edges_per_s")]


def plots(data, out_dir, ceilings=None, prefix=""):
    from .. import plots as P

    recs = [r for r in common.ok(data.get("records", [])) if r.get("edges_per_s")]
    if not recs:
        return []
    many = len({r["n"] for r in recs}) > 1
    path = Path(out_dir) / f"{prefix}{NAME}-edges-per-s.png"
    bars = [(f"{r['case']} n={r['n']:,}" if many else r["case"], r["edges_per_s"]) for r in recs]
    P.bar_chart(bars, path,
                ylabel="edges per second", title="Getting a graph: edges per second", logy=True)
    return [(path.name, "Edges per second of each way to get a graph (median of the repeats)")]
