"""Dense weight matrices as a `Graph` reads them: the value that means "no edge", the
scan's answers (graph/kernels.py's ``dense_scan``) joined into statistics and an edge count,
and the refusal of NaN and -inf weights."""
from __future__ import annotations

import math
import numbers

import numpy as np

from ..arrays import array_module
from ..errors import FloydwarpError
from ..numeric import WeightStats

#: the Numba passes' "no mask"
NO_MASK = np.zeros((0, 0), np.bool_)


def missing_value(missing, dtype):
    """``missing`` as a value of the matrix dtype, or None when no entry can equal it
    (NaN, +inf -- absent anyway in floats --, or a value an integer dtype cannot hold)."""
    if missing is None:
        return None
    if not isinstance(missing, numbers.Real):      # float() would parse "3", and raise raw errors on others
        raise FloydwarpError(f"missing must be a real number (the entry that means no edge); got {missing!r}")
    value = float(missing)
    if math.isnan(value) or value == math.inf:
        return None
    if dtype.kind in "iu":
        if math.isinf(value):
            return None
        info = np.iinfo(dtype)
        if not value.is_integer() or not info.min <= value <= info.max:
            return None
        return dtype.type(int(value))
    return dtype.type(missing)


def scanned_stats(matrix, parts):
    """(WeightStats, edge count) of an n x n matrix from dense_scan's answers for its row ranges,
    or the error for a bad entry."""
    n = matrix.shape[0]
    edges, present, lo, hi, integral, bad_i, bad_j = parts[0] if len(parts) == 1 else joined_scans(parts)
    if bad_i >= 0:
        raise FloydwarpError(f"matrix entry [{bad_i}, {bad_j}] has weight {float(matrix[bad_i, bad_j])}: "
                             f"weights must be finite numbers")
    if not present:
        return WeightStats(n, 0, 0, True), 0
    conv = int if integral else float
    return WeightStats(n, conv(lo), conv(hi), bool(integral)), int(edges)


def joined_scans(parts):
    """One answer of dense_scan (graph/kernels.py) from those of consecutive row ranges: the
    first bad entry in row order, else the counts summed and the extremes of all."""
    edges, present, lo, hi, integral = 0, False, 0, 0, True
    for part_edges, part_present, a, b, whole, bad_i, bad_j in parts:
        if bad_i >= 0:
            return edges, present, lo, hi, integral, bad_i, bad_j
        edges += part_edges
        if part_present:
            lo, hi = (min(lo, a), max(hi, b)) if present else (a, b)
            present = True
        integral = integral and whole
    return edges, present, lo, hi, integral, -1, -1


def refuse_bad_weights(w, where):
    """Refuse NaN and -inf (+inf is "no edge" only where a matrix says so)."""
    xp = array_module(w)
    if w.dtype.kind != "f":
        return
    bad = xp.isnan(w) | xp.isinf(w)
    if bool(bad.any()):
        flat = int(xp.flatnonzero(bad.ravel())[0])
        value = float(w.ravel()[flat])
        raise FloydwarpError(f"{where(flat)} has weight {value}: weights must be finite numbers")
