"""The round timeline of one GPU's share of a multi-GPU run: what each of its streams did
when (CUDA events around every operation), and when the host enqueued it.

``Gpu2D`` records one span per operation and round when the plan asks for it
(``timeline=True``); :func:`summarize` turns a rank's spans into the figures that say where
a run's time went -- each stream's busy time, the main stream's idle gaps (waiting for
panels), the time inside NCCL, and the host's launch time -- and the scaling study draws
the spans as a Gantt chart.  The summary is plain arithmetic on numbers, tested on the CPU.
"""
from __future__ import annotations

import contextlib
import time

#: the columns of a span row
COLUMNS = ("round", "op", "stream", "start_ms", "end_ms", "host_start_ms", "host_end_ms")
#: operations that are NCCL broadcasts (their time includes waiting for the peers)
NCCL_OPS = ("bcast_pivot", "bcast_panels")


class Timeline:
    """Spans of one GPU's operations, as CUDA events on their streams (read after the run)."""

    def __init__(self, cp):
        self.cp = cp
        self.zero = None
        self.host_zero = 0.0
        self.spans = []

    def start(self, stream) -> None:
        """Time zero: now, on ``stream`` (the main one) and on the host."""
        self.zero = self.cp.cuda.Event()
        self.zero.record(stream)
        self.host_zero = time.perf_counter()

    @contextlib.contextmanager
    def span(self, t: int, op: str, stream, name: str):
        """Time what the body enqueues on ``stream`` as operation ``op`` of round ``t``."""
        h0 = time.perf_counter()
        a = self.cp.cuda.Event()
        a.record(stream)
        yield
        b = self.cp.cuda.Event()
        b.record(stream)
        self.spans.append((t, op, name, a, b, h0, time.perf_counter()))

    def rows(self) -> list[list]:
        """Every span as a row of :data:`COLUMNS`, milliseconds from time zero (the run must
        have finished: the events are read)."""
        if self.zero is None:
            return []
        get = self.cp.cuda.get_elapsed_time
        ms = 1000.0
        return [[t, op, name, round(get(self.zero, a), 4), round(get(self.zero, b), 4),
                 round((h0 - self.host_zero) * ms, 4), round((h1 - self.host_zero) * ms, 4)]
                for t, op, name, a, b, h0, h1 in self.spans]


def _union(intervals) -> float:
    """Total length covered by (start, end) intervals."""
    total, end = 0.0, None
    for a, b in sorted(intervals):
        if end is None or a > end:
            total += b - a
            end = b
        elif b > end:
            total += b - end
            end = b
    return total


def summarize(rows) -> dict:
    """Where one rank's rounds went, in milliseconds, from its span rows:

    ``span``: first start to last end; ``busy``/``idle`` per stream (idle: the span less the
    stream's busy time -- on the main stream, waiting for panels or for the host); ``ops``:
    each operation's total; ``nccl``: time inside broadcasts; ``host``: the host's time in
    enqueueing calls; ``main_waits``: the main stream's gaps before each round's products
    (their sum and the largest)."""
    if not rows:
        return {"span": 0.0, "busy": {}, "idle": {}, "ops": {}, "nccl": 0.0, "host": 0.0,
                "main_waits": {"total": 0.0, "max": 0.0, "count": 0}}
    recs = [dict(zip(COLUMNS, r)) for r in rows]
    first = min(r["start_ms"] for r in recs)
    span = max(r["end_ms"] for r in recs) - first
    streams = sorted({r["stream"] for r in recs})
    busy = {s: _union((r["start_ms"], r["end_ms"]) for r in recs if r["stream"] == s) for s in streams}
    ops = {}
    for r in recs:
        ops[r["op"]] = ops.get(r["op"], 0.0) + r["end_ms"] - r["start_ms"]
    main = sorted(((r["start_ms"], r["end_ms"]) for r in recs if r["stream"] == "main"))
    gaps = [b[0] - a[1] for a, b in zip(main, main[1:]) if b[0] > a[1]]
    return {"span": span, "busy": busy, "idle": {s: span - b for s, b in busy.items()}, "ops": ops,
            "nccl": sum(v for k, v in ops.items() if k in NCCL_OPS),
            "host": _union((r["host_start_ms"], r["host_end_ms"]) for r in recs),
            "main_waits": {"total": sum(gaps), "max": max(gaps, default=0.0), "count": len(gaps)}}
