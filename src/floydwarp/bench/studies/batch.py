"""``batch``: many molecule-sized graphs at once (graph learning's preprocessing).

Batches of B random molecule-like graphs (n uniform in 10..60, or ``-O n_min=..`` ``-O
n_max=..``; a spanning tree plus ring closures, both directions stored: about 2.2 edges a
vertex; batch/generate.py) in the
PyTorch Geometric layout, hop counts (every edge weighs 1), B = each of ``--batches``
(default 10^3, 10^4, 10^5; 10^6 on a GPU).  Side by side, on the same graphs:

``floydwarp batch``
    :func:`floydwarp.solve_batch` from the PyG arrays (``edge_index``, ``ptr``) to the padded
    (B, N, N) uint8 tensor, validation included; on the GPU from device arrays to the device
    tensor (the arrays are uploaded before the clock starts).  Split into ``convert``
    (GraphBatch.from_pyg) and ``kernel`` (the engine, writing the output included), with the
    kernel-mode CPU time of the call (``sys``: first touches of the new output pages).
``scipy loop``
    per graph: its edges sliced out of ``edge_index``, a CSR matrix, SciPy's
    ``floyd_warshall(unweighted=True)``.
``graphormer loop``
    per graph: the dense boolean adjacency Graphormer's ``preprocess_item`` builds, then
    Graphormer's own Cython ``algos.floyd_warshall`` -- built from the public repository
    outside floydwarp and named with ``-O graphormer=PATH`` (the folder holding the
    compiled ``algos`` module, or the module file); skipped when not given.
``floydwarp loop``
    per graph: :func:`floydwarp.solve` on the graph's edges.

The loops run on at most ``-O loop_max=N`` graphs of a batch (default 10^5), the first
ones; their rate then stands for the batch (a record says how many graphs it timed).
Every loop's distances are checked against floydwarp's batch.  Rates: graphs/s and
relaxations/s (sum of n^3 / time).

Sections (``-O parts=pyg,inputs,learn``, default all): ``pyg`` (the above), ``inputs`` (the
same graphs as a dense list, a padded array, a list of SciPy CSR matrices and a list of
Graphs, each against a SciPy loop over that form: batch_inputs.py), ``learn`` (Graphormer's
collate, DGL's shortest_dist and the PyG transform on a training batch of the first batch's
graphs, against what their users run today: batch_learn.py).
"""
from __future__ import annotations

import importlib
import importlib.util
import statistics
import sys
import time
from pathlib import Path

import numpy as np

from ..report import Column, rate_cell, ratio_cell, seconds_cell
from . import batch_inputs, batch_learn, common

NAME = "batch"
TITLE = "Many molecule-sized graphs at once: floydwarp batch vs per-graph loops"
DEFAULT_BATCHES = (1000, 10_000, 100_000)
GPU_BATCHES = (1000, 10_000, 100_000, 1_000_000)
SIZES = (10, 60)
LOOP_MAX = 100_000
#: the study's sections (``-O parts=...``): PyG arrays vs loops, the other input forms, the
#: graph-learning drop-ins (on the first batch's first ``-O collate=B`` graphs)
PARTS = ("pyg", "inputs", "learn")

COLUMNS = [
    Column("method", "method", width=-16),
    Column("backend", "backend", width=-7),
    Column("input", "input", width=-11),
    Column("problem", "problem", width=-7),
    Column("graphs", "graphs", lambda v: f"{v:,}", 9),
    Column("timed", "timed_graphs", lambda v: f"{v:,}", 9),
    Column("time", "time_s", seconds_cell, 9),
    Column("convert", "convert_s", seconds_cell, 9),
    Column("kernel", "compute_s", seconds_cell, 9),
    Column("sys", "sys_s", seconds_cell, 8),
    Column("graphs/s", "graphs_per_s", rate_cell, 9),
    Column("us/graph", "us_per_graph", lambda v: f"{v:.3g}", 8),
    Column("relax/s", "relaxations_per_s", rate_cell, 9),
    Column("vs scipy", "speedup_vs_scipy", ratio_cell, 9),
    Column("vs graphormer", "speedup_vs_graphormer", ratio_cell, 13),
    Column("vs loop", "speedup_vs_loop", ratio_cell, 8),
    Column("exact", "matches", width=6),
]


def columns(records=()):
    return COLUMNS


def load_graphormer(where):
    """Graphormer's compiled ``algos`` module from a folder or a module file (None: not given)."""
    if not where:
        return None
    path = Path(str(where))
    if path.is_dir():
        sys.path.insert(0, str(path))
        try:
            return importlib.import_module("algos")
        finally:
            sys.path.remove(str(path))
    if path.is_file():
        spec = importlib.util.spec_from_file_location("algos", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module
    return importlib.import_module(str(where))


def run(config, *, command=None, on_record=None) -> dict:
    backends = common.backends_for(config, wanted=("cpu", "gpu"), default=["cpu"] + (["gpu"] if common.usable("gpu")
                                                                                       else []), study=NAME)
    batches = list(config.batches or (GPU_BATCHES if "gpu" in backends else DEFAULT_BATCHES))
    loop_max = int(config.options.get("loop_max", LOOP_MAX))
    parts = _parts(config.options.get("parts"))
    n_range = (int(config.options.get("n_min", SIZES[0])), int(config.options.get("n_max", SIZES[1])))
    try:
        graphormer = load_graphormer(config.options.get("graphormer"))
        graphormer_note = None
    except Exception as exc:  # noqa: BLE001 -- a missing baseline is a skipped record, not a failed study
        graphormer, graphormer_note = None, f"cannot load Graphormer's algos ({type(exc).__name__}: {exc})"
    env = common.environment(config, command)
    records = []
    emit = common.emitter(records, on_record)
    for count in batches:
        from ...batch.generate import molecules

        edge_index, ptr = molecules(count, sizes=n_range, seed=config.seed)
        sizes = np.diff(ptr)
        base = {"graphs": count, "n_min": n_range[0], "n_max": n_range[1], "edges": int(edge_index.shape[1]),
                "relaxations": float((sizes.astype(np.float64) ** 3).sum()), "dtype": "uint8"}
        done = {}
        for backend in backends:
            rec, dist = _batch_record(backend, edge_index, ptr, config, base)
            done[backend] = (emit(rec), dist)
        reference = next(iter(done.values()))[1]
        timed = min(count, loop_max)
        if "cpu" in backends and "inputs" in parts:
            batch_inputs.records(count, edge_index, ptr, config, base, loop_max, done["cpu"][1], emit)
        if "learn" in parts and count == batches[0]:
            batch_learn.records(edge_index, ptr, backends, config, graphormer, graphormer_note, emit)
        loops = {"scipy loop": _scipy_loop, "graphormer loop": _graphormer_loop(graphormer),
                 "floydwarp loop": _floydwarp_loop}
        loop_records = {}
        for method, loop in loops.items():
            if loop is None:
                loop_records[method] = emit({**base, "method": method, "backend": "cpu", "status": "skipped",
                                             "note": graphormer_note
                                             or "no Graphormer algos module: -O graphormer=PATH"})
                continue
            loop_records[method] = emit(_loop_record(method, loop, edge_index, ptr, timed, reference, config, base))
        for rec in [r for r, _ in done.values()] + list(loop_records.values()):
            for name, key in (("scipy loop", "speedup_vs_scipy"), ("graphormer loop", "speedup_vs_graphormer")):
                other = loop_records[name]
                if rec.get("status") == "ok" and other.get("status") == "ok":
                    rec[key] = rec["graphs_per_s"] / other["graphs_per_s"]
    return common.payload(NAME, config, env, records)


def _parts(text):
    """The study's sections (``-O parts=pyg,inputs``; default all); the PyG batch always runs
    (every other section is checked against it)."""
    if text is None:
        return set(PARTS)
    wanted = {p.strip() for p in str(text).split(",") if p.strip()}
    unknown = wanted - set(PARTS)
    if unknown:
        from ...errors import FloydwarpError

        raise FloydwarpError(f"unknown batch study part(s) {', '.join(sorted(unknown))}; choose from "
                             f"{', '.join(PARTS)}")
    return wanted | {"pyg"}


def _batch_record(backend, edge_index, ptr, config, base):
    """floydwarp's batch from the PyG arrays to the padded tensor (device arrays on the GPU),
    with where the time went: ``convert_s`` (GraphBatch.from_pyg: checks, local ids, each
    graph's first edge), ``compute_s`` (the engine's kernels, writing the output included),
    and the process's kernel-mode CPU seconds and page faults over the call (``sys_s``,
    ``page_faults``: first touches of the new arrays)."""
    from ...batch import GraphBatch, solve_batch

    xp = np
    if backend == "gpu":
        import cupy as xp
    ei, pt = xp.asarray(edge_index), xp.asarray(ptr)

    def once():
        usage = _usage()
        t0 = time.perf_counter()
        batch = GraphBatch.from_pyg(ei, ptr=pt)
        t1 = time.perf_counter()
        r = solve_batch(batch, unweighted=True, backend=backend)
        if backend == "gpu":
            xp.cuda.runtime.deviceSynchronize()
        t = time.perf_counter() - t0
        after = _usage()
        return t, r, {"convert_s": t1 - t0, "compute_s": r.compute_time, "sys_s": after[0] - usage[0],
                      "page_faults": after[1] - usage[1]}

    once()                                             # JIT / NVRTC, first allocations
    runs, result = [], None
    for _ in range(config.repeats):
        result = None                                  # the last result's memory is free for the next
        t, result, split = once()
        runs.append((t, split))
    t, split = sorted(runs, key=lambda run: run[0])[len(runs) // 2]
    rec = {**base, "method": "floydwarp batch", "backend": backend, "input": "pyg", "problem": "hops", "status": "ok",
           "timed_graphs": base["graphs"], "time_s": t, "times_s": [run[0] for run in runs], **split,
           "graphs_per_s": base["graphs"] / t, "us_per_graph": t / base["graphs"] * 1e6,
           "relaxations_per_s": base["relaxations"] / t, "kernel_relaxations_per_s": base["relaxations"] /
           split["compute_s"], "padded_n": int(result.dist.shape[1]), "output_bytes": int(result.dist.nbytes),
           "kernel_dtype": result.metadata.get("kernel_dtype"), "matches": True}
    dist = result.to_host().dist
    return rec, dist


def _usage():
    """``(kernel-mode CPU seconds, minor page faults)`` of this process so far (0, 0 where
    the platform has no ``resource`` module)."""
    try:
        import resource
    except ImportError:
        return 0.0, 0
    u = resource.getrusage(resource.RUSAGE_SELF)
    return u.ru_stime, u.ru_minflt


def _loop_record(method, loop, edge_index, ptr, timed, reference, config, base):
    sizes = np.diff(ptr)[:timed]
    loop(edge_index, ptr, min(timed, 10))              # warm-up (Numba, imports)
    times = []
    for _ in range(max(1, min(config.repeats, 3 if timed > 10_000 else config.repeats))):
        t0 = time.perf_counter()
        out = loop(edge_index, ptr, timed)
        times.append(time.perf_counter() - t0)
    t = statistics.median(times)
    relax = float((sizes.astype(np.float64) ** 3).sum())
    matches = _matches(out, reference, timed)
    return {**base, "method": method, "backend": "cpu", "input": "pyg", "status": "ok", "timed_graphs": timed,
            "time_s": t, "times_s": times, "graphs_per_s": timed / t, "us_per_graph": t / timed * 1e6,
            "relaxations_per_s": relax / t, "matches": matches}


def _matches(out, reference, timed) -> bool:
    """Every loop result against the batch's (at most 2,000 graphs, spread over the batch)."""
    step = max(1, timed // 2000)
    for g in range(0, timed, step):
        d = out[g]
        n = d.shape[0]
        if not np.array_equal(_hops(d), reference[g, :n, :n]):
            return False
    return True


def _hops(d):
    """A loop's hop counts as the batch stores them (uint8, 255 unreachable)."""
    d = np.asarray(d, dtype=np.float64)
    return np.where(np.isinf(d) | (d >= 510), 255, d).astype(np.uint8)


def _graph_edges(edge_index, ptr, g):
    """Graph g's edges in its own vertex ids (edges are grouped by graph, sources sorted)."""
    lo, hi = ptr[g], ptr[g + 1]
    a, b = np.searchsorted(edge_index[0], [lo, hi])
    return edge_index[0, a:b] - lo, edge_index[1, a:b] - lo, int(hi - lo)


def _scipy_loop(edge_index, ptr, count):
    import scipy.sparse as sp
    from scipy.sparse.csgraph import floyd_warshall

    out = []
    for g in range(count):
        s, d, n = _graph_edges(edge_index, ptr, g)
        m = sp.csr_matrix((np.ones(s.size), (s, d)), shape=(n, n))
        out.append(floyd_warshall(m, unweighted=True))
    return out


def _graphormer_loop(algos):
    if algos is None:
        return None

    def loop(edge_index, ptr, count):
        out = []
        for g in range(count):
            s, d, n = _graph_edges(edge_index, ptr, g)
            adj = np.zeros((n, n), dtype=bool)
            adj[s, d] = True
            out.append(algos.floyd_warshall(adj)[0])
        return out

    return loop


def _floydwarp_loop(edge_index, ptr, count):
    from ...graph import Graph
    from ...solver import solve

    out = []
    for g in range(count):
        s, d, n = _graph_edges(edge_index, ptr, g)
        r = solve(Graph.from_edges(s, d, n=n), backend="cpu")
        out.append(r.to_dense())
    return out


# ---------------------------------------------------------------- views
def summary_lines(data) -> list[str]:
    lines = []
    recs = common.ok(data.get("records", []))
    for r in recs:
        if r["method"] != "floydwarp batch":
            continue
        form = "" if r.get("input", "pyg") == "pyg" else f" from a {r['input']} ({r['problem']})"
        text = (f"batch/{r['backend']}{form}, B = {r['graphs']:,}: {r['time_s']:.3g} s, {rate_cell(r['graphs_per_s'])} "
                f"graphs/s, {rate_cell(r['relaxations_per_s'])} relax/s")
        for key, name in (("speedup_vs_scipy", "SciPy loop"), ("speedup_vs_graphormer", "Graphormer loop")):
            if r.get(key):
                text += f", {ratio_cell(r[key])} the {name}"
        lines.append(text)
    for r in recs:
        if r.get("library") != "floydwarp":
            continue
        text = f"{r['method']} ({r['backend']}), {r['graphs']} graphs: {seconds_cell(r['time_s'])}"
        for key, name in (("speedup_vs_graphormer", "Graphormer's Cython"), ("speedup_vs_loop", "DGL's loop")):
            if r.get(key):
                text += f", {ratio_cell(r[key])} {name}"
        lines.append(text)
    return lines


def plots(data, out_dir, ceilings=None, prefix=""):
    from .. import plots as P

    recs = common.ok(data.get("records", []))
    if not recs:
        return []
    groups = {}
    for r in recs:
        if r.get("library"):                  # the learn section: one batch, no line to draw
            continue
        form = r.get("input", "pyg")
        label = f"{r['method']} ({r['backend']})" if form == "pyg" else \
            f"{r['method']} ({r['backend']}, {form}{', ' + r['problem'] if r.get('problem') else ''})"
        groups.setdefault(label, []).append(r)
    path = Path(out_dir) / f"{prefix}{NAME}-graphs-per-s.png"
    P.line_plot([{"label": k, "x": [r["graphs"] for r in v], "y": [r["graphs_per_s"] for r in v]}
                 for k, v in groups.items()], path, xlabel="graphs in the batch (B)", ylabel="graphs per second",
                title="Molecule-sized graphs (n = 10..60): graphs per second", xbase=10)
    return [(path.name, "Graphs solved per second vs batch size; loops timed on up to loop_max graphs")]
