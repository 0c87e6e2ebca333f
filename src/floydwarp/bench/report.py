"""Benchmark output: a text table (printable row by row as records arrive) and JSON."""
from __future__ import annotations

import json
import math
from pathlib import Path

#: (title, width; negative = left-aligned)
COLUMNS = (("n", 7), ("backend/algorithm", -26), ("dtype", -7), ("block", 5), ("time", 9), ("compute", 9),
           ("relax/s", 13), ("vs SciPy", 8), ("GB/s", 6))


def format_seconds(t: float) -> str:
    if t >= 100:
        return f"{t:.0f} s"
    if t >= 1:
        return f"{t:.3g} s"
    if t >= 1e-3:
        return f"{t * 1e3:.3g} ms"
    return f"{t * 1e6:.3g} us"


def format_rate(rate: float, unit: str = "relax/s") -> str:
    if rate is None or not math.isfinite(rate):
        return "n/a"
    for scale, prefix in ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if rate >= scale:
            return f"{rate / scale:.3g} {prefix} {unit}"
    return f"{rate:.3g} {unit}"


def _line(cells) -> str:
    parts = [c.ljust(-w) if w < 0 else c.rjust(w) for c, (_, w) in zip(cells, COLUMNS)]
    return "  ".join(parts + list(cells[len(COLUMNS):])).rstrip()


def header() -> str:
    return _line([title for title, _ in COLUMNS] + ["note"])


def row(record: dict) -> str:
    ok = record.get("status") == "ok"
    speedup = record.get("speedup_vs_scipy")
    gbps = record.get("gb_per_s")
    note = record.get("note", "")
    if not ok:
        note = f"{record.get('status')}: {note}"
    return _line([
        f"{record['n']:,}",
        f"{record['backend']}/{record['algorithm']}",
        record["dtype"],
        "" if record.get("block_size") is None else str(record["block_size"]),
        format_seconds(record["time_s"]) if ok else "-",
        format_seconds(record["compute_s"]) if ok else "-",
        format_rate(record["relaxations_per_s"], "").strip() if ok else "-",
        f"{speedup:.3g}x" if speedup is not None else "",
        f"{gbps:.1f}" if gbps is not None else "",
        note,
    ])


def table(records) -> str:
    return "\n".join([header(), *(row(r) for r in records)])


def describe_environment(env: dict) -> str:
    """One line about the machine, for the top of a printed table."""
    gpus = ", ".join(g["name"] for g in env.get("gpus") or []) or env.get("gpu_note") or "no GPU"
    threads = f", numba {env['numba']} ({env['numba_threads']} threads)" if env.get("numba") else ""
    return (f"{env['cpu']} ({env['cpus_usable']} of {env['cpu_count']} cores){threads}; {gpus}; "
            f"python {env['python']}, numpy {env['numpy']}, scipy {env['scipy']}")


def write_json(data: dict, path) -> Path:
    """Write a benchmark's records atomically (non-finite numbers become null)."""
    from ..io.atomic import atomic_path

    path = Path(path)
    text = json.dumps(_jsonable(data), indent=2, allow_nan=False) + "\n"
    with atomic_path(path) as tmp:
        Path(tmp).write_text(text)
    return path


def _jsonable(value):
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if hasattr(value, "item") and not isinstance(value, (str, bytes)):      # NumPy scalars
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value
