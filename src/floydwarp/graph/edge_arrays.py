"""Edge arrays as a `Graph` keeps them: inputs read in the types the Numba passes take, one
checking scan (ids in range, finite weights, self-loops, order, statistics) split over the
cores, and the sort and merge of parallel edges when the scan found them out of order.

Every pass is graph/edge_kernels.py's (graph/kernels.py's weight scan), imported on first use
(:func:`edge_passes`, :func:`numba_passes`: they import Numba).
"""
from __future__ import annotations

import functools
import numbers

import numpy as np

from .. import team
from ..errors import FloydwarpError
from ..numeric import WeightStats


@functools.cache
def numba_passes():
    """graph/kernels.py: the dense and start-matrix passes (imported on first use: Numba)."""
    from . import kernels

    return kernels


@functools.cache
def edge_passes():
    """graph/edge_kernels.py: the edge-list scan and sort (imported on first use: Numba)."""
    from . import edge_kernels

    return edge_kernels


def numba_readable(dtype) -> bool:
    """True for the dtypes the Numba passes read as they are (not float16, not byte-swapped)."""
    return dtype.isnative and (dtype.kind in "iu" or dtype.char in "fd")


def int64_vector(a) -> np.ndarray:
    """``a`` as an int64 NumPy array (itself when it is one already)."""
    return a if type(a) is np.ndarray and a.dtype == np.int64 else np.asarray(a, dtype=np.int64)


def index_input(a, name):
    """Vertex ids as a 1-D array of an integer type the Numba passes read: the caller's array
    itself where it is one (the edge scan converts as it reads), else a new int64 array
    (integral floats, other byte orders)."""
    arr = np.asarray(a)
    if arr.ndim != 1:
        raise FloydwarpError(f"{name} must be a 1-D array of vertex ids; got shape {arr.shape}")
    if arr.size == 0:
        return arr.astype(np.int64)
    if arr.dtype.kind == "f":
        if not np.all(np.isfinite(arr)) or not np.all(arr == np.floor(arr)):
            i = int(np.flatnonzero(~np.isfinite(arr) | (arr != np.floor(arr)))[0])
            raise FloydwarpError(f"edge {i}: {name} vertex id {arr[i]!r} is not an integer")
    elif arr.dtype.kind not in "iu":
        raise FloydwarpError(f"{name} vertex ids must be integers; got dtype {arr.dtype}")
    return arr if arr.dtype.kind in "iu" and numba_readable(arr.dtype) else arr.astype(np.int64)


def compressed_index(a, part, fmt):
    """A CSR or CSC matrix's ``indptr`` or ``indices`` as integers the Numba passes read: itself,
    or widened to int64 from another byte order (read as this machine's, its ids were wrong)."""
    a = np.asarray(a)
    if a.dtype.kind not in "iu":
        raise FloydwarpError(f"malformed {fmt} matrix: its {part} has dtype {a.dtype}; it must hold integers")
    return a if numba_readable(a.dtype) else a.astype(np.int64)


def attribute_weights(attributes):
    """NetworkX edge attributes as one array for ``weight_input``: objects where they are not all
    numbers of one shape (a list among them was a raw ValueError), which it then names."""
    try:
        weights = np.asarray(attributes) if attributes else np.zeros(0)
    except ValueError:
        weights = None
    if weights is None or weights.ndim != 1:
        weights = np.empty(len(attributes), dtype=object)
        for e, x in enumerate(attributes):
            weights[e] = x
    return weights


def weight_input(a):
    """Edge weights as an array the Numba passes read: the caller's array itself where it is
    one, else a new int64 (booleans, other byte orders) or float64 array (uint64 values that
    int64 does not hold).  Anything but real numbers is refused, as in a dense matrix: a cast
    would drop an imaginary part or a unit, read None as NaN, or parse text ("3"), without a word."""
    arr = np.asarray(a)
    if arr.dtype.kind not in "biufO":
        raise FloydwarpError(f"edge weights must be real numbers; got dtype {arr.dtype}")
    if arr.dtype.kind == "O":           # Python objects (NetworkX attributes, big ints): one by one
        bad = next((i for i, x in enumerate(arr.flat) if not isinstance(x, numbers.Real)), None)
        if bad is not None:
            raise FloydwarpError(f"edge {bad}: weight {arr.flat[bad]!r} is not a real number")
    # compared as uint64: NumPy 1 compares a uint64 with a Python int in float64, where 2**63 + 5 == 2**63 - 1
    if arr.dtype == np.uint64 and arr.size and arr.max() > np.uint64(np.iinfo(np.int64).max):
        # the graph keeps integer weights as int64, where these would wrap negative: float64, as SciPy reads them
        return arr.astype(np.float64)
    if arr.dtype.kind in "iuf" and numba_readable(arr.dtype):
        return arr
    if arr.dtype.kind in "biu":
        return arr.astype(np.int64)
    try:
        return arr.astype(np.float64)
    except OverflowError as exc:        # a Python int past float64's range
        raise FloydwarpError(f"edge weights must be real numbers within float64's range ({exc})") from None


def weight_dtype(dtype):
    """The type a graph keeps weights of ``dtype`` in: float64 for reals, else int64."""
    return np.dtype(np.float64 if dtype.kind == "f" else np.int64)


def new_edge_arrays(m, dtype):
    """New (src, dst, weight) arrays for m edges of weights of ``dtype``, as a graph keeps them."""
    return np.empty(m, np.int64), np.empty(m, np.int64), np.empty(m, weight_dtype(dtype))


def scan_edges(n, src, dst, w, out):
    """``(edges, stats)`` of the graph of 1-D edge arrays of one length, ids of an integer type
    and weights the Numba passes read, converted into ``out`` = (int64 ids, int64 ids, int64 or
    float64 weights) as they are checked (new arrays, or any of the input arrays where the
    graph may keep them): distinct, sorted by (source, target), with their statistics."""
    # ids, weights, self-loops, order and weight statistics in one pass (graph/edge_kernels.py)
    m = src.size
    parts = team.run(edge_passes().edge_scan, m, src, dst, w, n, *out, threads=team.shares(m, m))
    (bad_src, bad_srcs, bad_dst, bad_dsts, bad_w, dropped, ordered, _, _, lo, hi, integral,
     kept) = parts[0] if len(parts) == 1 else joined_edge_scans(parts)
    if bad_src >= 0 or bad_dst >= 0:
        for name, ids, i, count in (("src", src, bad_src, bad_srcs), ("dst", dst, bad_dst, bad_dsts)):
            if i >= 0:
                raise FloydwarpError(
                    f"edge {i}: {name} vertex id {int(ids[i])} is out of range 0..{n - 1} "
                    f"({count} edge(s) out of range)")
    if bad_w >= 0:
        raise FloydwarpError(f"edge {bad_w} ({int(src[bad_w])} -> {int(dst[bad_w])}) has weight "
                             f"{float(w[bad_w])}: weights must be finite numbers")
    edges = out
    if dropped:                             # the scan moved the kept edges to the front of each share
        edges = kept_edges(parts, m, *edges)
    if ordered:                             # the scanned edges are the graph's: their statistics hold
        return edges, stats_of_kept(n, lo, hi, integral, kept)
    return sorted_lightest_edges(n, edges)


def joined_edge_scans(parts):
    """One answer of edge_scan (graph/edge_kernels.py) from those of consecutive edge ranges."""
    bad_src = bad_dst = bad_w = -1
    bad_srcs = bad_dsts = dropped = 0
    ordered, kept, integral = True, False, True
    first_key = last_key = -1
    lo = hi = 0
    for p_bad_src, p_bad_srcs, p_bad_dst, p_bad_dsts, p_bad_w, p_dropped, p_ordered, p_first, p_last, p_lo, p_hi, \
            p_integral, p_kept in parts:
        bad_src = p_bad_src if bad_src < 0 else bad_src
        bad_dst = p_bad_dst if bad_dst < 0 else bad_dst
        bad_w = p_bad_w if bad_w < 0 else bad_w
        bad_srcs, bad_dsts, dropped = bad_srcs + p_bad_srcs, bad_dsts + p_bad_dsts, dropped + p_dropped
        ordered = ordered and p_ordered
        if p_kept:
            if kept:
                ordered = ordered and last_key < p_first
                lo, hi = min(lo, p_lo), max(hi, p_hi)
            else:
                first_key, lo, hi, kept = p_first, p_lo, p_hi, True
            last_key = p_last
            integral = integral and p_integral
    return (bad_src, bad_srcs, bad_dst, bad_dsts, bad_w, dropped, ordered, first_key, last_key, lo, hi, integral,
            kept)


def edge_stats(n, w) -> WeightStats:
    if w.size == 0:
        return WeightStats(n, 0, 0, True)
    if w.dtype.kind in "iu":
        return WeightStats(n, int(w.min()), int(w.max()), True)
    lo, hi, integral = numba_passes().weight_scan(w)
    conv = int if integral else float
    return WeightStats(n, conv(lo), conv(hi), bool(integral))


def kept_edges(parts, m, src, dst, w):
    """The edges edge_scan kept, from its answers for consecutive shares of the ``m`` edges
    (each share's kept edges lie at its front)."""
    if len(parts) == 1:
        kept = m - parts[0][5]
        return src[:kept], dst[:kept], w[:kept]
    bounds = team.share_bounds(m, len(parts))
    ranges = [(a, b - part[5]) for part, a, b in zip(parts, bounds, bounds[1:])]
    return tuple(np.concatenate([x[a:b] for a, b in ranges]) for x in (src, dst, w))


def sorted_lightest_edges(n, edges):
    """The graph's edges and weight statistics from its own edge arrays in any order: sorted
    by (source, target) in place, then each run of parallel edges made one of the run's
    smallest weight, written into new arrays (the sort's scratch), both split over the cores."""
    m, kernels = edges[0].size, edge_passes()
    out = new_edge_arrays(m, edges[2].dtype)
    sort_edges(n, edges, out, edges)
    parts = team.shares(m, 2 * m)
    bounds = np.asarray(team.share_bounds(m, parts), np.int64)
    at = np.zeros(parts, np.int64)
    if parts > 1:                       # where each part's runs go: after those of the parts before
        team.run(kernels.run_starts, parts, edges[0], edges[1], bounds, at, threads=parts)
        at = np.cumsum(at) - at
    answers = [a for a in team.run(kernels.lightest_parallel_edges, parts, *edges, bounds, at, *out,
                                   threads=parts) if a[3]]          # the parts that wrote edges
    count = sum(a[3] for a in answers)
    stats = stats_of_kept(n, min((a[0] for a in answers), default=0), max((a[1] for a in answers), default=0),
                           all(a[2] for a in answers), count > 0)
    return tuple(a[:count] for a in out), stats


def stats_of_kept(n, lo, hi, integral, kept) -> WeightStats:
    """The statistics of the weights a pass kept: the smallest, the largest, whether all are
    integers (and nothing but n when none was kept)."""
    if not kept:
        return WeightStats(n, 0, 0, True)
    conv = int if integral else float
    return WeightStats(n, conv(lo), conv(hi), bool(integral))


def sort_edges(n, edges, tmp, out):
    """``edges`` (src, dst, weight) sorted by (source, target) into ``out`` (which may be
    ``edges``), by two stable counting sorts, by target into ``tmp`` and then by source, each
    split over the cores in parts whose counts give each part its places: O(n + m), where
    NumPy's argsort of the keys and the gathers after it took 6x as long on 10.7 million
    edges (2-core box), 10x on 16 cores."""
    m, kernels = edges[0].size, edge_passes()
    parts = team.shares(m, 4 * m)
    counts = np.empty((parts, n), np.int64)
    if parts == 1:
        kernels.sort_edges_in_one_part(*edges, n, *tmp, *out, counts)
        return
    bounds = np.asarray(team.share_bounds(m, parts), np.int64)
    for keys, source, into in ((edges[1], edges, tmp), (tmp[0], tmp, out)):
        team.run(kernels.key_counts, parts, keys, bounds, counts, threads=parts)
        kernels.key_places(counts)
        team.run(kernels.scatter_by_key, parts, keys, bounds, counts, *source, *into, threads=parts)
