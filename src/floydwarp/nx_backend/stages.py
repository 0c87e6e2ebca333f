"""Where the time of a backend call goes, stage by stage.

* ``convert``: reading the NetworkX graph's edges into arrays (none when a cached read is
  reused) and building floydwarp's graph of them;
* ``solve``: :func:`floydwarp.solve`, whose own stages are kept as ``solve.<stage>``
  (``solve.compute`` the kernels, ``solve.d2h`` a copy to the host, ...);
* ``reduce``: the metrics on the solver's device, and the n values coming back;
* ``build``: NetworkX's return value as Python objects (dicts of n or n^2 entries).

``with recording() as seconds: nx.closeness_centrality(G, backend="floydwarp")`` fills
``seconds`` (``floydwarp bench networkx`` records it); outside ``recording()`` a stage
costs one context-variable lookup.
"""
from __future__ import annotations

import contextvars
import time
from contextlib import contextmanager

_seconds: contextvars.ContextVar[dict | None] = contextvars.ContextVar("floydwarp_nx_stages", default=None)


@contextmanager
def recording():
    """Collect the seconds of every stage run inside the block (summed over repeats)."""
    seconds: dict = {}
    token = _seconds.set(seconds)
    try:
        yield seconds
    finally:
        _seconds.reset(token)


@contextmanager
def stage(name: str):
    seconds = _seconds.get()
    if seconds is None:
        yield
        return
    start = time.perf_counter()
    try:
        yield
    finally:
        seconds[name] = seconds.get(name, 0.0) + time.perf_counter() - start


def solver_timings(timings: dict) -> None:
    """Record :attr:`floydwarp.Result.timings` as ``solve.<stage>``."""
    seconds = _seconds.get()
    if seconds is not None:
        for name, value in timings.items():
            seconds[f"solve.{name}"] = seconds.get(f"solve.{name}", 0.0) + value
