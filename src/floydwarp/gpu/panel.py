"""Wide-round building blocks on arbitrary pitched device buffers (``kernels/minplus.cu``).

A round of blocked Floyd-Warshall with a pivot panel K of width w (a multiple of 64):

1. ``tiles.close_block``: Floyd-Warshall on the w x w pivot block (the in-core ``fast``
   kernels on a view);
2. ``minplus`` with the closed pivot P: row panel R = min(R, P (x) R), column panel
   C = min(C, C (x) P);
3. ``minplus`` for every other tile T = min(T, C[I] (x) R[J]).

``wide.py`` runs these rounds on the whole device matrix, the out-of-core engine
(``ooc.py``) on tiles streamed from host memory, the multi-GPU engine on each rank's
share.  ``minplus`` takes its left operand transposed
into words (``to_words``), as the persistent phase-3 kernels do.
"""
from __future__ import annotations

import dataclasses
import functools
from typing import Any

import numpy as np

from ..errors import FloydwarpError
from . import device, modules

#: tile side of the product's units and of every dimension it accepts
UNIT = 64
#: (rows, words) of the cells each thread owns, per dtype
MINPLUS_SHAPE = (4, 4)
#: shared memory per SM the kernel plans for (H100/H200: 228 KiB, 1 KiB reserved per block)
SMEM_PER_SM = 227 * 1024
#: bands of a last round whose rows go home as they finish (:func:`row_bands`): the copy left
#: after the kernels is one band's.  16 bands at n = 32768 keep ~60 units of the persistent
#: grid per block (its last wave stays full) while the last band's copy is 5 ms of the 80
DELIVERY_BANDS = 16


#: the solve option of the panel products (fast.py and ooc.py declare it)
OPTIONS = {
    "nonneg_products": "False: float32 panel products compare signed sums even when no weight is negative "
                       "(default True: one integer min of the sums' bits)",
}


@dataclasses.dataclass(frozen=True)
class Arith:
    """How a product combines entries.

    ``ninf``: -INF of the dtype, where ``clamp`` stops sums (integer runs with negative
    weights, see numeric.py).  ``nonneg``: every entry is >= 0 (no negative weights), so
    float32 products compare the bits of two sums in one integer min (``NonnegFloat`` in
    kernels/lanes.cuh); other dtypes ignore it."""

    ninf: Any
    clamp: bool = False
    nonneg: bool = False

    @classmethod
    def of(cls, plan) -> "Arith":
        dt = np.dtype(plan.dtype)
        ninf = dt.type(-int(plan.inf)) if dt.kind == "i" else dt.type(-np.inf)
        # options["nonneg_products"] = False: the signed kernels (benchmarks compare them)
        nonneg = plan.options.get("nonneg_products", True) and plan.stats is not None \
            and not plan.stats.has_negative
        return cls(ninf, bool(plan.clamp), nonneg)


def word_dtype(dtype) -> np.dtype:
    """The dtype of ``to_words`` output: int16 pairs travel as uint32 words."""
    dt = np.dtype(dtype)
    return np.dtype(np.uint32) if dt == np.int16 else dt


def _per_word(dtype) -> int:
    return 2 if np.dtype(dtype) == np.int16 else 1


def minplus_shape(dtype):
    """(TM, TN, threads, shared bytes, blocks per SM) of ``fw_minplus`` for a dtype."""
    dt = np.dtype(dtype)
    tm, tn = MINPLUS_SHAPE
    words = UNIT // _per_word(dt)
    threads = (UNIT // tm) * (words // tn)
    wsize = word_dtype(dt).itemsize
    smem = (2 * UNIT * UNIT + 3 * UNIT * words) * wsize
    minb = max(1, min(8, SMEM_PER_SM // smem, 2048 // threads))
    return tm, tn, threads, smem, minb


def variant(dtype, arith: Arith):
    """The (clamp, nonneg) kernel variant that ``minplus`` runs for ``arith``: ``nonneg``
    only changes float32 (integers already add and min in one instruction; there is no
    64-bit three-way min), and a clamped run has negative entries."""
    nonneg = arith.nonneg and not arith.clamp and np.dtype(dtype) == np.float32
    return bool(arith.clamp), nonneg


def _expression(dtype, clamp: bool, nonneg: bool):
    tm, tn, nt, _, minb = minplus_shape(dtype)
    return modules.name_expression("fw_minplus", dtype, tm, tn, nt, minb, clamp, nonneg)


# The launch settings are looked up once: a keyed run (keyed.py) makes thousands of small
# products, whose Python overhead would otherwise outlast their GPU time.  Each kernel is a
# module of its own: one of every variant compiled about twice the code a run calls (0.7-0.9 s
# more where CuPy's disk cache is cold).
@functools.lru_cache(maxsize=None)
def _words_kernel(dtype):
    return modules.kernel("minplus.cu", modules.name_expression("fw_to_words", dtype))


@functools.lru_cache(maxsize=None)
def _minplus_kernel(dtype, clamp: bool, nonneg: bool, device_id: int):
    """``fw_minplus`` for a dtype, and how many of its blocks fit on an SM of device
    ``device_id`` (the current one: ``modules.kernel`` grants the shared memory there)."""
    _, _, threads, smem, _ = minplus_shape(dtype)
    kern = modules.kernel("minplus.cu", _expression(dtype, clamp, nonneg), dynamic_smem=smem)
    return kern, device.occupancy(kern, threads, smem)


def pitch(a) -> int:
    """Elements from one row of the 2-D device view ``a`` to the next (rows contiguous)."""
    if a.ndim != 2 or a.strides[1] != a.itemsize:
        raise FloydwarpError("kernel operands must be 2-D arrays with contiguous rows")
    return a.strides[0] // a.itemsize


def pitched(a) -> tuple:
    """``(a, its pitch)``: how the kernels take a 2-D device view."""
    return a, np.int64(pitch(a))


def copy(dst, src) -> None:
    """``dst[...] = src`` for 2-D device views of one shape and dtype (rows contiguous, any
    pitch), as one cudaMemcpy2DAsync on the current stream.  CuPy's copy of a pitched view
    is an elementwise kernel, which CuPy compiles per dtype where its disk cache is cold
    (0.1 s, outside the ``compile`` clock)."""
    import cupy as cp

    if dst.shape != src.shape or dst.dtype != src.dtype:
        raise FloydwarpError(f"copy of a {src.dtype} {src.shape} view into a {dst.dtype} {dst.shape} one")
    rows, cols = src.shape
    if rows and cols:
        rt = cp.cuda.runtime
        rt.memcpy2DAsync(dst.data.ptr, pitch(dst) * dst.itemsize, src.data.ptr, pitch(src) * src.itemsize,
                         cols * src.itemsize, rows, rt.memcpyDeviceToDevice, cp.cuda.get_current_stream().ptr)


def _check_multiple(what, x):
    if x % UNIT:
        raise FloydwarpError(f"{what} = {x} is not a multiple of {UNIT}")


def to_words(a, out=None, stream=None, keep=-1):
    """``a`` (rows x cols, a view of a device matrix) transposed into ``fw_minplus``'s
    left-operand format: ``out[k, i] = word(a[i, k])`` (cols x rows).  int32 words are
    ANDed with ``keep`` (keyed predecessors clear their predecessor bits, keyed.py)."""
    import cupy as cp

    dt = np.dtype(a.dtype)
    rows, cols = a.shape
    if out is None:
        out = cp.empty((cols, rows), dtype=word_dtype(dt))
    if rows and cols:
        kern = _words_kernel(dt)
        with on(stream):
            kern(((cols + 31) // 32, (rows + 31) // 32), (32, 8),
                 (*pitched(a), *pitched(out), np.int32(rows), np.int32(cols),
                  np.int32(keep)))
    return out


def on(stream):
    """``with on(stream):`` launches on ``stream``, or on the current stream for None."""
    import contextlib

    return stream if stream is not None else contextlib.nullcontext()


def row_bands(rows: int) -> list[tuple[int, int]]:
    """``rows`` (a multiple of 64) as at most :data:`DELIVERY_BANDS` ranges of whole 64-row units:
    the bands of a last round whose rows go home as they finish (``schedule.run(deliver=)``)."""
    if rows <= 0:
        return []
    step = -(-rows // (DELIVERY_BANDS * UNIT)) * UNIT
    return [(lo, min(lo + step, rows)) for lo in range(0, rows, step)]


def band_skip(skip, lo: int, hi: int) -> tuple[int, int]:
    """``minplus``'s ``skip_rows = (first, count)`` (64-tiles) of a whole matrix, within the
    band of its row tiles ``lo .. hi``."""
    a, b = max(skip[0], lo), min(skip[0] + skip[1], hi)
    return (a - lo, b - a) if a < b else (0, 0)


def minplus(c, at, b, arith: Arith, *, skip_rows=(0, 0), skip_cols=(0, 0), stream=None, blocks=None):
    """``c = min(c, a (x) b)`` in place, with ``at = to_words(a)``, in the arithmetic
    ``arith`` (clamped at -INF, or on non-negative entries).

    ``c`` is M x N, ``at`` K x M (words), ``b`` K x N, all multiples of 64; ``b`` may be
    ``c`` itself (the pivot row panel).  ``skip_rows`` / ``skip_cols`` = (first, count)
    in 64-tiles: those rows / columns of ``c`` are left alone.  ``blocks`` caps the
    persistent grid (tests use it to give blocks long runs of units)."""
    dt = np.dtype(c.dtype)
    m, n = c.shape
    k = at.shape[0]
    if at.shape[1] != m or b.shape != (k, n) or b.dtype != dt or at.dtype != word_dtype(dt):
        raise FloydwarpError(f"minplus operands do not match: c {c.shape} {dt}, at {at.shape} {at.dtype}, "
                             f"b {b.shape} {b.dtype}")
    for what, x in (("rows", m), ("columns", n), ("k", k)):
        _check_multiple(what, x)
    mt = m // UNIT - skip_rows[1]
    nt = n // UNIT - skip_cols[1]
    if mt <= 0 or nt <= 0 or k == 0:
        return c
    _, _, threads, smem, _ = minplus_shape(dt)
    dev = device.current()
    if smem > dev["smem_optin"]:
        raise FloydwarpError(f"the panel product needs {smem} bytes of shared memory per block for {dt.name}; "
                             f"{dev['name']} allows {dev['smem_optin']}")
    kern, per_sm = _minplus_kernel(dt, *variant(dt, arith), dev["id"])
    grid = per_sm * dev["sm_count"]
    if blocks:
        grid = min(grid, int(blocks))
    grid = max(1, min(grid, mt * nt))
    with on(stream):
        kern((grid,), (threads,),
             (*pitched(c), *pitched(at), *pitched(b),
              np.int32(mt), np.int32(nt), np.int32(k // UNIT),
              np.int32(skip_rows[0]), np.int32(skip_rows[1]), np.int32(skip_cols[0]), np.int32(skip_cols[1]),
              dt.type(arith.ninf)), shared_mem=smem)
    return c
