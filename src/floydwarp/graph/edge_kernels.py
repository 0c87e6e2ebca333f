"""Numba passes over a graph's edge lists, for host arrays: the one checking scan of new
edges (:func:`edge_scan`: ids, weights, self-loops, order and statistics) and the sort by
(source, target) with the merge of parallel edges (two counting sorts split over the cores:
:func:`key_counts`, :func:`key_places`, :func:`scatter_by_key`; then :func:`run_starts` and
:func:`lightest_parallel_edges`).  graph/edge_arrays.py runs them, each a serial kernel
over a range that team.py spreads over the cores.  Module imported only when a pass runs
(it imports Numba).
"""
from __future__ import annotations

import numpy as np
from numba import njit

from ..jit import narrow


@njit(cache=True, nogil=True)
def edge_scan(src, dst, w, n, out_src, out_dst, out_w, first, stop):
    """Edges ``first .. stop - 1`` of an edge list checked, summarized, converted and compacted
    in one pass, with Graph's rules (a non-negative self-loop is dropped): the first source id
    out of range 0..n-1 (-1: none) and how many there are, the same for targets, the first
    weight that is NaN or +-inf (-1: none), how many self-loops are dropped, whether the kept
    edges' keys ``src * n + dst`` strictly increase (sorted, no parallel edges), the first and
    last kept key, the smallest and largest kept weight, whether they are all integers, and
    whether any edge is kept.  Ids of any integer type and weights are read as int64 and
    ``out_w``'s type (int64 or float64), as ``astype`` would convert them, and the kept edges
    written to the front of the range of ``out_*``, in order, until a bad edge is met (the
    error names it in the input): the caller's arrays are read once, with no converted copy
    first; ``out_*`` may be the input arrays themselves (the graph's own: compacted in place)."""
    bad_src, bad_srcs, bad_dst, bad_dsts, bad_w = -1, 0, -1, 0, -1
    dropped, ordered, kept, whole = 0, True, False, True
    first_key, last_key = -1, -1
    lo = narrow(0, out_w)
    hi = narrow(0, out_w)
    to = first
    for e in range(first, stop):
        i = np.int64(src[e])
        j = np.int64(dst[e])
        x = narrow(w[e], out_w)
        if i < 0 or i >= n:
            bad_src = e if bad_src < 0 else bad_src
            bad_srcs += 1
        if j < 0 or j >= n:
            bad_dst = e if bad_dst < 0 else bad_dst
            bad_dsts += 1
        if x != x or x == np.inf or x == -np.inf:
            bad_w = e if bad_w < 0 else bad_w
            continue
        if i == j and x >= 0:
            dropped += 1
            continue
        key = i * n + j
        if not kept:
            first_key, lo, hi, kept = key, x, x, True
        elif key <= last_key:
            ordered = False
        last_key = key
        lo = min(lo, x)
        hi = max(hi, x)
        whole = whole and np.floor(x) == x
        if bad_src < 0 and bad_dst < 0 and bad_w < 0:
            out_src[to] = i
            out_dst[to] = j
            out_w[to] = x
            to += 1
    return (bad_src, bad_srcs, bad_dst, bad_dsts, bad_w, dropped, ordered, first_key, last_key, lo, hi, whole,
            kept)


@njit(cache=True, nogil=True)
def key_counts(keys, bounds, counts, first, stop):
    """``counts[t, k]``: how many of ``keys[bounds[t]:bounds[t + 1]]`` equal ``k``, for the
    parts ``t = first .. stop - 1`` of a counting sort (Graph's edge sort, graph.py)."""
    for t in range(first, stop):
        c = counts[t]
        c[:] = 0
        for e in range(bounds[t], bounds[t + 1]):
            c[keys[e]] += 1


@njit(cache=True, nogil=True)
def key_places(counts):
    """``key_counts``' counts turned, in place, into where each part's first edge of each key
    goes: keys in order, and within a key the parts in order (a stable sort)."""
    total = 0
    for k in range(counts.shape[1]):
        for t in range(counts.shape[0]):
            c = counts[t, k]
            counts[t, k] = total
            total += c


@njit(cache=True, nogil=True)
def scatter_by_key(keys, bounds, at, src, dst, w, out_src, out_dst, out_w, first, stop):
    """The edges of parts ``first .. stop - 1`` written to their places in ``out_*``, in
    order: part t's next edge of key k goes to ``at[t, k]`` (the counting sort's offsets)."""
    for t in range(first, stop):
        place = at[t]
        for e in range(bounds[t], bounds[t + 1]):
            k = keys[e]
            p = place[k]
            place[k] = p + 1
            out_src[p] = src[e]
            out_dst[p] = dst[e]
            out_w[p] = w[e]


@njit(cache=True, nogil=True)
def sort_edges_in_one_part(src, dst, w, n, tmp_src, tmp_dst, tmp_w, out_src, out_dst, out_w, counts):
    """graph.py's ``_sort_edges`` for edges in one part, in one call: its two counting sorts by
    these kernels, without the hand-offs of a part split (most of a small graph's sort)."""
    bounds = np.array((0, src.size))
    key_counts(dst, bounds, counts, 0, 1)
    key_places(counts)
    scatter_by_key(dst, bounds, counts, src, dst, w, tmp_src, tmp_dst, tmp_w, 0, 1)
    key_counts(tmp_src, bounds, counts, 0, 1)
    key_places(counts)
    scatter_by_key(tmp_src, bounds, counts, tmp_src, tmp_dst, tmp_w, out_src, out_dst, out_w, 0, 1)


@njit(cache=True, nogil=True)
def run_starts(src, dst, bounds, counts, first, stop):
    """``counts[t]``: how many edges of part t (``bounds[t] .. bounds[t + 1] - 1``) of edges
    sorted by (source, target) begin a run of parallel edges, for ``t = first .. stop - 1``."""
    for t in range(first, stop):
        c = 0
        for e in range(bounds[t], bounds[t + 1]):
            if e == 0 or src[e] != src[e - 1] or dst[e] != dst[e - 1]:
                c += 1
        counts[t] = c


@njit(cache=True, nogil=True)
def lightest_parallel_edges(src, dst, w, bounds, at, out_src, out_dst, out_w, first, stop):
    """Edges sorted by (source, target) written to ``out_*`` with each run of parallel edges
    made one edge of the run's smallest weight: the runs that begin in part t from
    ``out[at[t]]`` on (a run may end in a later part), for ``t = first .. stop - 1``.  Returns
    the smallest and largest weight written, whether they are all integers, and how many edges
    were written, so that the graph's statistics need no other pass."""
    lo = narrow(0, out_w)
    hi = narrow(0, out_w)
    whole, kept = True, 0
    m = src.size
    for t in range(first, stop):
        p = at[t]
        e = bounds[t]
        while e < bounds[t + 1] and e > 0 and src[e] == src[e - 1] and dst[e] == dst[e - 1]:
            e += 1                                  # the end of a run that began in part t - 1
        while e < bounds[t + 1]:
            x = w[e]
            f = e + 1
            while f < m and src[f] == src[e] and dst[f] == dst[e]:
                x = min(x, w[f])
                f += 1
            out_src[p] = src[e]
            out_dst[p] = dst[e]
            out_w[p] = x
            p += 1
            if kept == 0:
                lo, hi = x, x
            kept += 1
            lo = min(lo, x)
            hi = max(hi, x)
            whole = whole and np.floor(x) == x
            e = f
    return lo, hi, whole, kept


@njit(cache=True, nogil=True)
def edges_in_order(src, dst, n):
    """True when the keys ``src * n + dst`` strictly increase."""
    for e in range(1, src.size):
        if src[e] * n + dst[e] <= src[e - 1] * n + dst[e - 1]:
            return False
    return True
