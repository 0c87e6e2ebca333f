"""``networkx``: NetworkX's all-pairs functions on the floydwarp backend vs NetworkX itself.

For each n of ``sizes`` (default 1000, 5000, 20000) two connected undirected unweighted
random graphs: ``sparse`` (m = 10 n edges) and ``dense`` (``percent`` of the pairs, at most
``DENSE_MAX_EDGES`` edges: the percent used is recorded).  For each of ``FUNCTIONS`` the
whole NetworkX call ``nx.f(G, backend="floydwarp")`` is timed (median of ``repeats``, after a
warm-up call that compiles the kernels), edge reading, solve, reduction and the dict it
returns included.  The first call reads the graph's edges; NetworkX keeps the converted
graph (``G.__networkx_cache__``) and later calls reuse what was read: ``floydwarp_first_s``
is the first call, ``floydwarp_s`` the median over ``repeats`` calls, and ``stages_s`` /
``stages_first_s`` split the last and the first call into the backend's stages
(:mod:`floydwarp.nx_backend.stages`: convert, solve and its own ``solve.<stage>``, reduce,
build; the rest of the call is NetworkX's dispatching).

NetworkX's time: NetworkX runs one search per node, so each function is timed on
``SAMPLE`` nodes with NetworkX's own per-node call (``closeness_centrality(G, u=v)``,
``eccentricity(G, v=v)``, ``single_source_shortest_path_length`` for the average path
length) and predicted as the mean x n.  Where that prediction is under
``max_seconds`` (default 10 s) the whole NetworkX call is timed as well and used instead
(``networkx_measured`` says which).  The sampled nodes' values are compared with
floydwarp's (``equal``).
"""
from __future__ import annotations

import statistics
import time
from pathlib import Path

import numpy as np

from ..report import Column, ratio_cell, seconds_cell
from . import common

NAME = "networkx"
TITLE = "NetworkX's all-pairs functions: floydwarp backend vs NetworkX"
DEFAULT_SIZES = (1000, 5000, 20000)
FUNCTIONS = ("closeness_centrality", "average_shortest_path_length", "eccentricity")
GRAPHS = ("sparse", "dense")
SPARSE_DEGREE = 10            # m = 10 n
DENSE_MAX_EDGES = 2_000_000   # NetworkX's dict-of-dicts graph of more edges takes minutes to build
SAMPLE = 16
WARMUP_N = 64

COLUMNS = [
    Column("function", "function", width=-29),
    Column("graph", "graph", width=-6),
    Column("n", "n", lambda v: f"{v:,}", 7),
    Column("edges", "edges", lambda v: f"{v:,}", 10),
    Column("floydwarp", "floydwarp_s", seconds_cell, 10),
    Column("kernels", lambda r: (r.get("stages_s") or {}).get("solve.compute"), seconds_cell, 10),
    Column("1st call", "floydwarp_first_s", seconds_cell, 10),
    Column("NetworkX", "networkx_s", seconds_cell, 10),
    Column("measured", "networkx_measured", width=-16),
    Column("speedup", "speedup", ratio_cell, 9),
    Column("equal", "equal", lambda v: "yes" if v else "NO", 5),
]


def columns(records=()):
    return COLUMNS


def make_graph(kind: str, n: int, percent: float, seed: int):
    """A connected undirected graph: a random spanning tree plus random extra edges."""
    import networkx as nx

    rng = np.random.default_rng(seed)
    if kind == "sparse":
        m = SPARSE_DEGREE * n
    else:
        m = min(int(percent / 100 * n * (n - 1) / 2), DENSE_MAX_EDGES)
    parents = (rng.random(n - 1) * np.arange(1, n)).astype(np.int64)      # tree: i -> an earlier node
    extra = rng.integers(0, n, size=(int(m * 1.02) + 16, 2))
    pairs = np.vstack([np.c_[np.arange(1, n), parents], extra])
    pairs = pairs[pairs[:, 0] != pairs[:, 1]]
    pairs = np.unique(np.sort(pairs, axis=1), axis=0)
    G = nx.Graph()
    G.add_nodes_from(range(n))
    G.add_edges_from(pairs[:m].tolist() if len(pairs) > m else pairs.tolist())
    return G


def _per_node(name, G, v):
    import networkx as nx

    if name == "closeness_centrality":
        return nx.closeness_centrality(G, u=v, backend="networkx")
    if name == "eccentricity":
        return nx.eccentricity(G, v=v, backend="networkx")
    return sum(nx.single_source_shortest_path_length(G, v, backend="networkx").values())


def _timed(call, repeats):
    times, value = [], None
    for _ in range(repeats):
        t0 = time.perf_counter()
        value = call()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), value


def _staged(call, repeats):
    """``(first call's seconds, median seconds, value, stages of the first call, of the last)``."""
    from ...nx_backend.stages import recording

    times, stages, value = [], [], None
    for _ in range(max(1, repeats)):
        with recording() as seconds:
            t0 = time.perf_counter()
            value = call()
            times.append(time.perf_counter() - t0)
        stages.append(seconds)
    return times[0], statistics.median(times), value, stages[0], stages[-1]


def run(config, *, command=None, on_record=None) -> dict:
    import networkx as nx

    from ...nx_backend import graph as nx_graph_module

    env = common.environment(config, command)
    records = []
    emit = common.emitter(records, on_record)
    warm = make_graph("sparse", WARMUP_N, config.percent, config.seed)
    for name in FUNCTIONS:
        getattr(nx, name)(warm, backend="floydwarp")                  # kernels compiled off the clock
    rng = np.random.default_rng(config.seed)
    for n in sorted(dict.fromkeys(config.sizes)):
        for kind in GRAPHS:
            t0 = time.perf_counter()
            G = make_graph(kind, n, config.percent, config.seed)
            build_s = time.perf_counter() - t0
            edges = G.number_of_edges()
            sample = sorted(rng.choice(n, size=min(SAMPLE, n), replace=False).tolist())
            for name in FUNCTIONS:
                func = getattr(nx, name)
                rec = {"function": name, "graph": kind, "n": n, "edges": edges,
                       "percent": 100.0 * edges / (n * (n - 1) / 2), "seed": config.seed,
                       "repeats": config.repeats, "graph_build_s": build_s,
                       "solver_backend": nx_graph_module.SOLVER_BACKEND, "status": "ok", "note": ""}
                try:
                    first_s, fw_s, got, first_stages, stages = _staged(lambda G=G: func(G, backend="floydwarp"),
                                                                       config.repeats)
                except Exception as exc:  # noqa: BLE001 -- recorded; the study goes on
                    rec.update(status="error", note=f"{type(exc).__name__}: {' '.join(str(exc).split())[:300]}")
                    emit(rec)
                    continue
                per_node, values = [], []
                for v in sample:
                    t1 = time.perf_counter()
                    values.append(_per_node(name, G, v))
                    per_node.append(time.perf_counter() - t1)
                predicted = statistics.fmean(per_node) * n
                rec.update(floydwarp_s=fw_s, floydwarp_first_s=first_s, stages_s=stages,
                           stages_first_s=first_stages, networkx_predicted_s=predicted,
                           networkx_sample=len(sample))
                if name == "average_shortest_path_length":
                    equal = True        # checked against the whole NetworkX call below, when it runs
                else:
                    equal = all(got[v] == value for v, value in zip(sample, values))
                if predicted <= config.max_seconds:
                    nx_s, want = _timed(lambda G=G: func(G, backend="networkx"), 1)
                    equal = equal and got == want
                    rec.update(networkx_s=nx_s, networkx_measured="full call")
                else:
                    rec.update(networkx_s=predicted, networkx_measured=f"{len(sample)} of {n:,} nodes")
                rec.update(equal=bool(equal), speedup=rec["networkx_s"] / fw_s)
                emit(rec)
            del G
    return common.payload(NAME, config, env, records)


# ---------------------------------------------------------------- views
def summary_lines(data) -> list[str]:
    lines = []
    for r in common.ok(data.get("records", [])):
        lines.append(f"{r['function']}, {r['graph']} n = {r['n']:,}: {ratio_cell(r['speedup'])} "
                     f"({seconds_cell(r['floydwarp_s'])} vs {seconds_cell(r['networkx_s'])}, NetworkX "
                     f"{r['networkx_measured']})")
    return lines


def plots(data, out_dir, ceilings=None, prefix=""):
    from .. import plots as P

    recs = common.ok(data.get("records", []))
    if not recs:
        return []
    out_dir = Path(out_dir)
    groups = {}
    for r in recs:
        groups.setdefault(f"{r['function']} ({r['graph']})", []).append(r)
    series = [{"label": k, "x": [r["n"] for r in v], "y": [r["speedup"] for r in v]}
              for k, v in groups.items()]
    path = out_dir / f"{prefix}{NAME}-speedup.png"
    P.line_plot(series, path, xlabel="n (nodes)", ylabel="speedup over NetworkX (x)",
                title="floydwarp backend vs NetworkX (whole calls)", xbase=10)
    files = [(path.name, "Speedup of nx.f(G, backend='floydwarp') over NetworkX's own f; NetworkX's time "
                         "predicted from sampled nodes where the records say so")]
    times = [{"label": f"{k} floydwarp", "x": [r["n"] for r in v], "y": [r["floydwarp_s"] for r in v]}
             for k, v in groups.items()]
    times += [{"label": f"{k} NetworkX", "x": [r["n"] for r in v], "y": [r["networkx_s"] for r in v],
               "style": "--"} for k, v in groups.items()]
    path = out_dir / f"{prefix}{NAME}-time.png"
    P.line_plot(times, path, xlabel="n (nodes)", ylabel="seconds per call", title="Time per call", xbase=10)
    files.append((path.name, "Seconds per call: floydwarp (solid) and NetworkX (dashed)"))
    return files
