"""Distance metrics of a solved graph: eccentricity, diameter, radius, center, periphery,
closeness, average path length, Wiener index.

Each is a reduction of the distance matrix on the device the matrix lives on (NumPy or
CuPy through :func:`floydwarp.arrays.array_module`), in the result's dtype: only O(n)
values ever leave the device or become Python objects.  The matrix is read in row blocks
of at most ``BLOCK_BYTES`` so that the masks and widened copies a reduction needs never
cost another n x n array.

Sums are exact for integer distances: int16 and int32 rows sum in int64 (which cannot
overflow below 2**32 vertices), int64 rows sum as two int64 halves recombined as Python
integers.  Float distances sum in float64.  Unreachable pairs (entries at ``inf``) count
as infinitely far in eccentricity, diameter, radius, the average path length and the
Wiener index; closeness, as in NetworkX, uses only the vertices that reach a vertex.
A graph with a negative cycle has no distances to measure: every metric refuses it.
"""
from __future__ import annotations

import math

import numpy as np

from .arrays import array_module, to_host
from . import errors
from .errors import FloydwarpError
from .options import flag

#: bytes of matrix rows one reduction step reads (bounds the temporaries to a few times this)
BLOCK_BYTES = 1 << 26


def _blocks(n: int, itemsize: int):
    rows = max(1, BLOCK_BYTES // max(1, n * itemsize))
    for lo in range(0, n, rows):
        yield lo, min(n, lo + rows)


def _bounded(result) -> None:
    if result.has_negative_cycle:
        vertices = result.negative_cycle_vertices[:5].tolist()
        # errors.NegativeCycleError subclasses SciPy's: looked up only here, so that importing
        # floydwarp does not import SciPy
        raise errors.NegativeCycleError("distances are unbounded: the graph has a negative cycle "
                                 f"(through vertices {vertices})", vertices=result.negative_cycle_vertices)


def _nonempty(result, what: str) -> None:
    if result.n == 0:
        raise FloydwarpError(f"the graph has no vertices, so it has no {what}")


def _python(value, inf, kind):
    """A distance as a Python number: ``math.inf`` for ``inf``."""
    if value >= inf:
        return math.inf
    return int(value) if kind in "iu" else float(value)


# ---------------------------------------------------------------- reductions of the matrix
def _host_kernels(dist):
    """floydwarp.reductions for a host matrix of 1- to 4-byte integers (one parallel Numba
    pass), else None (NumPy or CuPy below)."""
    if isinstance(dist, np.ndarray) and dist.ndim == 2 and dist.dtype.kind in "iu" and dist.dtype.itemsize <= 4:
        from . import reductions

        return reductions
    return None


def reach_sums(dist, inf, axis: int):
    """Per row (``axis=1``) or column (``axis=0``): how many entries are reachable (``< inf``,
    the diagonal included) and their exact sum.

    Returns ``(counts, sums)``: int64 counts on the matrix's device; sums in int64 (uint8,
    int16, int32) or float64 (floats) on the device, or for int64 distances a host array of
    Python integers (they may exceed int64).
    """
    kernels = _host_kernels(dist)
    if kernels is not None:
        counts, sums = np.empty(dist.shape[0], np.int64), np.empty(dist.shape[0], np.int64)
        (kernels.row_reach_sums if axis == 1 else kernels.column_reach_sums)(dist, int(inf), counts, sums)
        return counts, sums
    xp = array_module(dist)
    n = int(dist.shape[0])
    wide = dist.dtype == np.int64
    acc = np.float64 if dist.dtype.kind == "f" else np.int64
    counts = xp.zeros(n, dtype=np.int64)
    parts = [xp.zeros(n, dtype=acc) for _ in range(2 if wide else 1)]
    zero = dist.dtype.type(0)
    for lo, hi in _blocks(n, dist.dtype.itemsize):
        block = dist[lo:hi]
        reachable = block < inf
        masked = xp.where(reachable, block, zero)
        # int64 entries are split into high and low 32-bit halves, each of which sums in int64
        terms = (masked >> 32, masked & 0xFFFFFFFF) if wide else (masked,)
        if axis == 1:
            counts[lo:hi] = reachable.sum(axis=1)
            for part, term in zip(parts, terms):
                part[lo:hi] = term.sum(axis=1, dtype=acc)
        else:
            counts += reachable.sum(axis=0)
            for part, term in zip(parts, terms):
                part += term.sum(axis=0, dtype=acc)
    if not wide:
        return counts, parts[0]
    high, low = (to_host(p).tolist() for p in parts)
    return counts, np.array([(h << 32) + lo for h, lo in zip(high, low)], dtype=object)


def total(sums) -> int | float:
    """The exact sum of per-vertex sums, as a Python number."""
    values = to_host(sums)
    if values.dtype.kind == "f":
        return math.fsum(values.tolist())
    return sum(values.tolist())


def inverse_distance_sum(dist, inf) -> float:
    """Sum of 1 / d over the pairs at a finite positive distance d (global efficiency)."""
    kernels = _host_kernels(dist)
    if kernels is not None and int(inf) <= kernels.MAX_VALUES:
        import numba

        counts = kernels.value_counts(dist, int(inf), numba.get_num_threads()).tolist()
        return math.fsum(c / d for d, c in enumerate(counts) if d and c)
    xp = array_module(dist)
    n = int(dist.shape[0])
    terms = []
    for lo, hi in _blocks(n, dist.dtype.itemsize):
        block = dist[lo:hi]
        values = block[(block > 0) & (block < inf)]
        if dist.dtype.kind in "iu":
            # integer distances: count each distance once, then add count / d exactly rounded
            counts = to_host(xp.bincount(values.astype(np.int64)))
            terms += [c / d for d, c in enumerate(counts.tolist()) if d and c]
        else:
            terms.append(float((1.0 / values.astype(np.float64)).sum()))
    return math.fsum(terms)


def closeness_values(counts, sums, n: int, wf_improved: bool = True):
    """NetworkX's closeness from reach counts and distance sums (each vertex counted in its
    own reach): ``(r - 1) / total``, times ``(r - 1) / (n - 1)`` with ``wf_improved``; 0
    where the total is not positive.  Float64, the same operations in the same order as
    NetworkX, so integer distances give bit-identical values."""
    xp = array_module(counts)
    tot = xp.asarray(np.asarray(sums, dtype=np.float64) if sums.dtype == object else sums, dtype=np.float64)
    r1 = counts.astype(np.float64) - 1.0
    ok = tot > 0.0
    if n <= 1:
        return xp.zeros(n, dtype=np.float64)
    c = xp.where(ok, r1 / xp.where(ok, tot, 1.0), 0.0)
    return c * (r1 / (n - 1)) if wf_improved else c


# ---------------------------------------------------------------- the Result methods
def eccentricity(result):
    """Per vertex, the largest distance to another vertex: an array of the result's dtype on
    its device, so where a vertex does not reach them all it holds ``result.inf`` -- ``inf``
    for float results, the dtype's INF marker (16383 for int16) for integer ones; compare
    with ``>= result.inf``.  :func:`diameter` and :func:`radius` return ``math.inf`` there."""
    _bounded(result)
    xp = array_module(result.dist)
    if result.n == 0:
        return xp.zeros(0, dtype=result.dtype)
    return xp.max(result.dist, axis=1)


def diameter(result):
    """The largest eccentricity (``math.inf`` when some vertex does not reach another)."""
    _nonempty(result, "diameter")
    return _python(eccentricity(result).max(), result.inf, result.dtype.kind)


def radius(result):
    """The smallest eccentricity (``math.inf`` when no vertex reaches every other)."""
    _nonempty(result, "radius")
    return _python(eccentricity(result).min(), result.inf, result.dtype.kind)


def _where_equal(result, values, value) -> list:
    hits = to_host(array_module(values).flatnonzero(values == value)).tolist()
    return [result.label(i) for i in hits]


def center(result) -> list:
    """The vertices (labels when labelled) whose eccentricity is the radius."""
    _nonempty(result, "center")
    ecc = eccentricity(result)
    return _where_equal(result, ecc, ecc.min())


def periphery(result) -> list:
    """The vertices (labels when labelled) whose eccentricity is the diameter."""
    _nonempty(result, "periphery")
    ecc = eccentricity(result)
    return _where_equal(result, ecc, ecc.max())


def closeness(result, wf_improved: bool = True):
    """NetworkX's closeness centrality: for vertex u, (r - 1) / (sum of distances *to* u from
    the r vertices that reach it, u included), scaled by (r - 1) / (n - 1) when
    ``wf_improved`` (Wasserman and Faust); 0 when nothing else reaches u.  Float64 array on
    the result's device."""
    _bounded(result)
    counts, sums = reach_sums(result.dist, result.inf, axis=0)
    return closeness_values(counts, sums, result.n, flag(wf_improved, "wf_improved"))


def _all_reachable(counts, n) -> bool:
    return bool((counts == n).all())


def average_path_length(result) -> float:
    """The mean distance over ordered pairs of distinct vertices (``math.inf`` when some pair
    is unreachable, 0 for one vertex).  Exact division of the exact integer total for
    integer distances."""
    _bounded(result)
    _nonempty(result, "average path length")
    n = result.n
    if n == 1:
        return 0.0
    counts, sums = reach_sums(result.dist, result.inf, axis=1)
    if not _all_reachable(counts, n):
        return math.inf
    return total(sums) / (n * (n - 1))


def wiener_index(result, directed: bool = True):
    """The sum of distances over ordered pairs (``directed``), or over unordered pairs of an
    undirected graph (half of that, a float as in NetworkX); ``math.inf`` when a pair is
    unreachable.  Exact for integer distances."""
    directed = flag(directed, "directed")
    _bounded(result)
    counts, sums = reach_sums(result.dist, result.inf, axis=1)
    if not _all_reachable(counts, result.n):
        return math.inf
    value = total(sums)
    return value if directed else value / 2
