"""``small``: what one call costs on a small graph, floydwarp's calls against SciPy's.

The README's small-graph table.  For each n of ``sizes`` (default 1, 2, 4, ..., 64) one
random graph (``percent`` of the pairs, weights 1..16, 0 for no edge; ``seed``) is passed
``CALLS`` times to each call of ``CALLS_PER_N``: SciPy's ``floyd_warshall`` and
``fw.floyd_warshall`` on the dense matrix, ``fw.solve`` on it with ``inf`` for no edge,
the same three on a SciPy CSR matrix, and the graph as edge arrays
(``fw.solve(fw.Graph.from_edges(...))`` against SciPy on the CSR matrix built from the same
edges).  Each number is the best of ``repeats`` passes, in microseconds a call.  Then a mix
(``MIXED`` graphs of 10..40 vertices, one call each) through the dense and CSR calls: the
record with ``n_range``.  Every call runs once before it is timed (kernels compiled or
loaded off the clock).
"""
from __future__ import annotations

import time
from pathlib import Path

import numpy as np

from ..report import Column, ratio_cell
from . import common

NAME = "small"
TITLE = "Small graphs: microseconds a call, floydwarp against SciPy"
DEFAULT_SIZES = (1, 2, 4, 8, 12, 16, 20, 24, 32, 40, 48, 64)
#: calls a timed pass makes per n
CALLS = 500
#: the mix: graphs and their sizes
MIXED = 2000
MIXED_SIZES = (10, 40)
#: record key -> what it times (the columns, plots and summary use these names)
CALLS_PER_N = ("scipy_us", "floyd_warshall_us", "solve_us", "scipy_sparse_us", "floyd_warshall_sparse_us",
               "solve_sparse_us", "scipy_edges_us", "solve_edges_us")
LABELS = {"scipy_us": "SciPy floyd_warshall", "floyd_warshall_us": "fw.floyd_warshall", "solve_us": "fw.solve",
          "scipy_sparse_us": "SciPy, CSR", "floyd_warshall_sparse_us": "fw.floyd_warshall, CSR",
          "solve_sparse_us": "fw.solve, CSR", "scipy_edges_us": "SciPy, edges -> CSR",
          "solve_edges_us": "fw.solve(Graph.from_edges)"}


def _us(value):
    return "-" if value is None else f"{value:.1f}"


COLUMNS = [
    Column("n", lambda r: r.get("n_range") or r["n"], width=7),
    Column("graphs", "graphs", width=6),
    *[Column(title, key, _us, 11) for title, key in (
        ("SciPy us", "scipy_us"), ("fw.fw us", "floyd_warshall_us"), ("solve us", "solve_us"),
        ("SciPy CSR", "scipy_sparse_us"), ("fw.fw CSR", "floyd_warshall_sparse_us"),
        ("solve CSR", "solve_sparse_us"), ("from_edges", "solve_edges_us"))],
    Column("vs SciPy", "speedup", ratio_cell, 8),
]


def columns(records=()):
    return COLUMNS


def random_weights(rng, n: int, percent: float) -> np.ndarray:
    """A float64 matrix: weights 1..16 on ``percent`` of the pairs, 0 elsewhere (SciPy's "no edge")."""
    w = rng.integers(1, 17, (n, n)).astype(np.float64)
    w[rng.random((n, n)) >= percent / 100.0] = 0
    return w


def best_per_call(fn, inputs, repeats: int) -> float:
    """Microseconds a call: the best of ``repeats`` passes over ``inputs``."""
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        for a in inputs:
            fn(a)
        best = min(best, (time.perf_counter() - t0) / len(inputs))
    return 1e6 * best


def _calls(n: int):
    """key -> (function, what it is given) for one n; the inputs are made by :func:`_inputs`."""
    import scipy.sparse as sp
    import scipy.sparse.csgraph as csg

    import floydwarp as fw

    def scipy_edges(e):
        return csg.floyd_warshall(sp.csr_matrix((e[2], (e[0], e[1])), shape=(n, n)))

    def solve_edges(e):
        return fw.solve(fw.Graph.from_edges(*e, n=n))

    return {"scipy_us": (csg.floyd_warshall, "dense"), "floyd_warshall_us": (fw.floyd_warshall, "dense"),
            "solve_us": (fw.solve, "inf"), "scipy_sparse_us": (csg.floyd_warshall, "csr"),
            "floyd_warshall_sparse_us": (fw.floyd_warshall, "csr"), "solve_sparse_us": (fw.solve, "csr"),
            "scipy_edges_us": (scipy_edges, "edges"), "solve_edges_us": (solve_edges, "edges")}


def _inputs(w: np.ndarray) -> dict:
    import scipy.sparse as sp

    return {"dense": w, "inf": np.where(w == 0, np.inf, w), "csr": sp.csr_matrix(w),
            "edges": (*np.nonzero(w), w[w != 0])}


def run(config, *, command=None, on_record=None) -> dict:
    env = common.environment(config, command)
    records = []
    emit = common.emitter(records, on_record)
    rng = np.random.default_rng(config.seed)
    base = {"percent": config.percent, "seed": config.seed, "repeats": config.repeats, "status": "ok", "note": ""}
    for n in config.sizes:
        given = _inputs(random_weights(rng, int(n), config.percent))
        rec = {"n": int(n), "graphs": 1, "calls": CALLS, **base}
        for key, (fn, kind) in _calls(int(n)).items():
            fn(given[kind])                                  # compiled or loaded off the clock
            rec[key] = best_per_call(fn, [given[kind]] * CALLS, config.repeats)
        emit(_with_speedup(rec))
    lo, hi = MIXED_SIZES
    mix = [_inputs(random_weights(rng, int(rng.integers(lo, hi + 1)), config.percent)) for _ in range(MIXED)]
    rec = {"n": hi, "n_range": f"{lo}-{hi}", "graphs": MIXED, "calls": MIXED, **base}
    for key, (fn, kind) in _calls(0).items():
        if kind == "edges":
            continue                                         # the edges calls need one n: per-n records only
        fn(mix[0][kind])
        rec[key] = best_per_call(fn, [g[kind] for g in mix], config.repeats)
    emit(_with_speedup(rec))
    return common.payload(NAME, config, env, records)


def _with_speedup(rec: dict) -> dict:
    rec["speedup"] = rec["scipy_us"] / rec["floyd_warshall_us"] if rec.get("floyd_warshall_us") else None
    return rec


# ---------------------------------------------------------------- views
def summary_lines(data) -> list[str]:
    lines = []
    for r in common.ok(data.get("records", [])):
        what = f"{r['graphs']:,} graphs of n = {r['n_range']}" if r.get("n_range") else f"n = {r['n']}"
        lines.append(f"{what}: fw.floyd_warshall {_us(r.get('floyd_warshall_us'))} us, fw.solve "
                     f"{_us(r.get('solve_us'))} us, SciPy {_us(r.get('scipy_us'))} us a call "
                     f"({ratio_cell(r.get('speedup'))} SciPy's speed)")
    return lines


def plots(data, out_dir, ceilings=None, prefix=""):
    from .. import plots as P

    recs = [r for r in common.ok(data.get("records", [])) if not r.get("n_range")]
    if not recs:
        return []
    series = [{"label": LABELS[key], "x": [r["n"] for r in recs], "y": [r[key] for r in recs],
               "style": "--" if key.startswith("scipy") else "-"}
              for key in CALLS_PER_N if all(r.get(key) for r in recs)]
    path = Path(out_dir) / f"{prefix}{NAME}-per-call.png"
    P.line_plot(series, path, xlabel="n (vertices)", ylabel="microseconds a call (best pass)",
                title="Small graphs: one call, floydwarp and SciPy")
    return [(path.name, "Microseconds a call on one small graph (SciPy dashed)")]
