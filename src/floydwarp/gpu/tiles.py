"""``fast``'s tile kernels (``kernels/fast.cu``, ``kernels/pipe.cu``): rounds of 64- or 128-wide
pivots, one kernel launch per phase (:class:`~floydwarp.gpu.incore.KernelRounds`), and
``close_block``, which closes the pivot blocks of the wide rounds (wide.py, ooc.py, the
multi-GPU engines) with them.

The variants' configurations (tile size, threads, shared memory, template instances)
are plain arithmetic, tested without a GPU.
"""
from __future__ import annotations

import dataclasses

import numpy as np

from ..errors import FloydwarpError
from . import device, modules, panel
from .incore import Ctx, KernelRounds, Launch
from .layout import Layout
from .seed import blocked_group, blockedvec_shape

#: phase-3 variants of "fast" (options["fast_variant"]):
#:   "tiled": register tiling, B = 128 (16 x 16 threads, 8 x 8 cells each; int16 packs
#:            two columns per word);
#:   "async": "tiled" with the k chunks double-buffered by cp.async (4-byte types, sm_80+);
#:   "vec":   blocked-vec's phase 3, B = 64 (int16: packed pairs, fw_vec_p3_s16).
#: Phases 1 and 2 are fast.cu's register-resident kernels at the same B.
#:   "pipe":  pipe.cu: phases 1 and 2 fused into one launch (each block closes the pivot
#:            by min-plus squaring, then its own tile; timed as "phase2") and a persistent,
#:            cp.async double-buffered phase 3 (B = 64; int16, int32, float32).
#:   "wide":  wide.py: rounds of wide.WIDE_WIDTH pivot columns, each a pivot closure and
#:            three panel products (minplus.cu), for every dtype (run by fast.py).
FAST_VARIANTS = ("tiled", "async", "vec", "pipe")
WIDE = "wide"
#: the measured winner per dtype on the H100 (bench/NOTES.md: "wide" 27.1 / 14.4 / 11.6 T/s
#: for int16 / int32 / float32 at n = 16384, against 27.0 / 13.85 / 11.3 for "pipe" and
#: 24.5 / 13.2 / 11.0 for "tiled" / "vec" / "vec"); for the 8-byte types "vec" beats the
#: panel products (float64: 2.98 against 1.07 T/s)
FAST_DEFAULT_VARIANT = {"int16": WIDE, "int32": WIDE, "float32": WIDE, "int64": "vec", "float64": "vec"}
#: the solve options of fast's variants (fast.py declares them)
OPTIONS = {
    "fast_variant": "the phase-3 variant: 'wide', 'pipe', 'vec', 'tiled' or 'async' (default: the dtype's "
                    "measured best; 8-byte types run 'vec')",
    "pipe_shape": "(TM, TN): rows x 4-byte words each thread of the 'pipe' phase 3 owns (multiples of 4)",
    "pipe_unroll": "how far the 'pipe' phase 3 unrolls its k loop: 4, 8, 16, 32 or 64 (default: 64)",
    "pipe_grid": "blocks of the persistent 'pipe' phase 3 (default: as many as the GPU keeps resident)",
}
#: "pipe" phase 3: (TM, TN) per dtype: each thread owns TM rows x TN 4-byte words (int16:
#: 2 TN columns); options["pipe_shape"] = (TM, TN) overrides.  PIPE_UNROLL: how far the
#: k loop is unrolled (64: fully); options["pipe_unroll"] overrides.
PIPE_B = 64
PIPE_SHAPES = {"int16": (4, 4), "int32": (4, 4), "float32": (4, 4)}
PIPE_UNROLL = 64
#: threads in y of fw_vec_p3_s16 (x is B / 8)
S16_VEC_TY = 16


def fast_variant(dtype, requested=None) -> str:
    """The phase-3 variant a run uses: the requested one where the dtype has it."""
    dt = np.dtype(dtype)
    v = requested or FAST_DEFAULT_VARIANT[dt.name]
    if v not in (*FAST_VARIANTS, WIDE):
        raise FloydwarpError(f"fast_variant must be one of {(*FAST_VARIANTS, WIDE)}, got {v!r}")
    if v == WIDE:
        return v
    if dt.itemsize == 8:
        return "vec"
    if dt.name == "int16" and v == "async":
        return "tiled"
    if v == "pipe" and dt.name not in PIPE_SHAPES:
        return "vec"
    return v


def fast_config(dtype, smem_optin=None, variant=None) -> dict:
    """The tiling of "fast" for a dtype and variant.

    B = 128 for "tiled"/"async" (64 where phase 2's 128 x 128 pivot tile does not fit in
    shared memory), 64 for "vec"."""
    dt = np.dtype(dtype)
    isz = dt.itemsize
    variant = fast_variant(dt, variant)
    if variant == "pipe":
        tm, tn, nt, minb, ku = pipe_shape(dt)
        return dict(b=PIPE_B, p3="fw_pipe_p3", variant=variant, tm=tm, tn=tn, threads=(nt, 1), minb=minb, ku=ku,
                    smem3=pipe_smem(dt)[1])
    if variant == "vec":
        if dt.name == "int16":
            b = 64
            return dict(b=b, p3="fw_vec_p3_s16", variant=variant, threads=(b // 8, S16_VEC_TY),
                        smem3=(b * b // 2 + b * (b + 1)) * 4)
        bv, ty, smem = blockedvec_shape(isz, 64)
        return dict(b=64, p3="fw_blockedvec_p3", variant=variant, threads=(bv, ty), smem3=smem)
    big = smem_optin is None or smem_optin >= (128 * 128 + 256) * isz
    if dt.name == "int16":
        cfg = (dict(b=128, tm=8, tn=4, bk=32, threads=(16, 16)) if big
               else dict(b=64, tm=4, tn=4, bk=32, threads=(8, 16)))
        return dict(cfg, p3="fw_fast_p3_s16", variant=variant, smem3=0)
    cfg = dict(b=128, tm=8, tn=8, bk=32, threads=(16, 16)) if big else dict(b=64, tm=4, tn=8, bk=32, threads=(8, 16))
    if variant == "async":
        if smem_optin is not None and fast_async_smem(dt, cfg) > smem_optin:
            variant = "tiled"
    cfg = dict(cfg, p3="fw_fast_p3", variant=variant, smem3=0)
    if variant == "async":
        cfg["smem3"] = fast_async_smem(dt, cfg)
    return cfg


def fast_expr(dtype, cfg, clamp):
    """Name expression of the phase-3 kernel."""
    name = cfg["p3"]
    if name == "fw_pipe_p3":
        return modules.name_expression(name, dtype, cfg["b"], cfg["tm"], cfg["tn"], cfg["threads"][0], cfg["minb"],
                                       cfg["ku"], clamp)
    if name == "fw_blockedvec_p3":
        return modules.name_expression(name, dtype, cfg["b"], clamp)
    if name == "fw_vec_p3_s16":
        return modules.name_expression(name, cfg["b"], cfg["threads"][1], clamp)
    args = (cfg["b"], cfg["tm"], cfg["tn"], cfg["bk"], clamp)
    if name == "fw_fast_p3_s16":
        return modules.name_expression(name, *args)
    if cfg["variant"] == "async":
        name = "fw_fast_p3_async"
    return modules.name_expression(name, dtype, *args)


def fast_async_smem(dtype, cfg):
    isz = np.dtype(dtype).itemsize
    b, bk = cfg["b"], cfg["bk"]
    return 2 * (b * (bk + 16 // isz) + bk * b) * isz


def fast_group(dtype, cfg, clamp):
    """The fast.cu (pipe.cu for "pipe") instances a run of this dtype, tile size and clamp
    needs (a module of both clamps compiled twice the code: ~1 s more where CuPy's disk
    cache is cold)."""
    b = cfg["b"]
    if cfg["p3"] == "fw_pipe_p3":
        return pipe_group(dtype, (cfg["tm"], cfg["tn"], cfg["threads"][0], cfg["minb"], cfg["ku"]), clamp)
    exprs = [modules.name_expression(f"fw_fast_p{ph}", dtype, b, clamp) for ph in (1, 2)]
    if cfg["p3"] != "fw_blockedvec_p3":
        exprs.append(fast_expr(dtype, cfg, clamp))
    return tuple(exprs)


def fast_smem(itemsize, b):
    """Dynamic shared memory of fast.cu's phases 1 and 2."""
    return b * b * itemsize, (b * b + 2 * b) * itemsize


def pipe_shape(dtype, shape=None, unroll=None):
    """(TM, TN, threads, blocks per SM, k unroll) of the "pipe" phase 3 for a dtype."""
    dt = np.dtype(dtype)
    tm, tn = (int(x) for x in (shape or PIPE_SHAPES[dt.name]))
    words = PIPE_B // (2 if dt.name == "int16" else 1)
    if tm % 4 or tn % 4 or PIPE_B % tm or words % tn:
        raise FloydwarpError(f"pipe_shape must be two multiples of 4 that divide the tile, got {shape!r}")
    nt = (PIPE_B // tm) * (words // tn)
    if nt < 32 or nt > 1024:
        raise FloydwarpError(f"pipe_shape {shape!r} gives {nt} threads per block")
    smem = pipe_smem(dt)[1]
    minb = max(1, min(8, panel.SMEM_PER_SM // smem, 2048 // nt))
    ku = int(unroll or PIPE_UNROLL)
    if ku not in (4, 8, 16, 32, 64):
        raise FloydwarpError(f"pipe_unroll must be 4, 8, 16, 32 or 64, got {unroll!r}")
    return tm, tn, nt, minb, ku


def pipe_smem(dtype):
    """Dynamic shared memory of pipe.cu's fused phases 1-2 (the pivot transposed, one
    word a value, then the pivot and the own tile in words, rows padded by 4 words) and
    of its phase 3."""
    dt = np.dtype(dtype)
    b = PIPE_B
    words = b // (2 if dt.name == "int16" else 1)
    s12 = (b * (b + 4) + 2 * b * (words + 4)) * 4
    s3 = (b * b + 3 * b * words) * 4
    return s12, s3


def pipe_group(dtype, shape, clamp):
    """The pipe.cu instances a run of this dtype, phase-3 shape and clamp needs."""
    return (modules.name_expression("fw_pipe_p12", dtype, PIPE_B, clamp),
            modules.name_expression("fw_pipe_p3", dtype, PIPE_B, *shape, clamp))



def variant_fits(dtype, requested):
    """The requested variant, or "vec" where "pipe" or "wide" would be chosen but its
    kernels need more shared memory per block than this device has (minplus.cu: 80 KiB
    for 4-byte types; Turing allows 64)."""
    variant = fast_variant(dtype, requested)
    need = {"pipe": lambda: max(pipe_smem(dtype)), WIDE: lambda: panel.minplus_shape(dtype)[3]}.get(variant)
    if need is not None and need() > device.current()["smem_optin"]:
        return "vec"
    return requested


def run(ctx, requested) -> None:
    """``fast`` without predecessors on ``ctx.d`` in rounds of 64- or 128-tiles: the
    ``requested`` variant ("pipe", "tiled", "async" or "vec"; None: the dtype's), already
    fitted to this device (:func:`variant_fits`)."""
    dt = ctx.dtype
    if fast_variant(dt, requested) == "pipe":
        return run_pipe(ctx)
    optin = device.current()["smem_optin"]
    cfg = fast_config(dt, optin, requested)
    if cfg["b"] != ctx.lay.tile:      # a run with predecessors is laid out in 64-tiles: "vec"'s
        cfg = fast_config(dt, optin, "vec")
    b, clamp = cfg["b"], ctx.clamp
    s1, s2 = fast_smem(dt.itemsize, b)
    s3 = cfg["smem3"]
    device.require_smem(ctx.plan, max(s1, s2, s3))
    group = fast_group(dt, cfg, clamp)
    k1 = modules.kernel("fast.cu", modules.name_expression("fw_fast_p1", dt, b, clamp), group, dynamic_smem=s1)
    k2 = modules.kernel("fast.cu", modules.name_expression("fw_fast_p2", dt, b, clamp), group, dynamic_smem=s2)
    if cfg["p3"] == "fw_blockedvec_p3":
        k3 = modules.kernel("blocked.cu", fast_expr(dt, cfg, clamp), blocked_group(dt, b, clamp, False),
                            dynamic_smem=s3)
    else:
        k3 = modules.kernel("fast.cu", fast_expr(dt, cfg, clamp), group, dynamic_smem=s3)
    tiles = ctx.lay.tiles

    def args(r):
        return ctx.d, ctx.p, np.int32(r), ctx.ninf

    ctx.rounds(KernelRounds(tiles, Launch(k1, (1,), (16, 16), args, s1), Launch(k2, (tiles - 1, 2), (16, 16), args, s2),
                            Launch(k3, (tiles - 1, tiles - 1), cfg["threads"], args, s3)))


def run_pipe(ctx) -> None:
    """The "pipe" variant: phases 1 and 2 fused into one launch, a persistent phase 3."""
    import cupy as cp

    dt, clamp = ctx.dtype, ctx.clamp
    b = PIPE_B
    shape = pipe_shape(dt, ctx.plan.options.get("pipe_shape"), ctx.plan.options.get("pipe_unroll"))
    tm, tn, nt, minb, ku = shape
    s12, s3 = pipe_smem(dt)
    device.require_smem(ctx.plan, max(s12, s3))
    group = pipe_group(dt, shape, clamp)
    k12 = modules.kernel("pipe.cu", modules.name_expression("fw_pipe_p12", dt, b, clamp), group,
                         dynamic_smem=s12)
    k3 = modules.kernel("pipe.cu", modules.name_expression("fw_pipe_p3", dt, b, *shape, clamp), group,
                        dynamic_smem=s3)
    tiles = ctx.lay.tiles
    ap = cp.empty(tiles * b * b, dtype=panel.word_dtype(dt))    # column panel, k-major words
    pv = cp.empty(b * b, dtype=dt)                              # the closed pivot tile
    per_sm = device.occupancy(k3, nt, s3)
    # options["pipe_grid"] (tests): fewer phase-3 blocks, each with a longer run of tiles
    blocks = int(ctx.plan.options.get("pipe_grid") or per_sm * device.current()["sm_count"])
    grid3 = (max(1, min((tiles - 1) ** 2, blocks)),)
    grid12 = (max(tiles - 1, 1), 1 if tiles == 1 else 2)
    t = np.int32(tiles)

    def args(r):
        return ctx.d, ctx.p, ap, pv, np.int32(r), ctx.ninf, t

    ctx.rounds(KernelRounds(tiles, None, Launch(k12, grid12, (16, 16), args, s12), Launch(k3, grid3, (nt,), args, s3)))


def close_block(block, plan, stream=None):
    """Floyd-Warshall in place on a square view of a device matrix (side a multiple of
    64) with the 64-tile kernels of ``plan.dtype`` ("pipe"; "vec" where the dtype or the
    device has no "pipe"), whatever the caller's variant."""
    import cupy as cp

    w = block.shape[0]
    if block.shape != (w, w):
        raise FloydwarpError(f"close_block needs a square block, got {block.shape}")
    if w % panel.UNIT:
        raise FloydwarpError(f"block side = {w} is not a multiple of {panel.UNIT}")
    if w == 0:
        return block
    lay = dataclasses.replace(Layout.make(w, block.itemsize, panel.UNIT), pitch=panel.pitch(block))
    sub = dataclasses.replace(plan, progress=None, predecessors=False, options={"fast_variant": "pipe"})
    with panel.on(stream):
        run(Ctx(cp, block, None, lay, sub), variant_fits(plan.dtype, "pipe"))
    return block
