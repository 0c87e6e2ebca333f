"""Issue 25's boundary graphs: one edge whose |weight| sits at each integer dtype's INF.

Every kernel adds a weight to an INF entry, so a dtype holds a graph only when every
|weight| is strictly below its INF: INF - 1 is solved exactly, INF, INF + 1 and the
type's maximum are refused (DtypeError) -- on every backend, from edges or a matrix.
"""
from __future__ import annotations

import numpy as np

from floydwarp import Graph, numeric

DTYPES = ("int16", "int32", "int64")
#: offsets from INF, and "max" (the type's largest value)
POINTS = (-1, 0, 1, "max")


def weight(dtype, point, sign) -> int:
    inf = int(numeric.inf_of(dtype))
    magnitude = int(np.iinfo(dtype).max) if point == "max" else inf + point
    return sign * magnitude


def build(w: int, builder: str) -> Graph:
    """Two vertices, one edge 0 -> 1 of weight ``w`` (int64, so no value is rounded)."""
    if builder == "edges":
        return Graph.from_edges(np.array([0]), np.array([1]), np.array([w], dtype=np.int64), n=2)
    matrix = np.array([[0, w], [0, 0]], dtype=np.int64)
    return Graph.from_dense(np.ma.masked_array(matrix, mask=[[False, False], [True, False]]))


def refused(dtype, w: int) -> bool:
    return abs(w) >= int(numeric.inf_of(dtype))


def expected(dtype, w: int) -> np.ndarray:
    """The exact answer in ``dtype``: 0 on the diagonal, w on the edge, INF back."""
    inf = int(numeric.inf_of(dtype))
    return np.array([[0, w], [inf, 0]], dtype=dtype)


#: a non-negative self-loop beyond what the chosen dtype holds, in each source type: the dtype
#: choice skips it (it is no edge), so no start matrix may cast it into that dtype first
BIG_LOOPS = [("uint16", 65535), ("uint32", 2**32 - 1), ("int32", 2**31 - 1), ("int64", 2**40 + 2**15 + 5),
             ("float64", 1e300), ("float32", 3e38)]
