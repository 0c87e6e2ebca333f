"""Numba passes from a graph to its start matrix, for host arrays.

A dense graph is read once to validate it and take its weight statistics
(:func:`dense_scan`), and once more to write the start matrix, in tiles or
in rows, in the distance dtype (:func:`dense_tiles`); an edge list is written
by :func:`edge_tiles`.  SciPy's CSR and CSC matrices are read as stored, by Graph's
rules (:func:`compressed_pairs`, then edge_kernels.py's ``edge_scan``) or by SciPy
``floyd_warshall``'s (:func:`scipy_sparse_weights`).  No temporaries of n^2 entries; every pass is a serial
kernel over a range of rows (or tile rows) that team.py spreads over the
cores, so a small graph's pass is one plain call.  The rules are Graph's (see graph.py): an entry is absent when
masked, equal to ``missing`` or ``+inf``; a non-negative self-loop is
dropped; the diagonal starts at ``min(self-loop, 0)``; padding (indices >= n)
is INF with 0 on its diagonal; ``pred[i, j] = i`` for every edge i -> j with
i != j.

Tiles are written as a 4-D array ``out[li, lj, r, c]`` holding entry
``(row0[li] + r, col0[lj] + c)``; a band of rows is the same call on
``out.reshape(1, 1, rows, n)``.  Module imported only when a pass runs (it
imports Numba).
"""
from __future__ import annotations

import warnings

import numpy as np
from numba import njit
from numba.core.errors import NumbaPerformanceWarning

from ..jit import fractional, greatest, least, narrow
from ..predecessors import NO_PREDECESSOR

#: Numba's parallel pipeline with every parallel transformation off (no gufunc is built:
#: the kernel stays serial and cheap to compile).  For :func:`dense_tiles` it generates
#: code 7x faster than the plain pipeline does (2.5 vs 18 ms for n = 2048 int32 on one
#: core of the 2-core dev box; the other passes here ran alike under both), so that pass
#: uses it; Numba's warning that nothing was parallelized is expected there.
SERIAL_BY_PARALLEL_PIPELINE = {"comprehension": False, "reduction": False, "inplace_binop": False,
                               "setitem": False, "numpy": False, "stencil": False, "fusion": False,
                               "prange": False}
warnings.filterwarnings("ignore", category=NumbaPerformanceWarning,
                        message=r"(?s).*no transformation for parallel execution.*floydwarp[/\\]graph[/\\]kernels")


@njit(inline="always")
def _absent(w, mask, missing, use_missing, i, j):
    """Graph's rule for "no edge" at ``w[i, j]`` (``mask`` of shape (0, 0): no mask)."""
    x = w[i, j]
    return (mask.shape[0] > 0 and mask[i, j]) or (use_missing and x == missing) or x == np.inf


@njit(cache=True, nogil=True)
def dense_scan(w, mask, missing, use_missing, first, stop):
    """Rows ``first .. stop - 1`` of a dense weight matrix: (edges, any weight present,
    smallest and largest weight, all weights integers, first entry (i, j) holding NaN or
    -inf, i = -1 for none; the rows after it are not read).  A non-negative self-loop, which
    the graph drops, is neither an edge nor a weight, as in edge lists and batches."""
    n = w.shape[0]
    edges, seen, whole = 0, False, True
    a = narrow(0, w)
    b = narrow(0, w)
    for i in range(first, stop):
        for j in range(n):
            if _absent(w, mask, missing, use_missing, i, j):
                continue
            x = w[i, j]
            if x != x or x == -np.inf:
                return edges, seen, a, b, whole, i, j
            edges, seen, a, b, whole = _tally(x, i, j, edges, seen, a, b, whole)
    return edges, seen, a, b, whole, -1, -1


@njit(inline="always")
def _tally(x, i, j, edges, seen, a, b, whole):
    """A present weight ``x`` at ``(i, j)`` into a scan's running answer (:func:`dense_scan`).
    A non-negative self-loop, which the graph drops, is skipped as edge lists skip it: the 0
    diagonal of most matrices would otherwise make a unit-weight matrix look weighted (no
    breadth-first search), and a large diagonal entry would widen the dtype."""
    if i == j and x >= 0:
        return edges, seen, a, b, whole
    if not seen:
        a = x
        b = x
        seen = True
    a = min(a, x)
    b = max(b, x)
    whole = whole and np.floor(x) == x
    return edges + 1, seen, a, b, whole


@njit(inline="always")
def _store(out, pred, with_pred, li, lj, r, c, i, j, x, inf):
    """One start entry: ``x`` as given (INF when absent), with the diagonal at most 0.  A
    non-negative self-loop is no edge, told from ``x`` before it is narrowed: the dtype choice
    skips it (_tally), so narrowing it first could wrap it negative (uint16 65535 into int16: -1)."""
    v = narrow(0, out) if i == j and x > 0 else narrow(x, out)
    out[li, lj, r, c] = v
    if with_pred:
        pred[li, lj, r, c] = i if (i != j and v < inf) else NO_PREDECESSOR


@njit(cache=True, nogil=True, parallel=SERIAL_BY_PARALLEL_PIPELINE)
def dense_tiles(w, mask, missing, use_missing, row0, col0, inf, out, pred, with_pred, first, stop):
    """Rows ``first .. stop - 1`` of ``out`` (row ``s`` is row ``s % bh`` of tile row
    ``s // bh``): the start matrix of a dense graph (and ``pred``)."""
    n = w.shape[0]
    nr, nc, bh, bw = out.shape
    inf = narrow(inf, out)
    for s in range(first, stop):
        li = s // bh
        r = s - li * bh
        i = row0[li] + r
        for lj in range(nc):
            j0 = col0[lj]
            for c in range(bw):
                j = j0 + c
                if i < n and j < n and not _absent(w, mask, missing, use_missing, i, j):
                    _store(out, pred, with_pred, li, lj, r, c, i, j, w[i, j], inf)
                else:
                    _store(out, pred, with_pred, li, lj, r, c, i, j, inf, inf)


@njit(inline="always")
def _first_at_least(src, value):
    """The first index of sorted ``src`` holding ``value`` or more (``src.size`` if none)."""
    a, b = 0, src.shape[0]
    while a < b:
        mid = (a + b) // 2
        if src[mid] < value:
            a = mid + 1
        else:
            b = mid
    return a


@njit(cache=True, nogil=True)
def edge_tiles(src, dst, w, n, row0, col0, col_tile, inf, out, pred, with_pred, first, stop):
    """Tile rows ``first .. stop - 1`` of the start matrix of an edge list sorted by source
    into ``out[li, lj]`` (and ``pred``): INF with 0 on the diagonal, then the edges leaving
    the rows of ``li``.  ``col_tile[j // bw]`` is the local tile column holding column j, -1
    where none is held here, built by the caller: an array allocated here and ``min``/``max``
    of scalars each compile a Numba overload of their own, 0.25 s of this kernel's 0.6 s
    cold compile (bench/NOTES_cpu.md, the first run after install)."""
    nr, nc, bh, bw = out.shape
    inf = narrow(inf, out)
    for li in range(first, stop):
        for r in range(bh):
            i = row0[li] + r
            for lj in range(nc):
                j0 = col0[lj]
                for c in range(bw):
                    _store(out, pred, with_pred, li, lj, r, c, i, j0 + c, inf, inf)
        end = row0[li] + bh                              # a select, not min(): see above
        for e in range(_first_at_least(src, row0[li]), _first_at_least(src, end if end < n else n)):
            i = src[e]
            j = dst[e]
            lj = col_tile[j // bw]
            if lj >= 0:
                _store(out, pred, with_pred, li, lj, i - row0[li], j - col0[lj], i, j, w[e], inf)


@njit(cache=True)
def dense_edges(w, mask, missing, use_missing, src, dst, weight):
    """The edges of a dense weight matrix in row order (Graph's rules: absent entries and
    non-negative self-loops are no edge) written into ``src``, ``dst`` and ``weight``, which
    hold at least as many entries; returns how many were written."""
    n = w.shape[0]
    k = 0
    for i in range(n):
        for j in range(n):
            if _absent(w, mask, missing, use_missing, i, j):
                continue
            x = w[i, j]
            if i == j and x >= 0:
                continue
            if k == src.size:
                return k
            src[k] = i
            dst[k] = j
            weight[k] = x
            k += 1
    return k


@njit(cache=True)
def compressed_pairs(indptr, indices, by_row, src, dst):
    """The int64 ids of the stored entries of a CSR (``by_row``) or CSC matrix written into
    ``src`` and ``dst`` (of ``indices.size`` entries) in storage order -- entry ``e`` of line
    ``r`` is ``(r, indices[e])`` in CSR, ``(indices[e], r)`` in CSC -- and their count,
    ``indptr[-1]`` (SciPy lets ``indices`` be longer); -1 for offsets that do not rise from 0
    to at most ``indices.size`` (nothing is read or written past the arrays).  The caller
    allocates: an array made here would cost more to hand back than the pass."""
    major, minor = (src, dst) if by_row else (dst, src)
    lines = indptr.size - 1
    if lines < 0 or indptr[0] != 0 or indptr[lines] > indices.size:
        return -1
    m = indptr[lines]
    for r in range(lines):
        a, b = indptr[r], indptr[r + 1]
        if b < a or b > m:
            return -1
        for e in range(a, b):
            major[e] = r
            minor[e] = indices[e]
    return m


@njit(cache=True)
def scipy_sparse_weights(indptr, indices, data, by_row, unweighted, directed, out):
    """SciPy's ``floyd_warshall`` reading of a CSR (``by_row``) or CSC matrix into float64
    ``out`` (n x n), ``inf`` for no edge: a stored entry ``x`` at ``(i, j)``, ``i != j``
    (self-loops are ignored), lowers the weight to ``x`` (1 when ``unweighted``, for any ``x``
    below ``inf``), also at ``(j, i)`` unless ``directed`` -- so explicit zeros are edges,
    duplicates keep the smallest, and ``inf`` and NaN entries are no edge, as in SciPy's
    ``csgraph_to_dense``.  Returns :func:`dense_scan`'s answer for what it wrote (one pass
    over the entries and one over the matrix, where SciPy's validation took 3 us of a small
    call), or bad entry ``(-2, -2)`` for a malformed matrix (offsets that do not rise from 0
    to at most the size of ``indices`` and ``data`` over n lines, an index out of range), of
    which nothing is read past the arrays."""
    n = out.shape[0]
    out[:] = np.inf
    edges, seen, whole = 0, False, True
    a = b = 0.0
    lines = indptr.size - 1
    if lines != n or indptr[0] != 0 or indptr[lines] > min(indices.size, data.size):
        return edges, seen, a, b, whole, -2, -2
    for r in range(lines):
        first, stop = indptr[r], indptr[r + 1]
        if stop < first or stop > indptr[lines]:
            return edges, seen, a, b, whole, -2, -2
        for e in range(first, stop):
            c = np.int64(indices[e])
            if c < 0 or c >= n:
                return edges, seen, a, b, whole, -2, -2
            x = np.float64(data[e])
            if c == r or not x < np.inf:
                continue
            if unweighted:
                x = 1.0
            i = r if by_row else c
            j = c if by_row else r
            out[i, j] = min(out[i, j], x)
            if not directed:
                out[j, i] = min(out[j, i], x)
    for i in range(n):
        for j in range(n):
            v = out[i, j]
            if v == np.inf:
                continue
            if v == -np.inf:                   # refused, as a dense -inf is
                return edges, seen, a, b, whole, i, j
            edges, seen, a, b, whole = _tally(v, i, j, edges, seen, a, b, whole)
    return edges, seen, a, b, whole, -1, -1


@njit(cache=True)
def weight_scan(w):
    """(smallest, largest, all integers) of a non-empty array of finite weights, in two loops
    that LLVM vectorizes (the reductions of jit.py; a ``whole = whole and ...`` or a
    compare-and-select on floats kept the one loop it was scalar: 0.34 -> 0.07 ms for
    194,000 float64 weights on the 2-core box, where NumPy's min, max and floor took 0.26)."""
    fractions = 0
    for i in range(w.size):
        fractions += np.int64(fractional(w[i]))
    a, b = w[0], w[0]
    for i in range(w.size):     # a loop of its own: beside the sum, LLVM vectorized neither
        a, b = least(a, w[i]), greatest(b, w[i])
    return a, b, fractions == 0


@njit(inline="always")
def _scipy_entry(g, i, j, null_within, nonfinite_null, unweighted):
    x = np.float64(g[i, j])
    if nonfinite_null and (x != x or x == np.inf or x == -np.inf):
        return np.inf
    if abs(x) <= null_within:
        return np.inf
    if unweighted:
        return np.inf if x == np.inf else 1.0
    return x


@njit(cache=True, nogil=True)
def scipy_weights(g, null_within, nonfinite_null, unweighted, directed, out, first, stop):
    """SciPy's ``floyd_warshall`` reading of a dense matrix into float64 ``out``, ``inf`` for
    no edge: entries with ``|x| <= null_within`` and, with ``nonfinite_null``, NaN and
    +-inf are no edge; ``unweighted`` makes every edge 1; self-loops are ignored;
    undirected takes the lighter of ``(i, j)`` and ``(j, i)`` (NaN stays NaN, to be refused).
    Rows ``first .. stop - 1``; returns :func:`dense_scan`'s answer for them as written
    (``inf`` no edge), so the weights need no second pass."""
    n = g.shape[0]
    edges, seen, whole, bad_i, bad_j = 0, False, True, -1, -1
    a = b = 0.0
    for i in range(first, stop):
        for j in range(n):
            v = _scipy_entry(g, i, j, null_within, nonfinite_null, unweighted)
            if not directed:
                u = _scipy_entry(g, j, i, null_within, nonfinite_null, unweighted)
                v = u if (u != u or u < v) else v
            v = np.inf if i == j else v
            out[i, j] = v
            if v == np.inf or bad_i >= 0:
                continue
            if v != v or v == -np.inf:
                bad_i, bad_j = i, j
                continue
            edges, seen, a, b, whole = _tally(v, i, j, edges, seen, a, b, whole)
    return edges, seen, a, b, whole, bad_i, bad_j


@njit(cache=True)
def bucket_by(keys, values, indptr, indices):
    """``values`` grouped by ``keys`` in 0..n-1 into ``indptr`` (n + 1 entries) and ``indices``
    (a CSR matrix of ones, row ``k`` holding the values of key ``k`` in their order in the
    input), by a counting sort: O(n + m), where a stable argsort of 400,000 keys took 29 ms.
    The caller allocates (an array made here costs more to hand back than a small pass)."""
    n = indptr.size - 1
    indptr[:] = 0
    for k in keys:
        indptr[k + 1] += 1
    for k in range(n):
        indptr[k + 1] += indptr[k]
    fill = indptr[:-1].copy()
    for e in range(keys.size):
        k = keys[e]
        indices[fill[k]] = values[e]
        fill[k] += 1
