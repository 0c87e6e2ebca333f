"""Whole-matrix checks on the device (kernels/checks.cu)."""
from __future__ import annotations

import numpy as np

from . import modules

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
    grid = (max(1, min(-(-cols // _BLOCK), 8)), max(1, min(rows, 65535)))
    t = m.dtype.type
    kern(grid, (_BLOCK,), (m, np.int64(m.strides[0] // m.itemsize), np.int32(rows), np.int32(cols),
                           t(lo), t(hi), found))
    return bool(int(found.get()[0]))
