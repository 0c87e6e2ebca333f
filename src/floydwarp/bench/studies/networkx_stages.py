"""``networkx-stages``: where the time of every NetworkX function on the floydwarp backend goes.

For each n of ``sizes`` (default 2000), each graph of the ``networkx`` study
(:func:`.networkx.make_graph`: connected, unweighted, ``sparse`` m = 10 n or ``dense``
``percent`` %) and each function of :data:`floydwarp.nx_backend.FUNCTIONS`: a first call
on a fresh conversion (it reads the edges) and a second one (NetworkX's cached conversion),
each split by :mod:`floydwarp.nx_backend.stages` into convert / solve (``solve.compute``:
the kernels) / reduce / build, plus ``dispatch``: the rest of the call (NetworkX's
dispatching, the backend's argument checks).  Functions whose answer holds n^2 Python
objects (``QUADRATIC``) are skipped above ``MAX_PAIRS`` pairs: their dicts alone take
minutes and tens of GB.  The ``networkx`` study times three of these functions against
NetworkX itself.
"""
from __future__ import annotations

import time
import warnings
from pathlib import Path

from ..report import Column, seconds_cell
from . import common

NAME = "networkx-stages"
TITLE = "NetworkX's functions on the floydwarp backend, stage by stage"
DEFAULT_SIZES = (2000,)
#: functions whose answer holds n^2 Python objects (distances or paths)
QUADRATIC = ("floyd_warshall", "floyd_warshall_predecessor_and_distance", "johnson",
             "all_pairs_shortest_path_length", "all_pairs_dijkstra_path_length",
             "all_pairs_bellman_ford_path_length")
MAX_PAIRS = 4e7
STAGES = ("convert", "solve", "solve.compute", "reduce", "build", "dispatch")


def _stage(key, stage):
    return lambda r: (r.get(key) or {}).get(stage)


COLUMNS = [
    Column("function", "function", width=-38),
    Column("graph", "graph", width=-6),
    Column("n", "n", lambda v: f"{v:,}", 7),
    Column("1st call", _stage("first_s", "total"), seconds_cell, 9),
    Column("2nd call", _stage("second_s", "total"), seconds_cell, 9),
    *[Column(stage, _stage("second_s", stage), seconds_cell, max(9, len(stage))) for stage in STAGES],
]


def columns(records=()):
    return COLUMNS


def call(name, G) -> None:
    import networkx as nx

    value = getattr(nx, name)(G, backend="floydwarp")
    if hasattr(value, "__next__"):          # the all_pairs_* generators: drain them
        for _ in value:
            pass


def staged(name, G) -> dict:
    """One call's seconds: ``total``, every stage, and ``dispatch`` (the rest)."""
    from ...nx_backend.stages import recording

    with recording() as seconds:
        t0 = time.perf_counter()
        call(name, G)
        total = time.perf_counter() - t0
    inside = sum(v for k, v in seconds.items() if "." not in k)
    return {"total": total, **seconds, "dispatch": total - inside}


def run(config, *, command=None, on_record=None) -> dict:
    from ...nx_backend import FUNCTIONS
    from ...nx_backend.graph import SOLVER_BACKEND
    from .networkx import GRAPHS, WARMUP_N, make_graph

    env = common.environment(config, command)
    records = []
    emit = common.emitter(records, on_record)
    warnings.filterwarnings("ignore", message="Note: conversions to backend graphs")
    call("closeness_centrality", make_graph("sparse", WARMUP_N, config.percent, config.seed))  # kernels compiled
    for n in sorted(dict.fromkeys(int(n) for n in config.sizes)):
        for kind in GRAPHS:
            G = make_graph(kind, n, config.percent, config.seed)
            for name in FUNCTIONS:
                rec = {"function": name, "graph": kind, "n": n, "edges": G.number_of_edges(),
                       "seed": config.seed, "solver_backend": SOLVER_BACKEND, "status": "ok", "note": ""}
                if name in QUADRATIC and n ** 2 > MAX_PAIRS:
                    emit({**rec, "status": "skipped", "note": f"n^2 = {n ** 2:.2g} Python objects > {MAX_PAIRS:g}"})
                    continue
                G.__networkx_cache__.clear()        # a fresh conversion: the first call reads the edges
                rec["first_s"] = staged(name, G)
                rec["second_s"] = staged(name, G)
                rec["time_s"] = rec["second_s"]["total"]
                emit(rec)
            del G
    return common.payload(NAME, config, env, records)


# ---------------------------------------------------------------- views
def summary_lines(data) -> list[str]:
    lines = []
    for r in common.ok(data.get("records", [])):
        second = r["second_s"]
        top = max((s for s in STAGES if s != "solve.compute"), key=lambda s: second.get(s, 0.0))
        lines.append(f"{r['function']}, {r['graph']} n = {r['n']:,}: {seconds_cell(r['first_s']['total'])} first, "
                     f"{seconds_cell(second['total'])} second call ({top} {seconds_cell(second.get(top, 0.0))})")
    return lines


def plots(data, out_dir, ceilings=None, prefix=""):
    from .. import plots as P

    recs = common.ok(data.get("records", []))
    if not recs:
        return []
    files = []
    for kind in dict.fromkeys(r["graph"] for r in recs):
        mine = [r for r in recs if r["graph"] == kind]
        cats = [f"{r['function']}\nn={r['n']:,}" for r in mine]
        segments = {s: [r["second_s"].get(s, 0.0) for r in mine] for s in STAGES if s != "solve.compute"}
        path = Path(out_dir) / f"{prefix}{NAME}-{kind}.png"
        P.stacked_bars(cats, segments, path, ylabel="seconds", title=f"Second call by stage, {kind} graphs")
        files.append((path.name, f"Where the second call's time goes, {kind} graphs"))
    return files
