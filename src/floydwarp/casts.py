"""Distances converted to another dtype or sentinel: the one conversion every writer and
converter of distances uses (:func:`cast_distances`), the float64 view of a result, and exact
scalars of a dtype.  numeric.py says what the dtypes and their INF are; this module moves
whole matrices (NumPy or CuPy) between them.
"""
from __future__ import annotations

import contextlib
import functools

import numpy as np

from . import team
from .arrays import array_module
from .errors import DtypeError
from .numeric import inf_of


def to_float64(dist, inf):
    """Distances as float64 with ``np.inf`` for unreachable pairs (float64 rounds integers past 2**53)."""
    return cast_distances(dist, inf, np.float64)


class NotRepresentable(DtypeError):
    """A reachable distance that a conversion's target cannot hold exactly; ``index`` is its
    flat index in the block converted, ``value`` the distance."""

    def __init__(self, message, index: int, value):
        super().__init__(message)
        self.index, self.value = index, value


def cast_distances(dist, inf, dtype, sentinel=None, *, unreachable=None, exact=False):
    """Distances ``dist`` (entries at or above ``inf`` unreachable) as ``dtype``, every unreachable
    entry exactly ``sentinel`` (default: ``dtype``'s own INF).  NumPy or CuPy, as ``dist`` is.

    The one conversion every writer and converter of distances uses.  It casts the reachable
    values first and then inserts the sentinel typed as the target, never
    ``where(unreachable, sentinel, dist)``: that computes in a type NumPy picks from the operands,
    which under NumPy 2 is the block's own (int16 wraps 2**30 - 1 to -1, float32 rounds it to
    2**30) and under NumPy 1 depends on the value, so files would differ with the NumPy version.

    ``unreachable``: a boolean mask to use instead of ``dist >= inf``.  ``exact``: refuse
    (:class:`NotRepresentable`) a reachable value that ``dtype`` does not hold exactly or that
    would read back as unreachable (at or above the sentinel).  A sentinel ``dtype`` cannot hold
    exactly is refused too.
    """
    xp = array_module(dist)
    dtype = np.dtype(dtype)
    if sentinel is None:
        sentinel = inf_of(dtype)
    typed = _exact_sentinel(sentinel, dtype)
    if unreachable is None:
        bound = _one_pass_bound(dist, inf, dtype) if xp is np and not exact else None
        if bound is not None:
            return _host_cast(dist, bound, typed, dtype)
        unreachable = dist >= inf
    source = dist
    from_float = np.dtype(dist.dtype).kind == "f"
    if from_float and dtype.kind != "f":
        # inf has no integer value: zero it first, with a zero of the block's own type (no promotion)
        source = xp.where(unreachable, xp.zeros((), dtype=dist.dtype), dist)
    # only a float source can overflow or be invalid in the cast (errstate costs 1 us a call)
    with np.errstate(invalid="ignore", over="ignore") if from_float or exact else contextlib.nullcontext():
        out = source.astype(dtype)
        if exact:
            bad = ~unreachable & ((out.astype(dist.dtype) != dist) | (out >= typed))
            if bool(bad.any()):
                i = int(xp.flatnonzero(bad.ravel())[0])
                value = dist.ravel()[i].item()
                raise NotRepresentable(f"distance {value!r} does not fit {dtype.name} exactly below "
                                       f"{typed.item()!r} (which means unreachable)", i, value)
    xp.copyto(out, typed, where=unreachable)       # not out[mask] = ...: CuPy masks stop at 2**31 entries
    return out


def _one_pass_bound(dist, inf, target):
    """``inf`` as an exact scalar that passes.to_float_rows compares a host matrix's entries with,
    when it does this cast: a 2-D matrix of native numbers (no float16, no uint64) to float32
    or float64, which round as NumPy's cast does; else None."""
    if target.char not in "fd" or dist.ndim != 2 or not _one_pass_source(dist.dtype):
        return None
    if type(inf) is dist.dtype.type:              # the matrix's own INF (a Result's)
        return inf
    if dist.dtype.kind == "f":
        return np.float64(inf)
    value = inf.item() if isinstance(inf, np.generic) else inf
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if not isinstance(value, int) or not -2 ** 63 <= value < 2 ** 63:
        return None
    return np.int64(value)                        # integers compared exactly


@functools.lru_cache(maxsize=32)
def _one_pass_source(source) -> bool:
    return source.isnative and (source.char in "fd" or source.kind == "i"
                                or (source.kind == "u" and source.itemsize <= 4))


def _host_cast(dist, bound, typed, dtype):
    from .passes import to_float_rows        # imports Numba: only when such a cast runs

    out = np.empty(dist.shape, dtype)
    n = dist.shape[0]
    team.run(to_float_rows, n, dist, bound, typed, out, threads=team.shares(n, dist.size))
    return out


def _exact_sentinel(sentinel, dtype):
    """:func:`exact_scalar` of a sentinel, remembered (the same few are asked for again and again)."""
    try:
        return _exact_sentinel_cached(sentinel, dtype)
    except TypeError:                       # unhashable: a 0-d array
        return exact_scalar(sentinel, dtype)


@functools.lru_cache(maxsize=64)
def _exact_sentinel_cached(sentinel, dtype):
    return exact_scalar(sentinel, dtype)


def exact_scalar(value, dtype):
    """``value`` (a sentinel, an INF read from a file) as a scalar of ``dtype``, refused
    (:class:`DtypeError`) when it does not convert exactly -- alike under NumPy 1 and 2."""
    dtype = np.dtype(dtype)
    plain = value.item() if isinstance(value, np.generic) else value
    if dtype.kind == "i" and not np.iinfo(dtype).min <= plain <= np.iinfo(dtype).max:
        typed = None                                # NumPy 1 would wrap it, NumPy 2 raise
    else:
        typed = dtype.type(plain)
    # compared as Python numbers: NumPy 2 would round ``plain`` to ``dtype`` before comparing
    if typed is None or typed.item() != plain:
        raise DtypeError(f"{plain!r} is not exactly a value of {dtype.name}")
    return typed
