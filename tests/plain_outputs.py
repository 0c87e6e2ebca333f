"""The answers every output of floydwarp must give, built by a plain Python loop (never by floydwarp).

Shared by tests/test_output_exact.py and the MPI parallel-write test (tests/test_mpi.py).
"""
from __future__ import annotations

import io
import json
import math
import struct

import numpy as np

DTYPES = ("int16", "int32", "int64", "float32", "float64")
#: "unreachable" in a result of each integer dtype (max // 2, documented in floydwarp.numeric)
INF = {"int16": 2 ** 14 - 1, "int32": 2 ** 30 - 1, "int64": 2 ** 62 - 1}
#: "unreachable" in the homework's .out files
HOMEWORK_INF = 2 ** 30 - 1
INT64_MAX = 2 ** 63 - 1

#: name -> (n, edges (u, v, w)); no parallel edges or self-loops (SciPy would sum or drop them)
CASES = {
    "reachable": (4, [(0, 1, 3), (1, 2, 4), (2, 3, 1), (3, 0, 2), (0, 2, 9)]),
    "unreachable": (2, [(0, 1, 109)]),                  # the example: bytes 4..7 = ff ff ff 3f
    "negative": (5, [(0, 1, 4), (1, 2, -3), (2, 3, 2), (0, 3, -1), (3, 4, -2), (4, 1, 7), (2, 0, 6)]),
    "empty": (0, []),
    "single": (1, []),
}


def edge_arrays(case):
    """``(src, dst, w)`` of a case as int64 arrays (for ``Graph.from_edges``)."""
    _, edges = CASES[case]
    return tuple(np.array([e[k] for e in edges], dtype=np.int64) for k in range(3))


# ---------------------------------------------------------------------- the independent answers
def plain_distances(n, edges):
    """Floyd-Warshall in Python integers; None = unreachable."""
    d = [[0 if i == j else None for j in range(n)] for i in range(n)]
    for u, v, w in edges:
        if d[u][v] is None or w < d[u][v]:
            d[u][v] = w
    for k in range(n):
        for i in range(n):
            if d[i][k] is None:
                continue
            for j in range(n):
                if d[k][j] is not None and (d[i][j] is None or d[i][k] + d[k][j] < d[i][j]):
                    d[i][j] = d[i][k] + d[k][j]
    return d


def cells(dist, dtype):
    """The result's entries as Python numbers: INF (integers) or inf (floats) when unreachable."""
    if dtype in INF:
        return [[INF[dtype] if v is None else v for v in row] for row in dist]
    return [[math.inf if v is None else float(v) for v in row] for row in dist]


def npy_bytes(values, dtype, n):
    """An .npy file of an n x n matrix (NumPy's own format writer, fed the plain values)."""
    buf = io.BytesIO()
    np.save(buf, np.array(values, dtype=dtype).reshape(n, n), allow_pickle=False)
    return buf.getvalue()


def homework_bytes(dist):
    return b"".join(struct.pack("<i", HOMEWORK_INF if v is None else v) for row in dist for v in row)


def dense_bytes(dist):
    return b"".join(struct.pack("<d", math.inf if v is None else float(v)) for row in dist for v in row)


def fletcher16(data: bytes) -> int:
    s1 = s2 = 0
    for b in data:
        s1 = (s1 + b) % 255
        s2 = (s2 + s1) % 255
    return s2 * 256 + s1


def checksum_bytes(dist):
    """The checksum's canonical form: int64 little-endian, INT64_MAX = unreachable."""
    return b"".join(struct.pack("<q", INT64_MAX if v is None else v) for row in dist for v in row)


def query_json(dist, dtype, source):
    targets = []
    for j, v in enumerate(dist[source]):
        if v is None:
            targets.append({"to": j, "status": "unreachable", "distance": None, "route": None})
        else:
            targets.append({"to": j, "status": "ok", "distance": v if dtype in INF else float(v), "route": None})
    return json.dumps({"from": source, "targets": targets})
