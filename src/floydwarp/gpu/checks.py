"""Whole-matrix checks on the device (kernels/checks.cu)."""
from __future__ import annotations

import numpy as np

from . import modules
from .panel import pitched

_BLOCK = 256


def any_in_range(a, lo, hi) -> bool:
    """Whether some entry of the CuPy array ``a`` (a matrix is best C-contiguous or row-pitched:
    others are copied first) lies in [lo, hi)."""
    import cupy as cp

    if a.size == 0:
        return False
    m = a if a.ndim == 2 else a.reshape(-1, a.shape[-1])
    if m.ndim != 2 or m.strides[1] != m.itemsize or m.strides[0] % m.itemsize:
        m = cp.ascontiguousarray(m)
    rows, cols = m.shape
    expr = modules.name_expression("fw_any_in_range", m.dtype)
    kern = modules.kernel("checks.cu", expr)
    found = cp.zeros(1, dtype=cp.int32)
    grid = modules.strided_grid(rows, cols, _BLOCK)
    t = m.dtype.type
    kern(grid, (_BLOCK,), (m, np.int64(m.strides[0] // m.itemsize), np.int32(rows), np.int32(cols),
                           t(lo), t(hi), found))
    return bool(int(found.get()[0]))


def count_zeros_off_diagonal(w) -> int:
    """Zeros of the n x n CuPy matrix ``w`` (a row-pitched view allowed) off its diagonal.
    CuPy's own count or sum compiles a reduction on first use, 3.5 s where its disk cache is
    cold."""
    import cupy as cp

    n = w.shape[0]
    if n == 0:
        return 0
    kern = modules.kernel("checks.cu", modules.name_expression("fw_count_zeros_off_diagonal", w.dtype))
    count = cp.zeros(1, dtype=cp.uint64)
    grid = modules.strided_grid(n, n, _BLOCK)
    kern(grid, (_BLOCK,), (*pitched(w), np.int32(n), count))
    return int(count.get()[0])
