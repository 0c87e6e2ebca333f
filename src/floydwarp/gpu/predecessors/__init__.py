"""How ``fast`` computes predecessors: through keys (``keyed.py``), recovered after the
distance run (``witness.py``), else the blocked kernels with a predecessor beside each
cell (``seed.run_blocked``, chosen by ``fast.py`` when :func:`run` finds no method).
"""
from __future__ import annotations

import functools

import numpy as np

from ...errors import FloydwarpError
from .. import device, start, tiles
from . import keyed, witness

#: how ``fast`` computes predecessors (options["predecessor_method"]; by default the
#: ones that apply, fastest first, then "blocked")
METHODS = ("keyed", "witness", "blocked")
#: the solve option of fast's predecessors (fast.py declares it)
OPTIONS = {
    "predecessor_method": f"how fast computes predecessors: {', '.join(repr(m) for m in METHODS)} (default: the "
                          "ones that apply, fastest first)",
}


def attempts(ctx, distances):
    """``[(name, attempt)]`` to try in order; ``attempt()`` is False, with the start
    matrix in ``ctx.d``, where the method gave up.  Keys run at int32's rate, so they go
    first unless the dtype itself is faster (witness.KEYS_SLOWER).  ``distances(ctx)``
    is ``fast`` without predecessors (the witness method's first half)."""
    plan = ctx.plan
    requested = plan.options.get("predecessor_method")
    if requested not in (None, *METHODS):
        raise FloydwarpError(f"predecessor_method={requested!r} is not one of {', '.join(METHODS)}")
    if requested:
        order = [requested]
    elif ctx.dtype.name in witness.KEYS_SLOWER:
        order = ["witness", "keyed"]
    else:
        order = ["keyed", "witness"]
    wide_fits = tiles.variant_fits(np.int32, tiles.WIDE) == tiles.WIDE
    kp = keyed.plan_keys(plan, ctx.n) if "keyed" in order and wide_fits else None
    wp = None
    if "witness" in order and witness.shape(ctx.dtype, ctx.n).smem <= device.current()["smem_optin"]:
        keys_next = kp is not None and "keyed" in order[order.index("witness"):]
        wp = witness.plan_witness(plan, ctx.n, keys_next)
    methods = {}
    if kp is not None:
        methods["keyed"] = functools.partial(keyed.run, ctx, kp)
    if wp is not None:
        methods["witness"] = functools.partial(witness.run, ctx, wp, distances)
    return [(name, methods[name]) for name in order if name in methods]


def run(ctx, distances) -> bool:
    """Distances and predecessors of ``ctx`` by the first method that works (its name in
    ``ctx.meta["predecessors"]``); False, with the start matrix and its predecessors in
    ``ctx.d`` and ``ctx.pr``, where none did."""
    for name, attempt in attempts(ctx, distances):
        if attempt():
            ctx.meta["predecessors"] = name
            ctx.loop_free = name == "witness"
            return True
        # the method gave up; it may have written predecessors (witness.run)
        start.seed_predecessors(ctx.d, ctx.pr, ctx.n, ctx.plan.inf)
    return False
