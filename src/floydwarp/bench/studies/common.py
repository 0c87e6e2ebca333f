"""Pieces every study shares: backends and algorithms to run, guarded timing, payloads."""
from __future__ import annotations

import math
import sys
from dataclasses import asdict
from typing import Callable

import numpy as np

from ...errors import BackendUnavailableError, FloydwarpError

FORMAT = "floydwarp-bench"
VERSION = 1


def warn(message: str) -> None:
    print(f"floydwarp bench: {message}", file=sys.stderr, flush=True)


def environment(config, command):
    from ..environment import environment as env

    return env(command=command, seed=config.seed, detailed=True)


def payload(study: str, config, env: dict, records: list, summary: dict | None = None) -> dict:
    """What a study returns and ``<study>.json`` holds."""
    return {"format": FORMAT, "version": VERSION, "study": study, "environment": env,
            "config": asdict(config), "records": records, "summary": summary or {}}


def emitter(records: list, on_record: Callable | None):
    def emit(record):
        records.append(record)
        if on_record is not None:
            on_record(record)
        return record
    return emit


# ---------------------------------------------------------------- what to run
def usable(name: str) -> bool:
    from ... import registry

    try:
        return registry.unavailable_reason(name) is None
    except FloydwarpError:
        return False


def require(name: str) -> None:
    """Raise a one-line :class:`BackendUnavailableError` when backend ``name`` cannot run here."""
    from ... import registry

    reason = registry.unavailable_reason(name)
    if reason:
        hint = "; use --backend cpu" if name == "gpu" and "cpu" not in reason else ""
        raise BackendUnavailableError(f"backend {name!r} is not available: {reason}{hint}")


def backends_for(config, *, wanted=None, default=None, study="this") -> list[str]:
    """The backends a study runs: ``config.backends`` (each must be usable here and among
    ``wanted``), else ``default``, else every usable backend ``backend="auto"`` may pick."""
    from ..runner import default_backends

    if config.backends:
        names = list(dict.fromkeys(config.backends))
        for name in names:
            if wanted is not None and name not in wanted:
                raise FloydwarpError(f"the {study} study runs on {', '.join(wanted)}, not {name!r}")
            require(name)
        return names
    if default is not None:
        names = [default] if isinstance(default, str) else list(default)
        for name in names:
            require(name)
        return names
    names = [b for b in default_backends() if wanted is None or b in wanted]
    return names or ["cpu"]


def algorithm_names(backend: str, wanted) -> list[str]:
    """Algorithm names of ``backend`` for ``wanted`` ("auto", "all" or names; names the
    backend lacks are left out -- :func:`check_algorithms` refuses names no backend has).
    "all" is every algorithm that solves any graph: the studies' graphs are weighted, which
    the breadth-first algorithms (unit weights only) refuse; name them to include them."""
    from ... import registry

    impls = registry.algorithms(backend)
    out = []
    for w in wanted:
        if w == "all":
            out += [i.algorithm for i in impls if i.accepts is None]
        elif w == "auto":
            out += [i.algorithm for i in impls if i.default]
        else:
            out += [i.algorithm for i in impls if i.algorithm == w]
    return list(dict.fromkeys(out))


def check_algorithms(backends, wanted) -> None:
    from ... import registry

    named = {w for w in wanted if w not in ("auto", "all")}
    have = {i.algorithm for b in backends for i in registry.algorithms(b)}
    missing = sorted(named - have)
    if missing:
        listing = "; ".join(f"{b}: {', '.join(i.algorithm for i in registry.algorithms(b))}" for b in backends)
        raise FloydwarpError(f"no chosen backend has algorithm {', '.join(missing)}; they have {listing}")


def implementation(backend: str, algorithm: str):
    from ... import registry

    return next(i for i in registry.algorithms(backend) if i.algorithm == algorithm)


# ---------------------------------------------------------------- timing
def measure(backend, algorithm, dtype, n, graph, config, *, block_size=None, options=None,
            scipy_record=None, scipy_dist=None, graph_source="erdos-renyi", **extra) -> dict:
    """:func:`..runner.time_case` that never raises: a failure becomes an ``error`` record
    (a long device run keeps going); adds the traffic model for cpu algorithms."""
    from ..runner import Case, base_record, time_case

    case = Case(backend, algorithm, dtype, n, block_size)
    try:
        record = time_case(case, graph, config, scipy_record, scipy_dist, options=options)
    except Exception as exc:  # noqa: BLE001 -- recorded, not raised: see docstring
        record = base_record(graph, config, backend, algorithm, dtype, block_size)
        record.update(status="error", note=f"{type(exc).__name__}: {' '.join(str(exc).split())[:300]}")
        if options:
            record["options"] = dict(options)
    record["graph"] = graph_source
    record.update(extra)
    if record["status"] == "ok" and "bytes_moved" not in record:
        moved = fallback_traffic(backend, algorithm, n, record["dtype"], block_size)
        if moved is not None and record.get("compute_s"):
            record.update(bytes_moved=moved, gb_per_s=moved / record["compute_s"] / 1e9,
                          traffic_model="bench fallback")
    elif record["status"] == "ok":
        record.setdefault("traffic_model", "registered")
    return record


def fallback_traffic(backend, algorithm, n, dtype, block_size):
    """Bytes to memory for the cpu and mpi algorithms, which register no model: blocked
    with B x B tiles moves (4 n^3 / B + 6 n^2) entries, the per-k sweeps (rows, serial) n^3."""
    if backend not in ("cpu", "mpi"):
        return None
    itemsize = np.dtype(dtype).itemsize
    if "blocked" in algorithm:
        if block_size is None:
            block_size = 64
            if backend == "cpu":
                try:
                    from ...cpu.engine import DEFAULT_BLOCK
                    block_size = DEFAULT_BLOCK.get(np.dtype(dtype).name, 64)
                except (ImportError, AttributeError):
                    pass
        b = max(1, min(int(block_size), n))
        return (4.0 * n ** 3 / b + 6.0 * n ** 2) * itemsize
    return 1.0 * n ** 3 * itemsize


def predicted_seconds(previous: dict | None, n: int) -> float | None:
    """One solve's time at n, scaled by n^3 from the same case's last record (None: unknown)."""
    if not previous or previous.get("status") != "ok" or not previous.get("time_s"):
        return None
    return previous["time_s"] * (n / previous["n"]) ** 3


def skipped(graph_n, config, backend, algorithm, dtype, note, **extra) -> dict:
    record = {"n": graph_n, "edges": None, "percent": config.percent, "seed": config.seed, "backend": backend,
              "algorithm": algorithm, "dtype": dtype, "block_size": extra.pop("block_size", None),
              "threads": config.threads, "repeats": config.repeats, "status": "skipped", "note": note}
    record.update(extra)
    return record


def round_to(x: float, multiple: int) -> int:
    return max(multiple, int(round(x / multiple)) * multiple)


def finite(x) -> bool:
    return x is not None and isinstance(x, (int, float)) and math.isfinite(x)


def ok(records):
    return [r for r in records if r.get("status", "ok") == "ok"]


def series_label(record: dict, with_dtype: bool = False) -> str:
    text = f"{record.get('backend')}/{record.get('algorithm')}"
    return f"{text} {record.get('dtype')}" if with_dtype else text
