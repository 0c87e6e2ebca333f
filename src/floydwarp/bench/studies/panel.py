"""``panel``: the two rates the out-of-core GPU engine chooses its panel width from.

* :func:`floydwarp.gpu.panel.minplus` (C = min(C, A + B) on an M x M block with K-wide
  panels; M = ``n``, default 16384, K = M / 4) for each dtype of ``dtypes`` on random
  entries in [0, 1000), median of ``repeats`` after a warm-up, CUDA events: relaxations per
  second (M^2 K / seconds); float32 also with the kernel told its entries are non-negative
  (``panel.Arith(nonneg=True)``);
* the pinned host <-> device copy rates (:func:`floydwarp.gpu.host.pcie_bandwidth`).

Needs CuPy and a CUDA GPU.  Whole checked out-of-core runs: ``bench/checked_run.py``.
"""
from __future__ import annotations

import statistics
from pathlib import Path

import numpy as np

from ..report import Column, rate_cell, seconds_cell
from . import common

NAME = "panel"
TITLE = "Out of core on the GPU: panel products and pinned PCIe copies"
DEFAULT_N = 16384

COLUMNS = [
    Column("what", "what", width=-22),
    Column("M", "m", lambda v: f"{v:,}", 7),
    Column("K", "k", lambda v: f"{v:,}", 6),
    Column("time", "time_s", seconds_cell, 9),
    Column("relax/s", "relaxations_per_s", rate_cell, 9),
    Column("GB/s", "bytes_per_s", lambda v: f"{v / 1e9:.1f}", 7),
]


def columns(records=()):
    return COLUMNS


def time_minplus(dtype, m: int, k: int, repeats: int, nonneg: bool = False) -> dict:
    """One product on random entries in [0, 1000); ``nonneg``: the kernel is told they are >= 0."""
    import cupy as cp

    from ...gpu import panel
    from ...numeric import inf_of

    rng = np.random.default_rng(0)
    c = cp.asarray(rng.integers(0, 1000, size=(m, m)).astype(dtype))
    a = cp.asarray(rng.integers(0, 1000, size=(m, k)).astype(dtype))
    b = cp.asarray(rng.integers(0, 1000, size=(k, m)).astype(dtype))
    at = panel.to_words(a)
    arith = panel.Arith(-inf_of(dtype) if np.dtype(dtype).kind == "i" else -np.inf, nonneg=nonneg)
    panel.minplus(c, at, b, arith)
    cp.cuda.Device().synchronize()
    times = []
    for _ in range(repeats):
        start, end = cp.cuda.Event(), cp.cuda.Event()
        start.record()
        panel.minplus(c, at, b, arith)
        end.record()
        end.synchronize()
        times.append(cp.cuda.get_elapsed_time(start, end) / 1000.0)
    t = statistics.median(times)
    kept = panel.variant(dtype, arith)[1]
    return {"what": f"minplus {np.dtype(dtype).name}{' nonneg' if kept else ''}", "dtype": np.dtype(dtype).name,
            "nonneg": kept, "m": m, "k": k, "time_s": t, "times_s": times, "relaxations_per_s": m * m * k / t}


def run(config, *, command=None, on_record=None) -> dict:
    common.require("gpu")
    import cupy as cp

    from ...gpu import host

    env = common.environment(config, command)
    records = []
    emit = common.emitter(records, on_record)
    m = int(config.n or DEFAULT_N)
    k = max(1, m // 4)
    base = {"repeats": config.repeats, "status": "ok", "note": ""}
    for dtype in config.dtypes:
        emit({**base, **time_minplus(dtype, m, k, config.repeats)})
        if np.dtype(dtype) == np.float32:
            emit({**base, **time_minplus(dtype, m, k, config.repeats, nonneg=True)})
    pcie = host.pcie_bandwidth(cp.cuda.Device().id)
    for way in ("h2d", "d2h"):
        emit({**base, "what": f"pinned PCIe {way}", "bytes_per_s": pcie[way]})
    return common.payload(NAME, config, env, records, {"pcie": pcie})


# ---------------------------------------------------------------- views
def summary_lines(data) -> list[str]:
    lines = []
    for r in common.ok(data.get("records", [])):
        if r.get("relaxations_per_s"):
            lines.append(f"{r['what']}, M = {r['m']:,}, K = {r['k']:,}: {rate_cell(r['relaxations_per_s'])} relax/s")
        elif r.get("bytes_per_s"):
            lines.append(f"{r['what']}: {r['bytes_per_s'] / 1e9:.1f} GB/s")
    return lines


def plots(data, out_dir, ceilings=None, prefix=""):
    from .. import plots as P

    recs = [r for r in common.ok(data.get("records", [])) if r.get("relaxations_per_s")]
    if not recs:
        return []
    path = Path(out_dir) / f"{prefix}{NAME}-minplus.png"
    P.bar_chart([(r["what"], r["relaxations_per_s"]) for r in recs], path, ylabel="relaxations per second",
                title=f"Panel products, M = {recs[0]['m']:,}, K = {recs[0]['k']:,}")
    return [(path.name, "Relaxations per second of the panel product, per dtype")]
