"""The ``gpu`` backend: every seed kernel, exact, compiled at run time through CuPy.

Importing this module registers the backend and its algorithms; it never imports
CuPy.  The probe says why the backend cannot run (no CuPy, no device) and names the
CPU fallback.

A run (``_execute``):

1. check that the padded matrices fit in free device memory (before allocating);
2. build the start matrix in a pitched, padded device buffer (layout.py): an edge
   list is uploaded and scattered on the device (no n^2 host matrix); a dense host
   matrix is copied row by row with ``cudaMemcpy2D``; a dense CuPy matrix stays on the
   device;
3. launch the algorithm's kernels, timed with CUDA events ("compute");
4. hand back an n x n matrix: a CuPy array when the input was on the device (or
   ``output="device"``), else a NumPy array (``output="host"`` forces it).

Timings: "h2d" (building and uploading the start matrix), "setup" (padding and
predecessor initialization on the device), "compute" (kernels only) and "d2h" (the
copy back, or the unpadding copy on the device).
"""
from __future__ import annotations

import contextlib
import functools
import time

import numpy as np

from .. import checkpoint
from ..errors import FloydwarpError
from ..plan import EngineOutput
from ..predecessors import NO_PREDECESSOR
from ..registry import register, register_backend
from . import keyed, modules, ooc, panel, traffic, wide, witness
from .layout import Layout, format_bytes

#: ``backend="auto"`` takes the GPU from this many vertices on.  Seed 000 measured the
#: CPU winning below ~70 vertices.  On the H100 machine (16 CPU cores), a whole solve of
#: a host graph (copies included; bench/NOTES.md) took cpu 0.76 ms / gpu 1.12 ms at
#: n = 256 and cpu 2.62 ms / gpu 1.96 ms at n = 512: the crossover is near 400.
AUTO_MIN_N = 384

NO_CUPY = "CuPy is not installed: pip install 'floydwarp[gpu]' (or use backend='cpu')"

ALL_DTYPES = ("int16", "int32", "int64", "float32", "float64")


# ---------------------------------------------------------------------- probe
def _probe_uncached() -> str | None:
    try:
        import cupy
    except ImportError:
        return NO_CUPY
    except Exception as exc:  # a broken CuPy install (missing CUDA libraries, ...)
        return f"CuPy cannot be imported ({type(exc).__name__}: {exc}); reinstall 'floydwarp[gpu]' or use backend='cpu'"
    try:
        count = cupy.cuda.runtime.getDeviceCount()
    except Exception as exc:
        return f"no usable CUDA GPU ({exc}); use backend='cpu'"
    if count < 1:
        return "no CUDA GPU found; use backend='cpu'"
    return None


@functools.lru_cache(maxsize=1)
def probe() -> str | None:
    """None when the GPU backend can run here, else the reason (with the CPU fallback)."""
    return _probe_uncached()


register_backend("gpu", "CUDA kernels compiled at run time (NVRTC) and launched through CuPy",
                 probe=probe, auto_priority=20, auto_min_n=lambda: AUTO_MIN_N)


# ---------------------------------------------------------------------- device facts
@functools.lru_cache(maxsize=None)
def device_info(device_id: int) -> dict:
    import cupy

    rt = cupy.cuda.runtime
    props = rt.getDeviceProperties(device_id)
    name = props["name"]
    return {
        "id": device_id,
        "name": name.decode() if isinstance(name, bytes) else str(name),
        "sm_count": rt.deviceGetAttribute(rt.cudaDevAttrMultiProcessorCount, device_id),
        "smem_optin": rt.deviceGetAttribute(rt.cudaDevAttrMaxSharedMemoryPerBlockOptin, device_id),
        "cooperative": rt.deviceGetAttribute(rt.cudaDevAttrCooperativeLaunch, device_id),
        "cc": props["major"] * 10 + props["minor"],
    }


def _device():
    import cupy

    return device_info(cupy.cuda.Device().id)


# ---------------------------------------------------------------------- the run context
class Ctx:
    """What the kernels of one run need: the buffers and their scalar arguments."""

    def __init__(self, cp, d, pr, lay: Layout, plan):
        self.cp, self.d, self.pr, self.lay, self.plan = cp, d, pr, lay, plan
        self.dtype = np.dtype(plan.dtype)
        self.n = lay.n
        self.p = np.int64(lay.pitch)
        self.pp = np.int64(lay.pred_pitch)
        self.prp = pr if pr is not None else np.intp(0)
        #: how products combine entries (panel.Arith); the kernels take its clamp and -INF
        self.arith = panel.Arith.of(plan)
        self.clamp, self.ninf = self.arith.clamp, self.arith.ninf

        #: options["phases"]: time each phase with CUDA events ("phase1", "phase2", "phase3")
        self.phase_events = {} if plan.options.get("phases") else None
        #: what the kernels chose, for the result's metadata
        self.meta = {}
        #: the predecessors provably form no loop (solve() need not look for one)
        self.loop_free = False

    def report(self, done, total):
        self.plan.report(done, total)

    def launch(self, phase, kern, grid, block, args, shared_mem=0):
        with self.phase(phase):
            kern(grid, block, args, shared_mem=shared_mem)

    @contextlib.contextmanager
    def phase(self, name):
        """Time what is launched inside under ``name`` (when options["phases"] asks)."""
        if self.phase_events is None:
            yield
            return
        a, b = self.cp.cuda.Event(), self.cp.cuda.Event()
        a.record()
        yield
        b.record()
        self.phase_events.setdefault(name, []).append((a, b))

    def phase_timings(self):
        if not self.phase_events:
            return {}
        get = self.cp.cuda.get_elapsed_time
        return {name: sum(get(a, b) for a, b in evs) / 1000.0 for name, evs in self.phase_events.items()}


def _wants_device(plan, on_device_input: bool) -> bool:
    out = plan.options.get("output", "auto")
    if out in (None, "auto"):
        return on_device_input
    if out == "device":
        return True
    if out == "host":
        return False
    raise FloydwarpError(f"output={out!r} is not understood; use 'host', 'device' or 'auto'")


def _dense_matrix(graph):
    dense = getattr(graph, "_dense", None)
    return None if dense is None else dense[0]


def _execute(graph, plan, *, tile: int, compute) -> EngineOutput:
    """Steps 1-4 of the module docstring around ``compute(ctx)``, which launches kernels."""
    import cupy as cp
    from cupy.cuda import runtime as rt

    from ..arrays import is_device_array

    dtype = np.dtype(plan.dtype)
    n = int(graph.n)
    dense = _dense_matrix(graph)
    on_device_input = dense is not None and is_device_array(dense)
    to_device = _wants_device(plan, on_device_input)
    timings = {"h2d": 0.0, "setup": 0.0, "compute": 0.0, "d2h": 0.0}

    if n == 0:
        xp = cp if to_device else np
        d = xp.zeros((0, 0), dtype=dtype)
        pred = xp.zeros((0, 0), dtype=np.int32) if plan.predecessors else None
        return EngineOutput(d, pred, timings)

    lay = Layout.make(n, dtype.itemsize, tile, plan.predecessors)
    isz = dtype.itemsize
    if dense is None:
        staging = graph.num_edges * 24
    elif on_device_input:
        staging = n * n * (8 + isz)          # to_matrix's temporaries on the device
    else:
        staging = 0
    if plan.predecessors:
        staging = max(staging, n * n * 5)    # where() temporaries of the initialization
    needed = lay.device_bytes(staging=staging, output_copy=to_device)
    # "fast" streams from host memory what does not fit, and checkpoints there: the out-of-core
    # schedule keeps the matrix on the host at every round boundary, at the in-core rate
    # (bench/NOTES.md: 100 % at n = 65536 with 4 GB of GPU memory)
    checkpoints = checkpoint.requested(plan)
    if plan.algorithm == "fast" and not plan.predecessors and (checkpoints or needed > ooc.device_budget(plan)):
        return ooc.solve_out_of_core(graph, plan)
    if checkpoints:
        raise FloydwarpError(f"gpu/{plan.algorithm} does not checkpoint; gpu/fast (without predecessors) and "
                             f"gpu/out-of-core do, as do the cpu and mpi backends")
    check_memory(needed, n, dtype, plan)

    try:
        # ---- start matrix, padded and pitched
        t0 = time.perf_counter()
        inf = plan.inf
        if dense is not None and on_device_input:
            m = graph.to_matrix(dtype, inf, xp=cp)
            if lay.padded:
                d = cp.full((lay.N, lay.pitch), inf, dtype=dtype)
                rt.memcpy2D(d.data.ptr, lay.row_bytes, m.data.ptr, n * isz, n * isz, n, rt.memcpyDeviceToDevice)
                del m
            else:
                d = m
        elif dense is not None:
            m = np.ascontiguousarray(graph.to_matrix(dtype, inf))
            d = cp.full((lay.N, lay.pitch), inf, dtype=dtype)
            rt.memcpy2D(d.data.ptr, lay.row_bytes, m.ctypes.data, n * isz, n * isz, n, rt.memcpyHostToDevice)
            del m
        else:
            d = _edge_matrix(cp, graph, lay, dtype, inf)
        cp.cuda.Device().synchronize()
        t1 = time.perf_counter()
        timings["h2d"] = t1 - t0

        # ---- padding diagonal, predecessors
        if lay.N > n and dense is not None:
            pad = cp.arange(n, lay.N)
            d[pad, pad] = 0
        pr = None
        if plan.predecessors:
            pr = cp.full((lay.N, lay.pred_pitch), NO_PREDECESSOR, dtype=cp.int32)
            _seed_predecessors(cp, d, pr, n, inf)
        cp.cuda.Device().synchronize()
        t2 = time.perf_counter()
        timings["setup"] = t2 - t1

        # ---- kernels
        ctx = Ctx(cp, d, pr, lay, plan)
        start, end = cp.cuda.Event(), cp.cuda.Event()
        start.record()
        compute(ctx)
        end.record()
        end.synchronize()
        timings["compute"] = cp.cuda.get_elapsed_time(start, end) / 1000.0
        timings.update(ctx.phase_timings())

        # ---- result
        t3 = time.perf_counter()
        dist = _unpad(cp, rt, d, lay, isz, dtype, to_device)
        pred = None if pr is None else _unpad(cp, rt, pr, lay, 4, np.dtype(np.int32), to_device, pred=True)
        cp.cuda.Device().synchronize()
        timings["d2h"] = time.perf_counter() - t3
        meta = {"device": _device()["name"], "tile": lay.tile, "padded_n": lay.N, "row_bytes": lay.row_bytes,
                **ctx.meta}
        return EngineOutput(dist, pred, timings, pred_loops=False if ctx.loop_free else None, metadata=meta)
    except cp.cuda.memory.OutOfMemoryError as exc:
        raise FloydwarpError(
            f"the GPU ran out of memory for n = {n} ({dtype.name}): {exc}; "
            f"use a narrower dtype or backend='cpu'") from exc
    except (cp.cuda.runtime.CUDARuntimeError, cp.cuda.driver.CUDADriverError) as exc:
        raise FloydwarpError(
            f"CUDA error in gpu/{plan.algorithm} (n = {n}, dtype {dtype.name}): {exc}. "
            f"The device may need a restart of this process; backend='cpu' is unaffected") from exc


def _seed_predecessors(cp, d, pr, n, inf):
    """The predecessors of the start matrix: ``i`` on every edge ``i -> j``, none elsewhere."""
    rows = cp.arange(n, dtype=cp.int32)[:, None]
    pr[:n, :n] = cp.where(d[:n, :n] < inf, rows, cp.int32(NO_PREDECESSOR))
    idx = cp.arange(n)
    pr[idx, idx] = NO_PREDECESSOR


def _setup_group(dtype):
    exprs = [modules.name_expression("fw_fill", dtype)]
    exprs += [f"fw_scatter<{modules.ctype(dtype)}, {i}>" for i in ("unsigned short", "int")]
    return tuple(exprs)


def _edge_matrix(cp, graph, lay: Layout, dtype, inf):
    """The padded start matrix of an edge list, built on the device: one kernel fills
    INF with 0 on the diagonal (padding included), one scatters the distinct edges.
    The edges travel compacted (uint16 ids up to 65536 vertices, else int32; weights
    cast to the distance dtype on the host, as ``astype`` would) in one copy, from
    pinned memory where they are small enough (``_host_empty``)."""
    d = cp.empty((lay.N, lay.pitch), dtype=dtype)
    group = _setup_group(dtype)
    fill = modules.kernel("pipe.cu", group[0], group)
    gx = max(1, min(_cdiv(lay.pitch, 256), 8))
    fill((gx, min(lay.N, 65535)), (256,), (d, np.int64(lay.pitch), np.int32(lay.N), dtype.type(inf)))
    src, dst, w = graph.edges()
    m = len(src)
    if not m:
        return d
    idx_t = np.dtype(np.uint16) if lay.n <= 65536 else np.dtype(np.int32)
    ib, isz = idx_t.itemsize, dtype.itemsize
    o1 = _cdiv(m * ib, 16) * 16
    o2 = o1 + _cdiv(m * ib, 16) * 16
    total = o2 + m * isz
    stage = _host_empty(cp, (total,), np.uint8)
    np.copyto(stage[:m * ib].view(idx_t), src, casting="unsafe")
    np.copyto(stage[o1:o1 + m * ib].view(idx_t), dst, casting="unsafe")
    np.copyto(stage[o2:o2 + m * isz].view(dtype), w, casting="unsafe")
    buf = cp.empty(total, dtype=np.uint8)
    buf.data.copy_from_host(stage.ctypes.data, total)
    del stage
    ctype_i = "unsigned short" if idx_t == np.uint16 else "int"
    scatter = modules.kernel("pipe.cu", f"fw_scatter<{modules.ctype(dtype)}, {ctype_i}>", group)
    scatter((max(1, min(_cdiv(m, 256), 4096)),), (256,),
            (d, np.int64(lay.pitch), buf[:o1], buf[o1:o2], buf[o2:], np.int64(m)))
    return d


#: host buffers up to this many bytes (results, compacted edge lists) are pinned
#: (page-locked) memory, which CuPy pools: copies go straight to or from them (d2h of 16 MB
#: measured 0.36 ms)
PINNED_MAX_BYTES = 64 << 20


def _host_empty(cp, shape, dtype):
    nbytes = int(np.prod(shape)) * np.dtype(dtype).itemsize
    if 0 < nbytes <= PINNED_MAX_BYTES:
        try:
            import cupyx

            return cupyx.empty_pinned(shape, dtype=dtype)
        except Exception:  # no pinned memory to be had: pageable memory works too
            pass
    return np.empty(shape, dtype=dtype)


def _unpad(cp, rt, buf, lay: Layout, isz, dtype, to_device, pred=False):
    n = lay.n
    pitch_bytes = (lay.pred_pitch * 4) if pred else lay.row_bytes
    padded = lay.N != n or (lay.pred_pitch if pred else lay.pitch) != n
    if to_device:
        if not padded:
            return buf
        out = cp.empty((n, n), dtype=dtype)
        rt.memcpy2D(out.data.ptr, n * isz, buf.data.ptr, pitch_bytes, n * isz, n, rt.memcpyDeviceToDevice)
        return out
    out = _host_empty(cp, (n, n), dtype)
    rt.memcpy2D(out.ctypes.data, n * isz, buf.data.ptr, pitch_bytes, n * isz, n, rt.memcpyDeviceToHost)
    return out


def check_memory(needed: int, n: int, dtype, plan) -> None:
    """Refuse (before allocating) a run whose buffers do not fit in free device memory
    (or in ``max_gpu_memory``)."""
    available = ooc.device_budget(plan)
    if needed > available:
        raise FloydwarpError(memory_message(needed, available, n, dtype, _device()["name"],
                                            predecessors=bool(plan.predecessors)))


def memory_message(needed: int, available: int, n: int, dtype, device_name: str, predecessors=False) -> str:
    what = f"{np.dtype(dtype).name} distances" + (" and int32 predecessors" if predecessors else "")
    return (f"a graph of n = {n} vertices needs {needed} bytes ({format_bytes(needed)}) of GPU memory "
            f"for its {what}, but only {available} bytes ({format_bytes(available)}) may be used on {device_name}; "
            f"algorithm='fast' without predecessors streams a larger matrix from host memory; otherwise use a "
            f"narrower dtype, fewer vertices, or backend='cpu'")


# ---------------------------------------------------------------------- simple.cu
def _simple_group(dtype):
    t = dtype
    return tuple([modules.name_expression(k, t) for k in
                  ("fw_sequential", "fw_naive", "fw_naive_shared", "fw_naive_vec", "fw_work")]
                 + [modules.name_expression("fw_pseudo", t, r) for r in (1, 2, 4, 8)])


def _simple(ctx, name, *targs):
    expr = modules.name_expression(name, ctx.dtype, *targs)
    return modules.kernel("simple.cu", expr, _simple_group(ctx.dtype))


def _cdiv(a, b):
    return -(-int(a) // int(b))


def _per_k(ctx, kern, grid, block, extra=()):
    n = ctx.n
    clamp = np.int32(ctx.clamp)
    for k in range(n):
        kern(grid, block, (ctx.d, ctx.p, ctx.prp, ctx.pp, np.int32(n), np.int32(k), *extra, ctx.ninf, clamp))
        if (k & 63) == 63:
            ctx.report(k + 1, n)
    ctx.report(n, n)


def _algorithm(name, *, tile=1, **kw):
    """Register ``run(ctx)`` as gpu/<name>; ``tile(plan)`` gives the padding multiple."""
    def deco(run):
        def solve(graph, plan):
            t = tile(plan) if callable(tile) else tile
            return _execute(graph, plan, tile=t, compute=run)

        solve.__doc__ = run.__doc__
        solve.__name__ = f"gpu_{name.replace('-', '_')}"
        register("gpu", name, **kw)(solve)
        return run
    return deco


@_algorithm("sequential", k_order=True, max_n=512, bytes_moved=traffic.per_k_sweep,
            description="one GPU thread runs the triple loop (seed 003's first GPU version)")
def _run_sequential(ctx):
    """One GPU thread runs the triple loop."""
    kern = _simple(ctx, "fw_sequential")
    kern((1,), (1,), (ctx.d, ctx.p, ctx.prp, ctx.pp, np.int32(ctx.n), ctx.ninf, np.int32(ctx.clamp)))
    ctx.report(ctx.n, ctx.n)


@_algorithm("naive", k_order=True, bytes_moved=traffic.per_k_sweep,
            description="one thread per cell, one launch per k, global memory only (seeds 000, 002, 004)")
def _run_naive(ctx):
    """One thread per cell, one launch per k."""
    n = ctx.n
    _per_k(ctx, _simple(ctx, "fw_naive"), (_cdiv(n, 32), _cdiv(n, 8)), (32, 8))


@_algorithm("naive-shared-k", k_order=True, bytes_moved=traffic.per_k_sweep,
            description="one thread per cell; M[i,k] and M[k,j] staged per block in shared memory (seed 002)")
def _run_naive_shared(ctx):
    """One thread per cell, column and row k staged in shared memory."""
    n = ctx.n
    _per_k(ctx, _simple(ctx, "fw_naive_shared"), (_cdiv(n, 32), _cdiv(n, 8)), (32, 8))


@_algorithm("naive-vec", k_order=True, bytes_moved=traffic.per_k_sweep,
            description="one thread per 16-byte vector of cells; M[i,k] picked from a vector (seed 000)")
def _run_naive_vec(ctx):
    """One thread per 16-byte vector."""
    n = ctx.n
    v = 16 // ctx.dtype.itemsize
    _per_k(ctx, _simple(ctx, "fw_naive_vec"), (_cdiv(_cdiv(n, v), 32), _cdiv(n, 8)), (32, 8))


PSEUDO_R = (1, 2, 4, 8)


def _pseudo_r(plan) -> int:
    r = int(plan.options.get("R", 4))
    if r not in PSEUDO_R:
        raise FloydwarpError(f"pseudo-blocked: R must be one of {PSEUDO_R}, got {r}")
    return r


@_algorithm("pseudo-blocked", k_order=True, bytes_moved=traffic.per_k_sweep,
            description="each thread updates an R x R group of cells, R = options['R'] (1, 2, 4, 8; default 4) (seed 000)")
def _run_pseudo(ctx):
    """Each thread updates R x R cells."""
    n = ctx.n
    r = _pseudo_r(ctx.plan)
    _per_k(ctx, _simple(ctx, "fw_pseudo", r), (_cdiv(n, 32 * r), _cdiv(n, 8 * r)), (32, 8))


@_algorithm("work-per-thread", k_order=True, bytes_moved=traffic.per_k_sweep,
            description="fixed work per thread, grid sized by the occupancy API (seed 003)")
def _run_work(ctx):
    """Fixed work per thread, occupancy-sized grid."""
    import cupy as cp

    n = ctx.n
    kern = _simple(ctx, "fw_work")
    _, block = cp.cuda.driver.occupancyMaxPotentialBlockSize(kern.kernel.ptr, 0, 0)
    block = int(ctx.plan.options.get("threads_per_block", block))
    per_sm = cp.cuda.driver.occupancyMaxActiveBlocksPerMultiprocessor(kern.kernel.ptr, block, 0)
    grid = max(1, per_sm * _device()["sm_count"])
    cells = n * n
    grid = min(grid, _cdiv(cells, block))
    work = _cdiv(cells, grid * block)   # seed 003: workPerThread = n^2 / (blocks * threads), rounded up
    _per_k(ctx, kern, (grid,), (block,), extra=(np.int32(work),))


@_algorithm("grid-sync", k_order=True, bytes_moved=traffic.per_k_sweep,
            description="one persistent cooperative kernel for all k with a grid barrier, M[i,k] in a register (seed 003)")
def _run_gridsync(ctx):
    """One persistent cooperative kernel."""
    import cupy as cp

    if not _device()["cooperative"]:
        raise FloydwarpError("gpu/grid-sync needs a device that supports cooperative launches; "
                             "use algorithm='naive' or 'fast'")
    n = ctx.n
    expr = modules.name_expression("fw_gridsync", ctx.dtype)
    kern = modules.kernel("simple.cu", expr, (expr,), cooperative=True)
    block = int(ctx.plan.options.get("threads_per_block", 256))
    per_sm = cp.cuda.driver.occupancyMaxActiveBlocksPerMultiprocessor(kern.kernel.ptr, block, 0)
    if per_sm < 1:
        raise FloydwarpError(f"gpu/grid-sync: a block of {block} threads does not fit on this device")
    grid = max(1, min(per_sm * _device()["sm_count"], n))   # every block co-resident: no deadlock
    bar = cp.zeros(2, dtype=cp.uint32)
    kern((grid,), (block,), (ctx.d, ctx.p, ctx.prp, ctx.pp, np.int32(n), ctx.ninf, np.int32(ctx.clamp), bar))
    ctx.report(n, n)


# ---------------------------------------------------------------------- blocked.cu
BLOCK_SIZES = (16, 32, 64, 128)


def blocked_group(dtype, b):
    exprs = []
    for clamp in (False, True):
        for pred in (False, True):
            exprs += [modules.name_expression(f"fw_blocked_p{ph}", dtype, b, clamp, pred) for ph in (1, 2, 3)]
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


def _block_size(plan, default, allowed=BLOCK_SIZES):
    b = plan.block_size or default
    if b not in allowed:
        raise FloydwarpError(f"gpu/{plan.algorithm}: block_size must be one of {allowed}, got {b}")
    return int(b)


def _check_smem(plan, need):
    optin = _device()["smem_optin"]
    if need > optin:
        raise FloydwarpError(f"gpu/{plan.algorithm}: block_size {plan.block_size} needs {need} bytes of shared "
                             f"memory per block; this device allows {optin}; use a smaller block_size")


def _phases_12(ctx, b, r, tiles, pred):
    """Phases 1 and 2 of round r (blocked.cu)."""
    dt, clamp = ctx.dtype, ctx.clamp
    group = blocked_group(dt, b)
    s1, s2, _ = blocked_smem(dt.itemsize, b, pred)
    tb = min(b, 32)
    args = (ctx.d, ctx.p, ctx.prp, ctx.pp, np.int32(r), ctx.ninf)
    k1 = modules.kernel("blocked.cu", modules.name_expression("fw_blocked_p1", dt, b, clamp, pred), group,
                        dynamic_smem=s1)
    ctx.launch("phase1", k1, (1,), (tb, tb), args, shared_mem=s1)
    if tiles > 1:
        k2 = modules.kernel("blocked.cu", modules.name_expression("fw_blocked_p2", dt, b, clamp, pred), group,
                            dynamic_smem=s2)
        ctx.launch("phase2", k2, (tiles - 1, 2), (tb, tb), args, shared_mem=s2)


def _run_blocked(ctx, b, vec=False):
    dt, clamp, pred = ctx.dtype, ctx.clamp, ctx.pr is not None
    tiles = ctx.lay.tiles
    group = blocked_group(dt, b)
    s1, s2, s3 = blocked_smem(dt.itemsize, b, pred)
    tb = min(b, 32)
    if vec:
        bv, ty, s3 = blockedvec_shape(dt.itemsize, b)
    _check_smem(ctx.plan, max(s1, s2, s3))
    if vec:
        k3 = modules.kernel("blocked.cu", modules.name_expression("fw_blockedvec_p3", dt, b, clamp), group,
                            dynamic_smem=s3)
    else:
        k3 = modules.kernel("blocked.cu", modules.name_expression("fw_blocked_p3", dt, b, clamp, pred), group,
                            dynamic_smem=s3)
    for r in range(tiles):
        _phases_12(ctx, b, r, tiles, pred)
        if tiles > 1:
            if vec:
                ctx.launch("phase3", k3, (tiles - 1, tiles - 1), (bv, ty), (ctx.d, ctx.p, np.int32(r), ctx.ninf),
                           shared_mem=s3)
            else:
                ctx.launch("phase3", k3, (tiles - 1, tiles - 1), (tb, tb),
                           (ctx.d, ctx.p, ctx.prp, ctx.pp, np.int32(r), ctx.ninf), shared_mem=s3)
        ctx.report(r + 1, tiles)


def _blocked_tile(plan):
    return _block_size(plan, 64)


@_algorithm("blocked", tile=_blocked_tile, bytes_moved=traffic.blocked_model(64),
            description="3-phase blocked FW, B x B shared-memory tiles (block_size 16/32/64/128, default 64; seeds 000, 001, 004)")
def _blocked(ctx):
    """3-phase blocked FW with shared-memory tiles."""
    _run_blocked(ctx, ctx.lay.tile)


@_algorithm("blocked-vec", tile=_blocked_tile, predecessors=False, bytes_moved=traffic.blocked_model(64),
            description="blocked FW whose phase 3 moves tiles and cells as 16-byte vectors (seed 000)")
def _blocked_vec(ctx):
    """Blocked FW with vectorized phase 3."""
    _run_blocked(ctx, ctx.lay.tile, vec=True)


# ---------------------------------------------------------------------- fast.cu
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
#:            three panel products (minplus.cu), for every dtype.
FAST_VARIANTS = ("tiled", "async", "vec", "pipe")
WIDE = "wide"
#: the measured winner per dtype on the H100 (bench/NOTES.md: "wide" 27.1 / 14.4 / 11.6 T/s
#: for int16 / int32 / float32 at n = 16384, against 27.0 / 13.85 / 11.3 for "pipe" and
#: 24.5 / 13.2 / 11.0 for "tiled" / "vec" / "vec"); for the 8-byte types "vec" beats the
#: panel products (float64: 2.98 against 1.07 T/s)
FAST_DEFAULT_VARIANT = {"int16": WIDE, "int32": WIDE, "float32": WIDE, "int64": "vec", "float64": "vec"}
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
        cfg = dict(b=128, tm=8, tn=4, bk=32, threads=(16, 16)) if big else dict(b=64, tm=4, tn=4, bk=32, threads=(8, 16))
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


def fast_group(dtype, cfg):
    """Every fast.cu (pipe.cu for "pipe") instance a run of this dtype and tile size may need."""
    b = cfg["b"]
    if cfg["p3"] == "fw_pipe_p3":
        return pipe_group(dtype, (cfg["tm"], cfg["tn"], cfg["threads"][0], cfg["minb"], cfg["ku"]))
    exprs = {modules.name_expression(f"fw_fast_p{ph}", dtype, b, c) for ph in (1, 2) for c in (False, True)}
    if cfg["p3"] != "fw_blockedvec_p3":
        exprs |= {fast_expr(dtype, cfg, c) for c in (False, True)}
    return tuple(sorted(exprs))


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


def pipe_group(dtype, shape):
    exprs = []
    for clamp in (False, True):
        exprs.append(modules.name_expression("fw_pipe_p12", dtype, PIPE_B, clamp))
        exprs.append(modules.name_expression("fw_pipe_p3", dtype, PIPE_B, *shape, clamp))
    return tuple(exprs)


def _run_pipe(ctx):
    import cupy as cp

    dt, clamp = ctx.dtype, ctx.clamp
    b = PIPE_B
    shape = pipe_shape(dt, ctx.plan.options.get("pipe_shape"), ctx.plan.options.get("pipe_unroll"))
    tm, tn, nt, minb, ku = shape
    s12, s3 = pipe_smem(dt)
    _check_smem(ctx.plan, max(s12, s3))
    group = pipe_group(dt, shape)
    k12 = modules.kernel("pipe.cu", modules.name_expression("fw_pipe_p12", dt, b, clamp), group,
                         dynamic_smem=s12)
    k3 = modules.kernel("pipe.cu", modules.name_expression("fw_pipe_p3", dt, b, *shape, clamp), group,
                        dynamic_smem=s3)
    tiles = ctx.lay.tiles
    ap = cp.empty(tiles * b * b, dtype=panel.word_dtype(dt))    # column panel, k-major words
    pv = cp.empty(b * b, dtype=dt)                              # the closed pivot tile
    per_sm = _occupancy(k3, nt, s3)
    # options["pipe_grid"] (tests): fewer phase-3 blocks, each with a longer run of tiles
    blocks = int(ctx.plan.options.get("pipe_grid") or per_sm * _device()["sm_count"])
    grid3 = (max(1, min((tiles - 1) ** 2, blocks)),)
    grid12 = (max(tiles - 1, 1), 1 if tiles == 1 else 2)
    t = np.int32(tiles)
    for r in range(tiles):
        args = (ctx.d, ctx.p, ap, pv, np.int32(r), ctx.ninf, t)
        ctx.launch("phase2", k12, grid12, (16, 16), args, shared_mem=s12)
        if tiles > 1:
            ctx.launch("phase3", k3, grid3, (nt,), args, shared_mem=s3)
        ctx.report(r + 1, tiles)


@functools.lru_cache(maxsize=None)
def _occupancy_cached(ptr, threads, smem):
    import cupy as cp

    return int(cp.cuda.driver.occupancyMaxActiveBlocksPerMultiprocessor(ptr, threads, smem))


def _occupancy(kern, threads, smem):
    return max(1, _occupancy_cached(kern.kernel.ptr, int(threads), int(smem)))


def _fast_tile(plan):
    if plan.predecessors:
        return 64
    requested = _variant_fits(plan.dtype, plan.options.get("fast_variant"))
    if fast_variant(plan.dtype, requested) == WIDE:
        return panel.UNIT
    return fast_config(plan.dtype, _device()["smem_optin"], requested)["b"]


@_algorithm("fast", tile=_fast_tile, default=True, bytes_moved=traffic.fast_model,
            description="production kernel: rounds of 2048-3072 pivot columns as min-plus panel products with the "
                        "cells in registers for int16/int32/float32 ('wide'), vectorized blocked FW for 8-byte types "
                        "(options['fast_variant']: 'wide', 'pipe', 'vec', 'tiled', 'async'); predecessors ride in "
                        "the distance word ('keyed': int32, non-negative integer float weights, int16 with "
                        "zero or negative weights) or are recovered from the tight edges after the run "
                        "('witness': int16 and fractional floats with positive weights); DPX add-min on sm_90")
def _run_fast(ctx):
    """Production kernel: register-tiled blocked FW."""
    if ctx.pr is not None:
        for name, attempt in _predecessor_methods(ctx):
            if attempt():
                ctx.meta["predecessors"] = name
                ctx.loop_free = name == "witness"
                return None
            # the method gave up; it may have written predecessors (witness.run)
            _seed_predecessors(ctx.cp, ctx.d, ctx.pr, ctx.n, ctx.plan.inf)
        # a predecessor register beside each cell: the blocked kernels (B = 64)
        ctx.meta["predecessors"] = "blocked"
        return _run_blocked(ctx, ctx.lay.tile)
    return _fast_distances(ctx)


def _fast_distances(ctx):
    """``fast`` without predecessors on ``ctx.d`` (also the first half of witness.run)."""
    dt = ctx.dtype
    dev = _device()
    requested = ctx.plan.options.get("fast_variant")
    if dev["cc"] < 80 and requested == "async":
        requested = "tiled"   # cp.async needs sm_80
    requested = _variant_fits(dt, requested)
    variant = fast_variant(dt, requested)
    if variant == WIDE:
        return wide.run(ctx)
    if variant == "pipe":
        return _run_pipe(ctx)
    cfg = fast_config(dt, dev["smem_optin"], requested)
    if cfg["b"] != ctx.lay.tile:      # a run with predecessors is laid out in 64-tiles: "vec"'s
        cfg = fast_config(dt, dev["smem_optin"], "vec")
    b, clamp = cfg["b"], ctx.clamp
    s1, s2 = fast_smem(dt.itemsize, b)
    s3 = cfg["smem3"]
    _check_smem(ctx.plan, max(s1, s2, s3))
    group = fast_group(dt, cfg)
    k1 = modules.kernel("fast.cu", modules.name_expression("fw_fast_p1", dt, b, clamp), group, dynamic_smem=s1)
    k2 = modules.kernel("fast.cu", modules.name_expression("fw_fast_p2", dt, b, clamp), group, dynamic_smem=s2)
    if cfg["p3"] == "fw_blockedvec_p3":
        k3 = modules.kernel("blocked.cu", fast_expr(dt, cfg, clamp), blocked_group(dt, b), dynamic_smem=s3)
    else:
        k3 = modules.kernel("fast.cu", fast_expr(dt, cfg, clamp), group, dynamic_smem=s3)
    tiles = ctx.lay.tiles
    for r in range(tiles):
        args = (ctx.d, ctx.p, np.int32(r), ctx.ninf)
        ctx.launch("phase1", k1, (1,), (16, 16), args, shared_mem=s1)
        if tiles > 1:
            ctx.launch("phase2", k2, (tiles - 1, 2), (16, 16), args, shared_mem=s2)
            ctx.launch("phase3", k3, (tiles - 1, tiles - 1), cfg["threads"], args, shared_mem=s3)
        ctx.report(r + 1, tiles)


#: how ``fast`` computes predecessors (options["predecessor_method"]; by default the
#: ones that apply, fastest first, then "blocked")
PREDECESSOR_METHODS = ("keyed", "witness", "blocked")


def _predecessor_methods(ctx):
    """``[(name, attempt)]`` to try in order; ``attempt()`` is False, with the start
    matrix in ``ctx.d``, where the method gave up.  Keys run at int32's rate, so they go
    first unless the dtype itself is faster (witness.KEYS_SLOWER)."""
    plan = ctx.plan
    requested = plan.options.get("predecessor_method")
    if requested not in (None, *PREDECESSOR_METHODS):
        raise FloydwarpError(f"predecessor_method={requested!r} is not one of {', '.join(PREDECESSOR_METHODS)}")
    if requested:
        order = [requested]
    elif ctx.dtype.name in witness.KEYS_SLOWER:
        order = ["witness", "keyed"]
    else:
        order = ["keyed", "witness"]
    kp = keyed.plan_keys(plan, ctx.n) if "keyed" in order and _variant_fits(np.int32, WIDE) == WIDE else None
    wp = None
    if "witness" in order and witness.shape(ctx.dtype, ctx.n).smem <= _device()["smem_optin"]:
        keys_next = kp is not None and "keyed" in order[order.index("witness"):]
        wp = witness.plan_witness(plan, ctx.n, keys_next)
    methods = {}
    if kp is not None:
        methods["keyed"] = functools.partial(keyed.run, ctx, kp)
    if wp is not None:
        methods["witness"] = functools.partial(witness.run, ctx, wp, _fast_distances)
    return [(name, methods[name]) for name in order if name in methods]


def _variant_fits(dtype, requested):
    """The requested variant, or "vec" where "pipe" or "wide" would be chosen but its
    kernels need more shared memory per block than this device has (minplus.cu: 80 KiB
    for 4-byte types; Turing allows 64)."""
    variant = fast_variant(dtype, requested)
    need = {"pipe": lambda: max(pipe_smem(dtype)), WIDE: lambda: panel.minplus_shape(dtype)[3]}.get(variant)
    if need is not None and need() > _device()["smem_optin"]:
        return "vec"
    return requested


# ---------------------------------------------------------------------- registration


@register("gpu", "out-of-core", predecessors=False, bytes_moved=traffic.out_of_core_model,
          description="the matrix in pinned host memory (or a memory-mapped file with workdir=DIR), streamed "
                      "through the GPU in wide panels on several CUDA streams; 'fast' switches to it when the "
                      "matrix does not fit in GPU memory or max_gpu_memory")
def _out_of_core(graph, plan):
    """Out-of-core: the matrix in host memory, streamed through the GPU."""
    return ooc.solve_out_of_core(graph, plan)
