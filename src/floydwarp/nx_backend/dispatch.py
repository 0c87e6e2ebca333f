"""Which NetworkX functions the backend implements, and when it hands a call back.

Every implementation registers itself with :func:`implements`, naming up to two rules that
read the call's arguments (bound to the function's signature, defaults filled in, the
graph unwrapped):

* ``cannot``: floydwarp cannot give NetworkX's answer (``can_run`` is False);
* ``slower``: it can, but NetworkX answers faster (``should_run`` is False).

A rule returns the reason as a sentence, or None.  NetworkX's dispatcher logs the reason
and runs its own implementation.  The rules that hold for every function (a matrix over
the memory budget, tiny graphs) are here.
"""
from __future__ import annotations

import inspect

from ..options import refused
from .graph import nx_graph

#: NetworkX dispatch name -> implementation
IMPLEMENTATIONS: dict = {}
_RULES: dict = {}
#: Below this many nodes NetworkX's searches finish before floydwarp has built its matrix
#: (measured, closeness_centrality and average_shortest_path_length on gnm graphs, 2-core
#: Xeon: floydwarp about 0.3 ms a call whatever the size up to n = 64; NetworkX 0.27 ms at
#: n = 32, 0.95 ms at n = 64).
SMALL_N = 48
#: Share of the available memory the n x n matrices (distances, a host copy) may take.
MEMORY_SHARE = 0.5


def implements(*, cannot=None, slower=None):
    """Register a function under its own name (the NetworkX dispatch name)."""
    def register(func):
        IMPLEMENTATIONS[func.__name__] = func
        _RULES[func.__name__] = (cannot, slower)
        return func
    return register


def _bound(name, args, kwargs):
    """The call's arguments by parameter name (defaults filled in), or a reason it cannot bind.

    A keyword the function does not take raises :class:`~floydwarp.errors.OptionError` (a
    TypeError listing those it takes), as ``solve`` does, rather than handing the call to
    NetworkX, whose own function would refuse it too."""
    func = IMPLEMENTATIONS[name]
    signature = inspect.signature(func)
    unknown = [key for key in kwargs if key not in signature.parameters]
    if unknown:
        raise refused(func, unknown)
    try:
        bound = signature.bind(*args, **kwargs)
    except TypeError as exc:
        return None, f"the arguments do not match {name}'s signature ({exc})"
    bound.apply_defaults()
    arguments = dict(bound.arguments)
    arguments["G"] = nx_graph(arguments["G"])
    return arguments, None


def _memory_reason(n: int) -> str | None:
    from ..cpu.storage import available_memory

    free = available_memory()
    needed = 2 * 8 * n * n           # float64 distances and a host copy: the widest case
    if free is not None and needed > MEMORY_SHARE * free:
        return (f"the {n:,} x {n:,} distance matrices need up to {needed / 1e9:.1f} GB, more than "
                f"{MEMORY_SHARE:.0%} of the {free / 1e9:.1f} GB available")
    return None


def can_run(name, args, kwargs):
    """True, or why floydwarp cannot give NetworkX's answer to this call."""
    if name not in IMPLEMENTATIONS:
        return False
    arguments, reason = _bound(name, args, kwargs)
    if reason:
        return reason
    reason = _memory_reason(len(arguments["G"]))
    if reason:
        return reason
    cannot = _RULES[name][0]
    return (cannot(arguments) if cannot else None) or True


def should_run(name, args, kwargs):
    """True, or why NetworkX answers this call faster."""
    arguments, reason = _bound(name, args, kwargs)
    if reason:
        return reason
    n = len(arguments["G"])
    if n < SMALL_N:
        return f"{n} nodes: NetworkX answers a graph this small before floydwarp has built its matrix"
    slower = _RULES[name][1]
    return (slower(arguments) if slower else None) or True
