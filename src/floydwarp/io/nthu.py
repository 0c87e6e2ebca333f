"""The NTHU parallel-programming homework binary formats (little-endian int32).

Input (``.in``)::

    int32 V, int32 E, then E x (int32 src, int32 dst, int32 weight)

Output (``.out``)::

    V x V int32, row-major; 1073741823 (2**30 - 1) for "unreachable"

2**30 - 1 is also floydwarp's int32 INF, so an ``.out`` file reads back as an int32
Result without a copy (memory-mapped).
"""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from ..errors import FloydwarpError
from ..graph import Graph
from ..casts import NotRepresentable, cast_distances
from .atomic import atomic_path

IN_EXTENSIONS = (".in",)
OUT_EXTENSIONS = (".out",)
#: The homework's "unreachable" marker.
UNREACHABLE = 2 ** 30 - 1
_I32 = np.dtype("<i4")
_ROWS_PER_BLOCK = 1 << 12


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except FileNotFoundError:
        raise FloydwarpError(f"{path}: no such file") from None


def read(path) -> Graph:
    """Read a homework ``.in`` graph."""
    path = Path(path)
    size = _size(path)
    if size < 8:
        raise FloydwarpError(f"{path}: truncated: {size} bytes, but the header (V, E) needs 8")
    header = np.fromfile(path, dtype=_I32, count=2)
    v, e = int(header[0]), int(header[1])
    if v < 0:
        raise FloydwarpError(f"{path}: byte 0: vertex count V = {v} is negative")
    if e < 0:
        raise FloydwarpError(f"{path}: byte 4: edge count E = {e} is negative")
    expected = 8 + 12 * e
    if size < expected:
        whole = (size - 8) // 12
        raise FloydwarpError(
            f"{path}: truncated at byte {size}: the header says E = {e} ({expected} bytes) "
            f"but the file holds {whole} whole edge(s)"
            + (f" and {(size - 8) % 12} stray byte(s)" if (size - 8) % 12 else ""))
    if size > expected:
        raise FloydwarpError(
            f"{path}: byte {expected}: the header says E = {e} ({expected} bytes) "
            f"but the file has {size - expected} more byte(s) -- E disagrees with the file size")
    edges = np.fromfile(path, dtype=_I32, count=3 * e, offset=8).reshape(e, 3)
    src, dst, w = (edges[:, k].astype(np.int64) for k in range(3))
    for k, (name, ids) in enumerate((("source", src), ("destination", dst))):
        bad = np.flatnonzero((ids < 0) | (ids >= v))
        if bad.size:
            i = int(bad[0])
            raise FloydwarpError(
                f"{path}: byte {8 + 12 * i + 4 * k}: edge {i} has {name} vertex {int(ids[i])}, "
                f"out of range 0..{v - 1} (V = {v}; {bad.size} edge(s) out of range)")
    return Graph.from_edges(src, dst, w, n=v)


def write(graph: Graph, path, *, inputs=()):
    """Write a graph as a homework ``.in`` file (integer weights that fit int32)."""
    path = Path(path)
    src, dst, w = graph.edges()
    if graph.n > np.iinfo(np.int32).max:
        raise FloydwarpError(f"cannot write {path}: V = {graph.n} does not fit int32")
    w = np.asarray(w)
    if w.dtype.kind == "f":
        frac = np.flatnonzero(w != np.round(w))
        if frac.size:
            i = int(frac[0])
            raise FloydwarpError(
                f"cannot write {path}: edge {int(src[i])} -> {int(dst[i])} has weight {w[i]!r}; "
                "the homework format holds integer weights only")
    info = np.iinfo(np.int32)
    big = np.flatnonzero((w < info.min) | (w > info.max))
    if big.size:
        i = int(big[0])
        raise FloydwarpError(f"cannot write {path}: weight {w[i]!r} of edge {int(src[i])} -> {int(dst[i])} "
                             "does not fit int32")
    out = np.empty((src.size, 3), dtype=_I32)
    out[:, 0], out[:, 1], out[:, 2] = src, dst, w
    with atomic_path(path, inputs=inputs) as tmp, open(tmp, "wb") as fh:
        fh.write(np.array([graph.n, src.size], dtype=_I32).tobytes())
        fh.write(out.tobytes())
    return path


def write_result(result, path, *, inputs=()):
    """Write distances as a homework ``.out`` file: exactly V*V*4 bytes of little-endian int32."""
    path = Path(path)
    if result.has_negative_cycle:
        cyc = result.negative_cycle_vertices
        raise FloydwarpError(
            f"cannot write {path}: the graph has a negative cycle (through vertex "
            f"{result.label(int(cyc[0]))}); the homework format has no way to say so")
    n = result.n
    with atomic_path(path, inputs=inputs) as tmp, open(tmp, "wb") as fh:
        for lo in range(0, n, _ROWS_PER_BLOCK):
            block = result.dist[lo:lo + _ROWS_PER_BLOCK]
            try:
                out = cast_distances(block, result.inf, _I32, UNREACHABLE, exact=True)
            except NotRepresentable as exc:
                i, value = exc.index, exc.value
                where = f"distance {value!r} from {result.label(lo + i // n)} to {result.label(i % n)}"
                if not float(value).is_integer():
                    raise FloydwarpError(f"cannot write {path}: {where} is not an integer; the homework format "
                                         "holds int32 only") from None
                raise FloydwarpError(f"cannot write {path}: {where} does not fit the homework format (int32 "
                                     f"below {UNREACHABLE}, which means unreachable)") from None
            fh.write(_host(out).tobytes())
    return path


def read_result(path):
    """Read a homework ``.out`` file as an int32 Result (memory-mapped, no predecessors)."""
    from ..result import Result

    path = Path(path)
    size = _size(path)
    if size % 4:
        raise FloydwarpError(f"{path}: {size} bytes is not a whole number of int32 values (truncated?)")
    n = math.isqrt(size // 4)
    if n * n * 4 != size:
        raise FloydwarpError(f"{path}: {size} bytes is not V*V*4 for any V ({size // 4} values); truncated?")
    dist = np.memmap(path, dtype=_I32, mode="r", shape=(n, n)) if n else np.zeros((0, 0), np.int32)
    if dist.dtype != np.int32:                      # big-endian host
        dist = dist.astype(np.int32)
    from ..dynamic import cycles_from_distances

    inf = np.int32(UNREACHABLE)
    return Result(dist, None, inf=inf, metadata={"source": str(path), "format": "nthu"},
                  negative_cycles=cycles_from_distances(dist, inf))


def _host(a):
    from ..arrays import to_host
    return np.asarray(to_host(a))
