"""The seed kernels of the ``gpu`` backend (``kernels/simple.cu`` and ``kernels/blocked.cu``).

Per-k algorithms (one launch or one persistent kernel per k, in the textbook order):
``sequential``, ``naive``, ``naive-shared-k``, ``naive-vec``, ``pseudo-blocked``,
``work-per-thread`` and ``grid-sync``.  Blocked ones (``blocked``, ``blocked-vec``): the
3-phase schedule (floydwarp.schedule) with one kernel launch per phase
(:class:`~floydwarp.gpu.incore.KernelRounds`); ``fast`` falls back to ``blocked``'s
kernels for predecessors no other method can give.
"""
from __future__ import annotations

import functools

import numpy as np

from ..errors import FloydwarpError
from . import device, modules, traffic
from .incore import KernelRounds, Launch, algorithm, cdiv

#: the dtypes every kernel here takes
ALL_DTYPES = ("int16", "int32", "int64", "float32", "float64")


# ---------------------------------------------------------------------- simple.cu
def simple_group(dtype):
    t = dtype
    return tuple([modules.name_expression(k, t) for k in
                  ("fw_sequential", "fw_naive", "fw_naive_shared", "fw_naive_vec", "fw_work")]
                 + [modules.name_expression("fw_pseudo", t, r) for r in (1, 2, 4, 8)])


def _simple(ctx, name, *targs):
    expr = modules.name_expression(name, ctx.dtype, *targs)
    return modules.kernel("simple.cu", expr, simple_group(ctx.dtype))


def _per_k(ctx, kern, grid, block, extra=()):
    n = ctx.n
    clamp = np.int32(ctx.clamp)
    for k in range(n):
        kern(grid, block, (ctx.d, ctx.p, ctx.prp, ctx.pp, np.int32(n), np.int32(k), *extra, ctx.ninf, clamp))
        if (k & 63) == 63:
            ctx.report(k + 1, n)
    ctx.report(n, n)


@algorithm("sequential", k_order=True, max_n=512, bytes_moved=traffic.per_k_sweep,
           description="one GPU thread runs the triple loop (seed 003's first GPU version)")
def sequential(ctx):
    """One GPU thread runs the triple loop."""
    kern = _simple(ctx, "fw_sequential")
    kern((1,), (1,), (ctx.d, ctx.p, ctx.prp, ctx.pp, np.int32(ctx.n), ctx.ninf, np.int32(ctx.clamp)))
    ctx.report(ctx.n, ctx.n)


@algorithm("naive", k_order=True, bytes_moved=traffic.per_k_sweep,
           description="one thread per cell, one launch per k, global memory only (seeds 000, 002, 004)")
def naive(ctx):
    """One thread per cell, one launch per k."""
    n = ctx.n
    _per_k(ctx, _simple(ctx, "fw_naive"), (cdiv(n, 32), cdiv(n, 8)), (32, 8))


@algorithm("naive-shared-k", k_order=True, bytes_moved=traffic.per_k_sweep,
           description="one thread per cell; M[i,k] and M[k,j] staged per block in shared memory (seed 002)")
def naive_shared_k(ctx):
    """One thread per cell, column and row k staged in shared memory."""
    n = ctx.n
    _per_k(ctx, _simple(ctx, "fw_naive_shared"), (cdiv(n, 32), cdiv(n, 8)), (32, 8))


@algorithm("naive-vec", k_order=True, bytes_moved=traffic.per_k_sweep,
           description="one thread per 16-byte vector of cells; M[i,k] picked from a vector (seed 000)")
def naive_vec(ctx):
    """One thread per 16-byte vector."""
    n = ctx.n
    v = 16 // ctx.dtype.itemsize
    _per_k(ctx, _simple(ctx, "fw_naive_vec"), (cdiv(cdiv(n, v), 32), cdiv(n, 8)), (32, 8))


PSEUDO_R = (1, 2, 4, 8)


def _pseudo_r(plan) -> int:
    r = int(plan.options.get("R", 4))
    if r not in PSEUDO_R:
        raise FloydwarpError(f"pseudo-blocked: R must be one of {PSEUDO_R}, got {r}")
    return r


@algorithm("pseudo-blocked", k_order=True, bytes_moved=traffic.per_k_sweep,
           options={"R": f"each thread updates an R x R group of cells: one of {PSEUDO_R} (default 4)"},
           description="each thread updates an R x R group of cells (seed 000)")
def pseudo_blocked(ctx):
    """Each thread updates R x R cells."""
    n = ctx.n
    r = _pseudo_r(ctx.plan)
    _per_k(ctx, _simple(ctx, "fw_pseudo", r), (cdiv(n, 32 * r), cdiv(n, 8 * r)), (32, 8))


@algorithm("work-per-thread", k_order=True, bytes_moved=traffic.per_k_sweep,
           options={"threads_per_block": "threads per block (default: the occupancy API's choice)"},
           description="fixed work per thread, grid sized by the occupancy API (seed 003)")
def work_per_thread(ctx):
    """Fixed work per thread, occupancy-sized grid."""
    import cupy as cp

    n = ctx.n
    kern = _simple(ctx, "fw_work")
    _, block = cp.cuda.driver.occupancyMaxPotentialBlockSize(kern.kernel.ptr, 0, 0)
    block = int(ctx.plan.options.get("threads_per_block", block))
    per_sm = cp.cuda.driver.occupancyMaxActiveBlocksPerMultiprocessor(kern.kernel.ptr, block, 0)
    grid = max(1, per_sm * device.current()["sm_count"])
    cells = n * n
    grid = min(grid, cdiv(cells, block))
    work = cdiv(cells, grid * block)   # seed 003: workPerThread = n^2 / (blocks * threads), rounded up
    _per_k(ctx, kern, (grid,), (block,), extra=(np.int32(work),))


@algorithm("grid-sync", k_order=True, bytes_moved=traffic.per_k_sweep,
           options={"threads_per_block": "threads per block (default 256)"},
           description="one persistent cooperative kernel for all k with a grid barrier, M[i,k] in a register "
                       "(seed 003)")
def grid_sync(ctx):
    """One persistent cooperative kernel."""
    import cupy as cp

    if not device.current()["cooperative"]:
        raise FloydwarpError("gpu/grid-sync needs a device that supports cooperative launches; "
                             "use algorithm='naive' or 'fast'")
    n = ctx.n
    expr = modules.name_expression("fw_gridsync", ctx.dtype)
    kern = modules.kernel("simple.cu", expr, (expr,), cooperative=True)
    block = int(ctx.plan.options.get("threads_per_block", 256))
    per_sm = cp.cuda.driver.occupancyMaxActiveBlocksPerMultiprocessor(kern.kernel.ptr, block, 0)
    if per_sm < 1:
        raise FloydwarpError(f"gpu/grid-sync: a block of {block} threads does not fit on this device")
    grid = max(1, min(per_sm * device.current()["sm_count"], n))   # every block co-resident: no deadlock
    bar = cp.zeros(2, dtype=cp.uint32)
    kern((grid,), (block,), (ctx.d, ctx.p, ctx.prp, ctx.pp, np.int32(n), ctx.ninf, np.int32(ctx.clamp), bar))
    ctx.report(n, n)


# ---------------------------------------------------------------------- blocked.cu
BLOCK_SIZES = (16, 32, 64, 128)


def blocked_group(dtype, b, clamp, pred):
    """The blocked.cu instances one run needs (its dtype, tile, clamp and predecessors): a
    module of every variant compiled two to four times the code a run calls (NVRTC: ~1 s
    each where CuPy's disk cache is cold)."""
    exprs = [modules.name_expression(f"fw_blocked_p{ph}", dtype, b, clamp, pred) for ph in (1, 2, 3)]
    if not pred:
        exprs.append(modules.name_expression("fw_blockedvec_p3", dtype, b, clamp))
    return tuple(exprs)


def blocked_smem(itemsize, b, pred):
    """Dynamic shared memory of phases 1, 2 and 3 of blocked.cu."""
    p = b * b * 4 if pred else 0
    return b * b * itemsize + p, 2 * b * b * itemsize + p, 2 * b * b * itemsize + p


def blockedvec_shape(itemsize, b):
    v = 16 // itemsize
    bv = b // v
    ty = min(256 // bv, b)
    return bv, ty, (b * (b + v) + b * b) * itemsize


def run_blocked(ctx, vec=False):
    """The blocked schedule with blocked.cu's kernels on tiles of B = ``ctx.lay.tile``
    (predecessors beside the cells where ``ctx.pr`` is set); ``vec``: the vectorized phase 3."""
    dt, clamp, pred = ctx.dtype, ctx.clamp, ctx.pr is not None
    b, tiles = ctx.lay.tile, ctx.lay.tiles
    group = blocked_group(dt, b, clamp, pred)
    s1, s2, s3 = blocked_smem(dt.itemsize, b, pred)
    tb = min(b, 32)
    if vec:
        bv, ty, s3 = blockedvec_shape(dt.itemsize, b)
    device.require_smem(ctx.plan, max(s1, s2, s3))

    def kernel(name, *targs, smem):
        return modules.kernel("blocked.cu", modules.name_expression(name, dt, b, *targs), group, dynamic_smem=smem)

    def args(r):
        return ctx.d, ctx.p, ctx.prp, ctx.pp, np.int32(r), ctx.ninf

    p1 = Launch(kernel("fw_blocked_p1", clamp, pred, smem=s1), (1,), (tb, tb), args, s1)
    p2 = Launch(kernel("fw_blocked_p2", clamp, pred, smem=s2), (tiles - 1, 2), (tb, tb), args, s2)
    if vec:
        p3 = Launch(kernel("fw_blockedvec_p3", clamp, smem=s3), (tiles - 1, tiles - 1), (bv, ty),
                    lambda r: (ctx.d, ctx.p, np.int32(r), ctx.ninf), s3)
    else:
        p3 = Launch(kernel("fw_blocked_p3", clamp, pred, smem=s3), (tiles - 1, tiles - 1), (tb, tb), args, s3)
    ctx.rounds(KernelRounds(tiles, p1, p2, p3))


def block_size(plan) -> int:
    """blocked's B: ``block_size`` (one of BLOCK_SIZES), 64 by default."""
    b = plan.block_size or 64
    if b not in BLOCK_SIZES:
        raise FloydwarpError(f"gpu/{plan.algorithm}: block_size must be one of {BLOCK_SIZES}, got {b}")
    return int(b)


algorithm("blocked", tile=block_size, bytes_moved=traffic.blocked_model(64),
          description="3-phase blocked FW, B x B shared-memory tiles (block_size 16/32/64/128, default 64; "
                      "seeds 000, 001, 004)")(run_blocked)
algorithm("blocked-vec", tile=block_size, predecessors=False, bytes_moved=traffic.blocked_model(64),
          description="blocked FW whose phase 3 moves tiles and cells as 16-byte vectors (seed 000)"
          )(functools.partial(run_blocked, vec=True))
