"""The batch engines' registry and the plan each one is handed.

Like :mod:`floydwarp.registry`: an engine module registers itself when imported, and
is imported only when first asked for (importing floydwarp imports neither Numba nor
CuPy).  ``backend="auto"`` runs a batch where its arrays already live.
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from ..errors import BackendUnavailableError, FloydwarpError

#: engine name -> the module that registers it
ENGINE_MODULES = {
    "cpu": "floydwarp.batch.cpu",
    "gpu": "floydwarp.batch.gpu",
}
#: ``backend="auto"``: where the batch's arrays live -> the engine that runs it there
AUTO = {False: "cpu", True: "gpu"}


@dataclass(frozen=True)
class Engine:
    name: str
    #: ``run(batch, plan) -> BatchOutput``
    run: Callable
    #: None when usable here, else the reason
    probe: Callable[[], str | None]
    description: str = ""


@dataclass
class BatchPlan:
    """Every decision made before a batch runs."""

    #: arithmetic dtype and its INF (numeric.py); ``clamp``: keep entries >= -INF
    dtype: np.dtype
    inf: Any
    clamp: bool
    #: stored dtype (the arithmetic one, or a narrower storage dtype) and its INF
    out_dtype: np.dtype
    out_inf: Any
    #: arithmetic entries at or above this are unreachable (numeric.unreachable_threshold)
    threshold: Any
    #: padded size N of the (B, N, N) output
    size: int
    predecessors: bool = False
    #: every edge weighs 1 (hop counts)
    unweighted: bool = False
    #: reachable distances above this are stored as it (None: no clip)
    max_distance: Any = None
    #: the batch's weight bounds (numeric.WeightStats, one for every member): an engine may
    #: add in a narrower dtype that provably holds them (None: unknown)
    stats: Any = None
    progress: Callable[[int, int], None] | None = None
    options: dict = field(default_factory=dict)

    @property
    def clip(self):
        """``max_distance`` where it cuts a reachable distance, else None: at or above the
        threshold it cuts nothing, and it may not fit the arithmetic dtype (1e30 in int16)."""
        cuts = self.max_distance is not None and self.max_distance < self.threshold
        return self.max_distance if cuts else None

    def report(self, done, total):
        if self.progress is not None:
            self.progress(done, total)


@dataclass
class BatchOutput:
    #: (B, N, N) distances in ``plan.out_dtype``, unreachable entries and padding at ``out_inf``
    dist: Any
    #: (B, N, N) int32 predecessors or None
    pred: Any
    #: (B,) bool: the graph's diagonal went negative (a negative cycle)
    negative: Any
    timings: dict = field(default_factory=dict)
    metadata: dict = field(default_factory=dict)


_ENGINES: dict[str, Engine] = {}


def register(name, run, *, probe=lambda: None, description=""):
    _ENGINES[name] = Engine(name, run, probe, description)


def engine(name) -> Engine:
    """The engine called ``name`` (importing its module on first use)."""
    if name not in ENGINE_MODULES:
        raise FloydwarpError(f"unknown batch backend {name!r}; choose one of {', '.join(['auto', *ENGINE_MODULES])}")
    if name not in _ENGINES:
        try:
            importlib.import_module(ENGINE_MODULES[name])
        except ImportError as exc:
            reason = f"cannot import {ENGINE_MODULES[name]} ({exc})"
            register(name, None, probe=lambda: reason)
    return _ENGINES[name]


def resolve(name, on_device: bool) -> Engine:
    """The usable engine for ``name`` ("auto": where the batch lives; the CPU when the GPU cannot run)."""
    if name == "auto":
        name = AUTO[on_device]
        if engine(name).probe() is not None:
            name = AUTO[False]
    found = engine(name)
    reason = found.probe()
    if reason:
        raise BackendUnavailableError(f"batch backend {name!r} is not available: {reason}")
    return found


def store(plan: BatchPlan, dist):
    """Distances in the arithmetic dtype (a whole graph, unreachable at INF or above the
    threshold) as the kernels store them: unreachable -> ``out_inf``, clipped, cast."""
    from ..arrays import array_module

    xp = array_module(dist)
    reachable = dist < plan.threshold
    values = dist if plan.clip is None else xp.minimum(dist, plan.clip)
    out = xp.where(reachable, values, 0).astype(plan.out_dtype)
    xp.copyto(out, plan.out_dtype.type(plan.out_inf), where=~reachable)
    return out
