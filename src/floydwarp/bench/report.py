"""Benchmark output: a text table (printable row by row as records arrive) and JSON."""
from __future__ import annotations

import json
import math
from pathlib import Path

#: (title, width; negative = left-aligned)
COLUMNS = (("n", 7), ("backend/algorithm", -26), ("dtype", -7), ("block", 5), ("time", 9), ("compute", 9),
           ("relax/s", 13), ("vs SciPy", 8), ("GB/s", 6))


def format_seconds(t: float) -> str:
    # the unit changes where three significant digits round up to the next one (0.9996 s is
    # "1 s", not "1e+03 ms")
    if t >= 100:
        return f"{t:.0f} s"
    if t >= 0.9995:
        return f"{t:.3g} s"
    if t >= 0.9995e-3:
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


# ---------------------------------------------------------------- study tables (console and Markdown)
class Column:
    """One column of a study's table: a title and how to show a record's value.

    ``key`` is a record field (or a callable ``record -> value``) and ``fmt`` turns the
    value into text ("" for a missing value).  ``width`` < 0 left-aligns on the console.
    """

    def __init__(self, title: str, key, fmt=None, width: int = 9):
        self.title, self.key, self.fmt, self.width = title, key, fmt or _plain, width

    def cell(self, record: dict) -> str:
        value = self.key(record) if callable(self.key) else record.get(self.key)
        if value is None:
            return ""
        try:
            return self.fmt(value)
        except (TypeError, ValueError):
            return str(value)


def _plain(value) -> str:
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)


def seconds_cell(value) -> str:
    return format_seconds(float(value))


def rate_cell(value) -> str:
    return format_rate(float(value), "").strip()


def bytes_rate_cell(value) -> str:
    return f"{float(value) / 1e9:.1f}"


def percent_cell(value) -> str:
    return f"{100.0 * float(value):.1f}%"


def ratio_cell(value) -> str:
    v = float(value)
    return f"{v:,.0f}x" if v >= 1000 else f"{v:.3g}x"


def label(record: dict) -> str:
    return f"{record.get('backend')}/{record.get('algorithm')}"


def study_header(columns) -> str:
    return _study_line([c.title for c in columns], columns)


def study_row(record: dict, columns) -> str:
    ok = record.get("status", "ok") == "ok"
    cells = [c.cell(record) if ok or c.width < 0 or c.title in ("n",) else "-" for c in columns]
    note = record.get("note", "")
    if not ok:
        note = f"{record.get('status')}: {note}"
    return _study_line(cells, columns) + (f"  {note}" if note else "")


def _study_line(cells, columns) -> str:
    parts = [c.ljust(-col.width) if col.width < 0 else c.rjust(col.width) for c, col in zip(cells, columns)]
    return "  ".join(parts).rstrip()


def markdown_table(records, columns, *, note: bool = True) -> str:
    """A GitHub Markdown table of the records (a "note" column when any record has one)."""
    records = list(records)
    with_note = note and any(r.get("note") or r.get("status", "ok") != "ok" for r in records)
    titles = [c.title for c in columns] + (["note"] if with_note else [])
    lines = ["| " + " | ".join(titles) + " |",
             "|" + "|".join("---:" if c.width > 0 else ":---" for c in columns) + ("|:---|" if with_note else "|")]
    for r in records:
        ok = r.get("status", "ok") == "ok"
        cells = [c.cell(r) if ok or c.width < 0 or c.title == "n" else "-" for c in columns]
        if with_note:
            text = r.get("note", "")
            if not ok:
                text = f"{r.get('status')}: {text}"
            cells.append(text)
        lines.append("| " + " | ".join(_md_escape(c) for c in cells) + " |")
    return "\n".join(lines)


def _md_escape(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


# ---------------------------------------------------------------- CSV
def flatten(record: dict, prefix: str = "") -> dict:
    """One level of keys: nested dicts become ``a.b``, lists become ``;``-joined text."""
    flat = {}
    for key, value in record.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            flat.update(flatten(value, name + "."))
        elif isinstance(value, (list, tuple)):
            flat[name] = ";".join(str(_jsonable(v)) for v in value)
        else:
            flat[name] = _jsonable(value)
    return flat


def write_csv(records, path) -> Path:
    """The records as CSV, one row each, columns in order of first appearance (atomically)."""
    import csv
    import io

    from ..io.atomic import atomic_path

    rows = [flatten(r) for r in records]
    fields = list(dict.fromkeys(k for r in rows for k in r))
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=fields, lineterminator="\n")
    writer.writeheader()
    for r in rows:
        writer.writerow({k: "" if r.get(k) is None else r.get(k) for k in fields})
    path = Path(path)
    with atomic_path(path) as tmp:
        Path(tmp).write_text(buf.getvalue())
    return path
