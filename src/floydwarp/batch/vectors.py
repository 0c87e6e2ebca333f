"""Whole-vector min-plus steps on padded rows, written as LLVM vector code (Numba intrinsics).

The batch kernels (kernels.py) relax rows of ``nv`` vectors of ``lanes(dtype)`` entries
(``VECTOR_BYTES`` each).  Written as plain Numba loops, LLVM fully unrolls a row of one or
two vectors before its loop vectorizer runs and then cannot put the unrolled scalars back
into vectors (the row being read and the row being written may alias): the relaxation ran
as scalar ``cmov`` chains.  These intrinsics emit the vector operations themselves -- one
load, add, compare-select and store per vector, and a loop over the row's vectors -- so the
k-loop runs on full vectors for every graph size and dtype.

Arithmetic follows numeric.py, with one addition for unsigned dtypes:

* unsigned integers add *saturating* (``vpaddus*``): INF is the dtype's maximum, and
  INF + anything stays INF, so uint8 holds distances up to 254 with 32 lanes a vector;
* signed integers add in the dtype (INF = max // 2 makes every sum of two entries
  representable) and, with ``clamp``, keep every candidate at or above ``lo`` = -INF;
* floats add in IEEE arithmetic; a candidate wins only when strictly smaller (NaN never does).

Both rows of a step are read before its store, vector by vector, so a row may be relaxed
through itself (row k at pivot k).
"""
from __future__ import annotations

import numpy as np
from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

#: bytes of one vector: AVX2's ymm (LLVM splits it on narrower machines, widens nothing)
VECTOR_BYTES = 32


def lanes(dtype) -> int:
    """Entries of ``dtype`` in one vector."""
    return max(1, VECTOR_BYTES // np.dtype(dtype).itemsize)


class _Ops:
    """LLVM IR for vectors of one dtype's entries: ``plus``, ``less``, ``min``, ``clamped``."""

    def __init__(self, builder, dtype, ty):
        self.builder, self.dtype, self.ty = builder, dtype, ty

    def plus(self, x, y):
        b, dt = self.builder, self.dtype
        if isinstance(dt, types.Float):
            return b.fadd(x, y)
        if dt.signed:
            return b.add(x, y)
        fn = cgutils.get_or_insert_function(b.module, ir.FunctionType(self.ty, [self.ty, self.ty]),
                                            f"llvm.uadd.sat.v{self.ty.count}i{dt.bitwidth}")
        return b.call(fn, [x, y])

    def equal(self, x, y):
        b = self.builder
        return b.fcmp_ordered("==", x, y) if isinstance(self.dtype, types.Float) else b.icmp_signed("==", x, y)

    def less(self, x, y):
        b, dt = self.builder, self.dtype
        if isinstance(dt, types.Float):
            return b.fcmp_ordered("<", x, y)
        return (b.icmp_signed if dt.signed else b.icmp_unsigned)("<", x, y)

    def min(self, x, y):
        """``x`` where it is strictly below ``y``, else ``y``."""
        return self.builder.select(self.less(x, y), x, y)

    def clamped(self, x, lo, clamp):
        """``max(x, lo)`` where ``clamp`` (a Python bool: which code to emit) holds."""
        return self.builder.select(self.less(lo, x), x, lo) if clamp else x


def _splat(builder, value, vt):
    zeros = ir.Constant(ir.VectorType(ir.IntType(32), vt.count), [0] * vt.count)
    undef = ir.Constant(vt, ir.Undefined)
    return builder.shuffle_vector(builder.insert_element(undef, value, ir.Constant(ir.IntType(32), 0)), undef, zeros)


class _Rows:
    """Pointers into the 1-D arrays of one intrinsic call, as scalars or as vectors."""

    def __init__(self, context, builder, arrtypes, arrays):
        self.builder = builder
        self.data = [context.make_array(t)(context, builder, a).data for t, a in zip(arrtypes, arrays)]
        dtype = arrtypes[0].dtype
        self.scalar = context.get_value_type(dtype)
        self.vector = ir.VectorType(self.scalar, lanes(np.dtype(str(dtype))))
        self.align = dtype.bitwidth // 8

    def ptr(self, which, index, vector):
        p = self.builder.gep(self.data[which], [index])
        return self.builder.bitcast(p, self.vector.as_pointer()) if vector else p

    def load(self, which, index, vector=True):
        return self.builder.load(self.ptr(which, index, vector), align=self.align)

    def store(self, value, which, index):
        self.builder.store(value, self.ptr(which, index, True), align=self.align)


def _vector_loop(builder, nv, nv_type, step, body):
    """``body(offset)`` for the offsets ``0, step, ..., (nv - 1) * step`` of a row: straight-line
    code when ``nv`` is a compile-time constant (Numba literal), else a loop."""
    if isinstance(nv_type, types.IntegerLiteral):
        for v in range(nv_type.literal_value):
            body(ir.Constant(nv.type, v * step))
        return
    with cgutils.for_range(builder, nv) as loop:
        body(builder.mul(loop.index, ir.Constant(loop.index.type, step)))


def _same_dtype(*arrays):
    first = arrays[0]
    return all(isinstance(a, types.Array) and a.ndim == 1 and a.dtype == first.dtype for a in arrays)


def _both_ways(context, builder, clamp, clamp_type, emit):
    """``emit(True)`` where the runtime ``clamp`` holds, else ``emit(False)``: the test is
    made once a call, not once a vector."""
    with builder.if_else(context.cast(builder, clamp, clamp_type, types.boolean)) as (yes, no):
        with yes:
            emit(True)
        with no:
            emit(False)


@intrinsic
def minplus_row(typingctx, out, oi, x, xi, a, r, ri, nv, lo, clamp):
    """``out[oi:oi + W] = min(x[xi:xi + W], max(a + r[ri:ri + W], lo))`` for ``W = nv *
    lanes`` entries (``max`` only with ``clamp``)."""
    if not _same_dtype(out, x, r):
        return None
    sig = types.void(out, oi, x, xi, a, r, ri, nv, lo, clamp)

    def codegen(context, builder, signature, args):
        out_, oi_, x_, xi_, a_, r_, ri_, nv_, lo_, clamp_ = args
        types_ = signature.args
        dtype = types_[0].dtype
        rows = _Rows(context, builder, (types_[0], types_[2], types_[5]), (out_, x_, r_))
        vops = _Ops(builder, dtype, rows.vector)
        va = _splat(builder, context.cast(builder, a_, types_[4], dtype), rows.vector)
        vlo = _splat(builder, context.cast(builder, lo_, types_[8], dtype), rows.vector)

        def emit(clamped):
            def body(off):
                cand = vops.clamped(vops.plus(va, rows.load(2, builder.add(ri_, off))), vlo, clamped)
                rows.store(vops.min(cand, rows.load(1, builder.add(xi_, off))), 0, builder.add(oi_, off))

            _vector_loop(builder, nv_, types_[7], rows.vector.count, body)

        _both_ways(context, builder, clamp_, types_[9], emit)
        return context.get_dummy_value()

    return sig, codegen


@intrinsic
def minplus_row_pair(typingctx, d, di, k, dkk1, r, ri, r2, nv, lo, clamp):
    """Row ``i`` (it starts at ``d[di]``) through pivots ``k`` and ``k + 1`` at once:
    ``a = d[di + k]``, ``a2 = min(d[di + k + 1], max(a + dkk1, lo))`` (row i's entry k + 1
    after step k), then ``d[di:di + W] = min(d[di:di + W], max(min(a + r[ri:], a2 +
    r2[0:]), lo))``, where ``r`` is row k and ``r2`` is row k + 1 after step k."""
    if not _same_dtype(d, r, r2):
        return None
    sig = types.void(d, di, k, dkk1, r, ri, r2, nv, lo, clamp)

    def codegen(context, builder, signature, args):
        d_, di_, k_, dkk1_, r_, ri_, r2_, nv_, lo_, clamp_ = args
        types_ = signature.args
        dtype = types_[0].dtype
        rows = _Rows(context, builder, (types_[0], types_[4], types_[6]), (d_, r_, r2_))
        vops = _Ops(builder, dtype, rows.vector)
        vlo = _splat(builder, context.cast(builder, lo_, types_[8], dtype), rows.vector)
        vdkk1 = _splat(builder, context.cast(builder, dkk1_, types_[3], dtype), rows.vector)
        at = builder.add(di_, k_)
        # d[i, k] and d[i, k + 1] broadcast straight from memory: no scalar chain before the vectors
        va = _splat(builder, rows.load(0, at, vector=False), rows.vector)
        va2_start = _splat(builder, rows.load(0, builder.add(at, ir.Constant(at.type, 1)), vector=False), rows.vector)

        def emit(clamped):
            va2 = vops.min(vops.clamped(vops.plus(va, vdkk1), vlo, clamped), va2_start)

            def body(off):
                cand = vops.min(vops.plus(va, rows.load(1, builder.add(ri_, off))), vops.plus(va2, rows.load(2, off)))
                cand = vops.clamped(cand, vlo, clamped)
                at_ = builder.add(di_, off)
                rows.store(vops.min(cand, rows.load(0, at_)), 0, at_)

            _vector_loop(builder, nv_, types_[7], rows.vector.count, body)

        _both_ways(context, builder, clamp_, types_[9], emit)
        return context.get_dummy_value()

    return sig, codegen


def _convert(builder, value, src, dst, vt):
    """Vector ``value`` of Numba dtype ``src`` as dtype ``dst`` (vector type ``vt``); the
    values already fit (distances below INF, or clipped)."""
    if src == dst:
        return value
    if isinstance(src, types.Float):
        if isinstance(dst, types.Float):
            return (builder.fpext if dst.bitwidth > src.bitwidth else builder.fptrunc)(value, vt)
        return (builder.fptosi if dst.signed else builder.fptoui)(value, vt)
    if isinstance(dst, types.Float):
        return (builder.sitofp if src.signed else builder.uitofp)(value, vt)
    if dst.bitwidth > src.bitwidth:
        return (builder.sext if src.signed else builder.zext)(value, vt)
    return builder.trunc(value, vt) if dst.bitwidth < src.bitwidth else value


def _lanes_past(context, builder, valid, valid_type, count, bitwidth):
    """The lanes at or past ``valid`` of a vector of ``count`` lanes, as a mask: the lane
    numbers are compared in a ``bitwidth``-bit integer (the dtype's own width), so the index
    vector stays one register (32 int64 lanes for a uint8 vector took eight compares and the
    packing of their results)."""
    lane_t = ir.IntType(bitwidth)
    lane = ir.Constant(ir.VectorType(lane_t, count), list(range(count)))
    limit = context.cast(builder, valid, valid_type, types.int64)
    zero, full = ir.Constant(limit.type, 0), ir.Constant(limit.type, count)
    limit = builder.select(builder.icmp_signed("<", limit, zero), zero,
                           builder.select(builder.icmp_signed(">", limit, full), full, limit))
    return builder.icmp_signed(">=", lane, _splat(builder, builder.trunc(limit, lane_t) if bitwidth < 64 else limit,
                                                   lane.type))


@intrinsic
def store_vector(typingctx, out, oi, d, di, valid, threshold, out_inf, top):
    """One vector of a stored row: for the ``lanes(d.dtype)`` entries ``out[oi + l]``, the
    distance ``d[di + l]`` where ``l < valid`` and it is below ``threshold`` (at most ``top``,
    the clip), else ``out_inf``; converted to ``out``'s dtype.  ``d`` is read whole: lanes
    at or past ``valid`` may hold anything (the next row, the scratch's slack)."""
    if not (isinstance(out, types.Array) and out.ndim == 1 and isinstance(d, types.Array) and d.ndim == 1):
        return None
    sig = types.void(out, oi, d, di, valid, threshold, out_inf, top)

    def codegen(context, builder, signature, args):
        out_, oi_, d_, di_, valid_, threshold_, out_inf_, top_ = args
        types_ = signature.args
        src, dst = types_[2].dtype, types_[0].dtype
        rows = _Rows(context, builder, (types_[2],), (d_,))
        count = rows.vector.count
        out_vt = ir.VectorType(context.get_value_type(dst), count)
        ops = _Ops(builder, src, rows.vector)
        v = rows.load(0, di_)
        clipped = ops.min(v, _splat(builder, context.cast(builder, top_, types_[7], src), rows.vector))
        reachable = ops.less(v, _splat(builder, context.cast(builder, threshold_, types_[5], src), rows.vector))
        past = _lanes_past(context, builder, valid_, types_[4], count, dst.bitwidth)
        keep = builder.and_(reachable, builder.not_(past))
        inf_v = _splat(builder, context.cast(builder, out_inf_, types_[6], dst), out_vt)
        value = builder.select(keep, _convert(builder, clipped, src, dst, out_vt), inf_v)
        data = context.make_array(types_[0])(context, builder, out_).data
        ptr = builder.bitcast(builder.gep(data, [oi_]), out_vt.as_pointer())
        builder.store(value, ptr, align=dst.bitwidth // 8)
        return context.get_dummy_value()

    return sig, codegen


@intrinsic
def load_vector(typingctx, d, di, m, mi, valid, inf, missing, use_missing, unit):
    """One vector of a graph's start row from its dense matrix: for the ``L = lanes(d.dtype)``
    entries ``d[di + l]``, INF where ``l >= valid`` or ``m[mi + l]`` is absent (+inf, or
    equal to ``missing`` where ``use_missing``), else 1 (``unit``) or the entry converted to
    ``d``'s dtype.  ``m`` is read whole (L entries of its dtype: the caller keeps them inside
    the matrix); lanes at or past ``valid`` may hold anything (the next row, padding).
    Returns whether *any* of the L entries read holds NaN or -inf, those lanes included:
    the caller then looks for a bad entry of the graph itself.  One load, compare and
    select a vector, where LLVM's own vectorizer left rows of 1-59 entries to its scalar
    remainder loop; the lane test is made in ``d``'s width (32 byte lanes for uint8, not
    32 int64 ones)."""
    if not (isinstance(d, types.Array) and d.ndim == 1 and isinstance(m, types.Array) and m.ndim == 1):
        return None
    sig = types.boolean(d, di, m, mi, valid, inf, missing, use_missing, unit)

    def codegen(context, builder, signature, args):
        d_, di_, m_, mi_, valid_, inf_, missing_, use_missing_, unit_ = args
        types_ = signature.args
        dst, src = types_[0].dtype, types_[2].dtype
        out = _Rows(context, builder, (types_[0],), (d_,))
        count = out.vector.count
        in_vt = ir.VectorType(context.get_value_type(src), count)
        data = context.make_array(types_[2])(context, builder, m_).data
        x = builder.load(builder.bitcast(builder.gep(data, [mi_]), in_vt.as_pointer()), align=src.bitwidth // 8)
        ops = _Ops(builder, src, in_vt)
        wrong = ir.Constant(ir.IntType(1), 0)
        absent = ir.Constant(ir.VectorType(ir.IntType(1), count), [0] * count)
        if isinstance(src, types.Float):
            absent = builder.fcmp_ordered("==", x, ir.Constant(in_vt, [float("inf")] * count))
            bad = builder.fcmp_unordered("<=", x, ir.Constant(in_vt, [float("-inf")] * count))    # NaN or -inf
            fn = cgutils.get_or_insert_function(builder.module, ir.FunctionType(ir.IntType(1), [bad.type]),
                                                f"llvm.vector.reduce.or.v{count}i1")
            wrong = builder.call(fn, [bad])
        is_missing = ops.equal(x, _splat(builder, context.cast(builder, missing_, types_[6], src), in_vt))
        use = context.cast(builder, use_missing_, types_[7], types.boolean)
        absent = builder.select(use, builder.or_(absent, is_missing), absent)
        outside = _lanes_past(context, builder, valid_, types_[4], count, dst.bitwidth)
        one = _splat(builder, ir.Constant(out.scalar, 1.0 if isinstance(dst, types.Float) else 1), out.vector)
        value = builder.select(context.cast(builder, unit_, types_[8], types.boolean), one,
                               _convert(builder, x, src, dst, out.vector))
        vinf = _splat(builder, context.cast(builder, inf_, types_[5], dst), out.vector)
        out.store(builder.select(builder.or_(absent, outside), vinf, value), 0, di_)
        return wrong

    return sig, codegen


@intrinsic
def minplus_row_last(typingctx, d, di, p, pi, a, r, ri, nv, k):
    """One pivot of a row with the last pivot that improved each entry (Graphormer's
    ``path``): ``c = a + r[ri:ri + W]``; where ``c < d[di:di + W]``, ``d`` takes ``c`` and
    ``p[pi:pi + W]`` takes ``k``.  ``d``, ``r`` and ``p`` share one dtype (an unsigned one:
    saturating sums, ``k`` below its maximum), so both rows move in vectors of one width."""
    if not _same_dtype(d, r, p):
        return None
    sig = types.void(d, di, p, pi, a, r, ri, nv, k)

    def codegen(context, builder, signature, args):
        d_, di_, p_, pi_, a_, r_, ri_, nv_, k_ = args
        types_ = signature.args
        dtype = types_[0].dtype
        rows = _Rows(context, builder, (types_[0], types_[2], types_[5]), (d_, p_, r_))
        vops = _Ops(builder, dtype, rows.vector)
        va = _splat(builder, context.cast(builder, a_, types_[4], dtype), rows.vector)
        vk = _splat(builder, context.cast(builder, k_, types_[8], dtype), rows.vector)

        def body(off):
            at_d, at_p = builder.add(di_, off), builder.add(pi_, off)
            old = rows.load(0, at_d)
            cand = vops.plus(va, rows.load(2, builder.add(ri_, off)))
            wins = vops.less(cand, old)
            rows.store(builder.select(wins, cand, old), 0, at_d)
            rows.store(builder.select(wins, vk, rows.load(1, at_p)), 1, at_p)

        _vector_loop(builder, nv_, types_[7], rows.vector.count, body)
        return context.get_dummy_value()

    return sig, codegen


@intrinsic
def prefetch(typingctx, address):
    """Ask for the cache line at the integer ``address`` (``llvm.prefetch``: read, into every
    cache level); never faults, whatever the address."""
    if not isinstance(address, types.Integer):
        return None

    def codegen(context, builder, signature, args):
        i8p = ir.IntType(8).as_pointer()
        i32 = ir.IntType(32)
        # declare_intrinsic mangles the pointer's name as this llvmlite's LLVM expects it
        fn = builder.module.declare_intrinsic("llvm.prefetch", [i8p], ir.FunctionType(ir.VoidType(),
                                                                                       [i8p, i32, i32, i32]))
        builder.call(fn, [builder.inttoptr(args[0], i8p), ir.Constant(i32, 0), ir.Constant(i32, 3),
                          ir.Constant(i32, 1)])
        return context.get_dummy_value()

    return types.void(address), codegen
