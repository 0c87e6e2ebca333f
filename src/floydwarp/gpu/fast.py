"""``gpu/fast``, the production algorithm: which variant runs, where the matrix lives, how
predecessors are found.

* distances: the dtype's variant (``tiles.FAST_DEFAULT_VARIANT``; options["fast_variant"]):
  "wide" rounds of panel products (wide.py) for int16/int32/float32, 64/128-tile kernels
  (tiles.py) for the 8-byte types;
* a matrix that does not fit in GPU memory (or ``max_gpu_memory``), or a run that
  checkpoints, streams from host memory instead (ooc.py): the out-of-core schedule keeps
  the matrix on the host at every round boundary, at the in-core rate (bench/NOTES.md:
  100 % at n = 65536 with 4 GB of GPU memory);
* predecessors: keys or witnesses (predecessors/), else the blocked kernels with a
  predecessor beside each cell (seed.py, B = 64).
"""
from __future__ import annotations

from .. import checkpoint
from ..plan import EngineOutput
from ..registry import register
from . import device, incore, ooc, panel, predecessors, seed, tiles, traffic, wide


def tile(plan) -> int:
    """What the matrix is padded to: the variant's tile (64 with predecessors)."""
    if plan.predecessors:
        return 64
    requested = tiles.variant_fits(plan.dtype, plan.options.get("fast_variant"))
    if tiles.fast_variant(plan.dtype, requested) == tiles.WIDE:
        return panel.UNIT
    return tiles.fast_config(plan.dtype, device.current()["smem_optin"], requested)["b"]


def distances(ctx) -> None:
    """``fast`` without predecessors on ``ctx.d`` (also the first half of the witness method)."""
    requested = ctx.plan.options.get("fast_variant")
    if device.current()["cc"] < 80 and requested == "async":
        requested = "tiled"   # cp.async needs sm_80
    requested = tiles.variant_fits(ctx.dtype, requested)
    if tiles.fast_variant(ctx.dtype, requested) == tiles.WIDE:
        wide.run(ctx)
    else:
        tiles.run(ctx, requested)


def compute(ctx) -> None:
    """The kernels of an in-core ``fast`` run, predecessors included where ``ctx.pr`` is set."""
    if ctx.pr is None:
        distances(ctx)
    elif not predecessors.run(ctx, distances):
        ctx.meta["predecessors"] = "blocked"
        seed.run_blocked(ctx)


@register("gpu", "fast", default=True, bytes_moved=traffic.fast_model,
          options={**tiles.OPTIONS, **wide.OPTIONS, **predecessors.OPTIONS, **ooc.OPTIONS},
          description="production kernel: rounds of 2048-3072 pivot columns as min-plus panel products with the "
                      "cells in registers for int16/int32/float32 ('wide'), vectorized blocked FW for 8-byte types "
                      "(or the fast_variant asked for); predecessors ride in "
                      "the distance word ('keyed': int32, non-negative integer float weights, int16 with "
                      "zero or negative weights) or are recovered from the tight edges after the run "
                      "('witness': int16 and fractional floats with positive weights); DPX add-min on sm_90")
def solve(graph, plan) -> EngineOutput:
    """Production kernel: in core where the matrix fits, else out of core."""
    sizing = incore.size(graph, plan, tile(plan))
    if graph.n and not plan.predecessors and (checkpoint.requested(plan)
                                              or sizing.needed > device.budget(plan)):
        return ooc.solve(graph, plan)
    return incore.execute(graph, plan, sizing, compute)

