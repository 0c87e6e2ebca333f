"""Numba passes over many matrices read in place: checks, statistics, edges (batch/dense.py
and batch/lists.py call them; kernels.solve_dense solves straight from the matrices).

Dense matrices are read in place, wherever each one lies: a list of B NumPy arrays is
handed over as B addresses (``addresses[g]``, row ``i`` of graph g at ``addresses[g] + i *
rows[g]`` entries), a padded (B, N, N) array as the addresses of its B blocks.  Copying the
list into one array first cost 2 us a graph of 30 vertices on the 2-core box, most of it
first touches of the new pages, the whole solve of such a graph 1-2 us.

Graph's rules (graph.py): an entry is no edge when it is ``+inf`` or equals ``missing``;
NaN and ``-inf`` are refused; a non-negative self-loop changes nothing and is dropped.

SciPy's CSR and CSC matrices arrive concatenated (``indptr``, ``indices``, ``data`` of
every graph one after another; offsets of each graph's part in ``ip_at`` and ``at``).
"""
from __future__ import annotations

import numpy as np
from numba import njit, prange

from ..jit import array_at, fractional, greatest, least


@njit(inline="always")
def matrix_of(addresses, rows, sizes, g, like):
    """Graph g's entries as a flat array (row i at ``i * rows[g]``)."""
    n = sizes[g]
    return array_at(addresses[g], max(0, (n - 1) * rows[g] + n), like)


@njit(inline="always")
def _absent(x, missing, use_missing):
    return x == np.inf or (use_missing and x == missing)


@njit(inline="always")
def _kept(x, i, j, missing, use_missing):
    """Entry (i, j) = ``x`` is an edge: present, and off the diagonal or a negative self-loop."""
    absent = (x == np.inf) | (use_missing & (x == missing))
    return ~absent & ((i != j) | (x < 0))


@njit(parallel=True, cache=True)
def dense_scan(addresses, rows, sizes, like, missing, use_missing, top, bottom, counts, bad, low, high, whole):
    """Per graph g: ``counts[g]`` edges, ``bad[g]`` the first entry (``i * n + j``) holding NaN
    or ``-inf`` (else -1; the rows after it are not read), and its edges' smallest and
    largest weight (``low[g]``, ``high[g]``; meaningless without edges) and whether all are
    integers (``whole[g]``): the statistics GraphBatch.weight_stats takes of the edges.  A
    row is read without a branch (LLVM vectorizes the sums and selects) and searched entry by
    entry only when it holds a bad entry.  ``top`` and ``bottom``: the dtype's largest and
    smallest values (+-inf for floats), where the minimum and maximum start.  Rows of 1-59
    entries run mostly in LLVM's scalar remainder loops: kernels.scan_dense answers the same
    faster where a wider dtype holds every entry and a marker, and this reads the rest
    (64-bit integers)."""
    for g in prange(sizes.size):
        m = matrix_of(addresses, rows, sizes, g, like)
        n, r = sizes[g], rows[g]
        edges, first, fractions = 0, -1, 0
        lo, hi = top, bottom
        for i in range(n):
            row = m[i * r:i * r + n]
            kept, wrong = 0, 0
            for j in range(n):
                x = row[j]
                keep = _kept(x, i, j, missing, use_missing)
                wrong += np.int64((x != x) | (x == -np.inf))
                kept += np.int64(keep)
                fractions += np.int64(keep & fractional(x))
            for j in range(n):      # a loop of its own: with the sums above, LLVM vectorizes neither
                x = row[j]
                keep = _kept(x, i, j, missing, use_missing)
                lo = least(lo, x if keep else top)
                hi = greatest(hi, x if keep else bottom)
            edges += kept
            if wrong:
                for j in range(n):
                    x = row[j]
                    if x != x or x == -np.inf:
                        first = i * n + j
                        break
                break
        counts[g], bad[g], low[g], high[g], whole[g] = edges, first, lo, hi, fractions == 0


@njit(cache=True)
def any_dense_edge(addresses, rows, sizes, like, missing, use_missing) -> bool:
    """True when some graph has an edge (read until the first one: hop counts need no more)."""
    for g in range(sizes.size):
        m = matrix_of(addresses, rows, sizes, g, like)
        n, r = sizes[g], rows[g]
        for i in range(n):
            for j in range(n):
                x = m[i * r + j]
                if not _absent(x, missing, use_missing) and (i != j or x < 0):
                    return True
    return False


@njit(parallel=True, cache=True)
def dense_edges(addresses, rows, sizes, like, missing, use_missing, eptr, src, dst, weight):
    """Graph g's edges into ``src``, ``dst`` (its own vertex ids) and ``weight`` from
    ``eptr[g]`` on, in row order (the rules and counts of :func:`dense_scan`)."""
    for g in prange(sizes.size):
        m = matrix_of(addresses, rows, sizes, g, like)
        n, r = sizes[g], rows[g]
        e = eptr[g]
        for i in range(n):
            for j in range(n):
                x = m[i * r + j]
                if _absent(x, missing, use_missing) or (i == j and x >= 0):
                    continue
                src[e], dst[e], weight[e] = i, j, x
                e += 1


@njit(parallel=True, cache=True)
def compressed_edges(indptr, ip_at, indices, at, sizes, by_row, eptr, src, dst, bad, where):
    """The stored entries of B CSR (``by_row[g]``) or CSC matrices as edges: graph g's
    offsets are ``indptr[ip_at[g] : ip_at[g] + sizes[g] + 1]``, its entries ``indices[at[g]
    + k]``; entry k becomes edge ``eptr[g] + k``.  ``bad[g]``: 1 offsets that do not rise
    from 0 to its entry count, 2 entry ``where[g]``'s index is out of range 0..n - 1, else 0.
    Each pass is one flat loop over a graph's offsets or entries: the entries' own row (or
    column) is a running count of the offsets that start at each entry, where a loop per row
    over its 2-3 entries spent most of its time starting and ending (0.47 -> 0.23 ms for
    3,000 molecules' 194,000 entries on the 2-core box)."""
    for g in prange(sizes.size):
        n, p, e0, base = sizes[g], ip_at[g], eptr[g], at[g]
        count = eptr[g + 1] - e0
        rising = indptr[p] == 0 and indptr[p + n] == count
        for v in range(n):
            rising &= indptr[p + v] <= indptr[p + v + 1]
        if not rising:
            bad[g] = 1
            continue
        lo, hi = np.int64(0), n - 1
        for k in range(count):
            u = np.int64(indices[base + k])
            lo, hi = least(lo, u), greatest(hi, u)
        if lo < 0 or hi > n - 1:
            for k in range(count):
                if indices[base + k] < 0 or indices[base + k] >= n:
                    bad[g], where[g] = 2, k
                    break
            continue
        stored, compressed = (dst, src) if by_row[g] else (src, dst)
        for k in range(count):
            stored[e0 + k] = indices[base + k]
            compressed[e0 + k] = 0
        for v in range(1, n):           # a mark where each row starts (rows starting at the end hold none)
            start = indptr[p + v]
            if start < count:
                compressed[e0 + start] += 1
        row = 0
        for k in range(count):
            row += compressed[e0 + k]
            compressed[e0 + k] = row
