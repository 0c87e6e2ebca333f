"""The process's time before the solve: the ``before:`` line of ``floydwarp solve``.

``stages:`` splits the call; this splits what came before it, as consecutive intervals of the
main thread: ``start`` (from the process's start -- the interpreter, the imports, Click's
parsing -- to the command's first line), then what the command did before the call (reading
or generating the graph, waiting for the GPU's start).  The process's start comes from Linux's
``/proc/self/stat`` (10 ms ticks); elsewhere ``start`` counts from this module's import.
"""
from __future__ import annotations

import os
import time

_IMPORTED = time.perf_counter()


def process_age() -> float | None:
    """Seconds since this process started (Linux), else None."""
    try:
        with open("/proc/self/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        started = int(fields[19]) / os.sysconf("SC_CLK_TCK")      # field 22: starttime, in ticks since boot
        return max(0.0, time.clock_gettime(time.CLOCK_BOOTTIME) - started)
    except (OSError, ValueError, IndexError, AttributeError):
        return None


class Before:
    """Consecutive intervals from the process's start: :meth:`mark` closes the one running."""

    def __init__(self):
        now = time.perf_counter()
        age = process_age()
        self._last = now
        self.intervals = [("start", age if age is not None else now - _IMPORTED, "interpreter, imports, options")]

    def mark(self, name: str, note: str = "") -> float:
        """Close the interval that ran since the last mark as ``name``; its seconds."""
        now = time.perf_counter()
        seconds, self._last = now - self._last, now
        self.intervals.append((name, seconds, note))
        return seconds

    def line(self, format_seconds) -> str:
        """``start 0.31 s (interpreter, imports, options), generate 22 ms (on the GPU), ...``."""
        return ", ".join(f"{name} {format_seconds(s)}" + (f" ({note})" if note else "")
                         for name, s, note in self.intervals)
