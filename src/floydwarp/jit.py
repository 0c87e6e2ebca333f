"""What every Numba kernel of floydwarp shares: the parallel options of ``prange`` kernels, the
intrinsics that keep sums and selects in the matrix's own type, and the minimum, maximum and
integer tests that LLVM vectorizes in a scan.

Base layer (graph/kernels.py, the batch kernels and every engine's host kernels use it);
imported only by kernel modules (it imports Numba).
"""
from __future__ import annotations

import operator

import numpy as np
from llvmlite import ir
from numba import carray, cfunc, njit, types
from numba.core import cgutils
from numba.core.typing import signature
from numba.extending import intrinsic, overload

#: Parallelize explicit ``prange`` loops only: no implicit parfors from array
#: expressions or copies, no parfor fusion (see cpu/kernels.py's ``copy_of``).
PRANGE_ONLY = {"comprehension": False, "reduction": False, "inplace_binop": False,
                "setitem": False, "numpy": False, "stencil": False, "fusion": False,
                "prange": True}


@intrinsic
def narrow(typingctx, value, arr):
    """``value`` converted to ``arr``'s dtype (Numba widens int32 + int32 to int64).

    An intrinsic, one LLVM cast where it is used: an inlined overload cost the Numba
    passes ~0.1 s per tile kernel to compile (copying its IR into 20-odd call sites)."""
    def codegen(context, builder, sig, args):
        return context.cast(builder, args[0], sig.args[0], sig.return_type)

    return arr.dtype(value, arr), codegen


def _select(better):
    """Codegen of ``b if better(b, a) else a`` in the arguments' common type: one select."""
    def codegen(context, builder, sig, args):
        ty = sig.return_type
        a, b = (context.cast(builder, v, t, ty) for v, t in zip(args, sig.args))
        wins = context.get_function(better, signature(types.boolean, ty, ty))(builder, (b, a))
        return builder.select(wins, b, a)

    return codegen


@intrinsic
def select_min(typingctx, a, b):
    """Python's ``min(a, b)``: ``b if b < a else a`` (a NaN ``b`` never wins), one select.

    An intrinsic: Numba's ``min`` is an overload compiled once per argument type on a cold
    cache (~15 ms each, in the main process and again in the compile helper)."""
    ty = typingctx.unify_types(a, b)
    if isinstance(ty, types.Number):
        return ty(a, b), _select(operator.lt)
    return None


@intrinsic
def select_max(typingctx, a, b):
    """Python's ``max(a, b)``: ``b if b > a else a``, one select (see :func:`select_min`)."""
    ty = typingctx.unify_types(a, b)
    if isinstance(ty, types.Number):
        return ty(a, b), _select(operator.gt)
    return None


@intrinsic
def pointer(typingctx, address, like):
    """The integer ``address`` as a pointer to entries of ``like``'s dtype (an array)."""
    if not isinstance(address, types.Integer) or not isinstance(like, types.Array):
        return None
    ptr = types.CPointer(like.dtype)

    def codegen(context, builder, sig, args):
        return builder.inttoptr(args[0], context.get_value_type(ptr))

    return ptr(address, like), codegen


@njit(inline="always")
def array_at(address, length, like):
    """The ``length`` entries of ``like``'s dtype at ``address`` as a 1-D array (memory that
    the caller keeps alive: a matrix read in place, a kernel's scratch)."""
    return carray(pointer(address, like), (length,))


_STEPS: dict = {}


def step(build, key, signature):
    """A C function pointer (a Numba ``cfunc`` in Numba's cache) of ``build(*key)``, made once a
    process: a kernel that takes steps of one ``signature`` as arguments is compiled once for
    all of them, where calling jitted functions links their code into every version of the
    kernel and optimizes it again (batch/steps.py, cpu/bfs_kernels.py).  ``key`` (dtypes) must
    tell the steps apart: their closures are part of Numba's cache key, their signature alike."""
    found = _STEPS.get((build, key))
    if found is None:
        found = _STEPS[build, key] = cfunc(signature, cache=True)(build(*key))
    return found


def _reduction(name, wins):
    """An intrinsic ``name(a, b)`` of two numbers of one type, as LLVM's loop vectorizer turns
    into a vector reduction: ``llvm.minnum`` / ``llvm.maxnum`` for floats (a compare-and-select
    on floats stays scalar without fast-math: the scan ran at a third of the speed), a
    compare-and-select (``b`` where it ``wins``, "<" or ">") for integers."""
    def typer(typingctx, a, b):
        if a != b or not isinstance(a, (types.Float, types.Integer)):
            return None

        def codegen(context, builder, sig, args):
            x, y = args
            if isinstance(a, types.Integer):
                compare = builder.icmp_signed if a.signed else builder.icmp_unsigned
                return builder.select(compare(wins, y, x), y, x)
            ty = context.get_value_type(a)
            fn = cgutils.get_or_insert_function(builder.module, ir.FunctionType(ty, [ty, ty]),
                                                f"llvm.{name}.f{a.bitwidth}")
            return builder.call(fn, [x, y])

        return a(a, b), codegen

    typer.__name__ = name
    return intrinsic(typer)


least = _reduction("minnum", "<")
greatest = _reduction("maxnum", ">")


def fractional(x):
    """Whether ``x`` is not an integer (always False for integer types, at compile time)."""


@overload(fractional)
def _fractional_impl(x):
    if isinstance(x, types.Integer):
        return lambda x: False
    return lambda x: np.floor(x) != x
