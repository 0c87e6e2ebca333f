"""`Plan`: every decision made before a run, handed to the engine."""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np


@dataclass
class Plan:
    n: int
    dtype: np.dtype
    inf: Any
    #: clamp entries at -INF: integer dtype and negative weights (see numeric.py)
    clamp: bool
    backend: str
    algorithm: str
    predecessors: bool = False
    block_size: int | None = None
    threads: int | None = None
    #: called as progress(done, total) in units of the engine's choosing
    progress: Callable[[int, int], None] | None = None
    #: engine-specific options (e.g. ``output="host"`` for the GPU)
    options: dict = field(default_factory=dict)
    #: the graph's weight statistics (numeric.WeightStats), for engines that pick a
    #: narrower arithmetic where the weights allow it (gpu/predecessors/keyed.py)
    stats: Any = None
    #: the dtype holds every shortest path only if no reachable distance comes within the
    #: largest weight of INF, checked after the run (numeric.verify_uncapped)
    verify_after: bool = False
    #: ``dtype="auto"``: an engine may store its distances in a narrower type that holds them
    #: (``numeric.hop_storage``); the result's INF is then that type's
    narrow: bool = False

    def report(self, done, total):
        if self.progress is not None:
            self.progress(done, total)


@dataclass
class EngineOutput:
    """What an engine hands back: the matrices (host or device) and its timings in seconds."""

    dist: Any
    pred: Any = None
    #: "compute" is required; engines may add "h2d", "d2h", "comm", ...
    timings: dict = field(default_factory=dict)
    #: set by engines whose matrix is not on every process (MPI): whether any
    #: diagonal entry went negative, known on every rank; None: read it off ``dist``
    negative_diagonal: bool | None = None
    #: likewise for MPI: whether the predecessors loop (see predecessors.has_loops)
    pred_loops: bool | None = None
    #: the result of numeric.verify_uncapped when the engine ran it where the matrix is cheap
    #: to read (on the device, before the copy back); None: solve() runs it
    uncapped: bool | None = None
    #: engine facts worth keeping with the result (process grid, device name, ...)
    metadata: dict = field(default_factory=dict)


class Stopwatch:
    """Accumulates named wall-clock intervals: ``with sw("compute"): ...``."""

    def __init__(self):
        self.timings: dict[str, float] = {}

    def __call__(self, name):
        return _Interval(self.timings, name)


class _Interval:
    __slots__ = ("timings", "name", "t0")

    def __init__(self, timings, name):
        self.timings, self.name = timings, name

    def __enter__(self):
        self.t0 = time.perf_counter()
        return self

    def __exit__(self, *exc):
        self.timings[self.name] = self.timings.get(self.name, 0.0) + time.perf_counter() - self.t0
        return False
