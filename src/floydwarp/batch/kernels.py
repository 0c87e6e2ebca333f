"""Numba kernels of the batched CPU engine: one ``prange`` over graphs, each graph's
matrix small enough to stay in the core's L1 cache while Floyd-Warshall runs on it.

Every graph is solved in a flat scratch matrix whose rows are padded to a whole number of
vectors (``width = nv * lanes(dtype)`` entries, row ``i`` at ``i * width``): the row
updates (vectors.py) then run on full vectors with no scalar remainder.  The padding
columns start at INF and only ever receive candidates through padding columns of row k,
so they never reach a real entry (``k`` runs over the graph's own vertices only).

Arithmetic follows numeric.py (vectors.py says how each dtype adds): a candidate wins
only when strictly smaller, and with ``clamp`` every new entry is kept at or above
``-INF``.  The distance kernel takes two pivots (k, k + 1) per pass over the matrix:
row k + 1 and each d[i, k + 1] first take their step-k values, then every row takes both
steps at once -- the textbook recurrence, half the loads and stores.

A graph starts from its edges (:func:`solve_all`) or from its dense matrix read in place
(:func:`solve_dense`: whole vectors, vectors.load_vector); the weights' scan of dense
matrices reads them the same way (:func:`scan_dense`).
"""
from __future__ import annotations

import numpy as np
from numba import njit, prange

from ..jit import narrow
from .convert import fractional, greatest, least, matrix_of
from .vectors import lanes, load_vector, minplus_row, minplus_row_pair, store_vector


@njit(cache=True)
def _load(d, n, width, inf, src, dst, w, lo, hi):
    """d[:n * width] = the start matrix of one graph from its edges src/dst/w[lo:hi]
    (``w`` None: every edge weighs 1)."""
    for e in range(n * width):
        d[e] = inf
    for i in range(n):
        d[i * width + i] = 0
    for e in range(lo, hi):
        at = src[e] * width + dst[e]
        x = 1 if w is None else w[e]
        if x < d[at]:
            d[at] = x


@njit(cache=True)
def _relax(d, row2, n, width, nv, lo, clamp):
    """Floyd-Warshall on one graph's rows; rows of 1..4 vectors get straight-line code."""
    if nv == 1:
        _pivots(d, row2, n, width, 1, lo, clamp)
    elif nv == 2:
        _pivots(d, row2, n, width, 2, lo, clamp)
    elif nv == 3:
        _pivots(d, row2, n, width, 3, lo, clamp)
    elif nv == 4:
        _pivots(d, row2, n, width, 4, lo, clamp)
    else:
        _pivots(d, row2, n, width, nv, lo, clamp)


@njit(inline="always")
def _pivots(d, row2, n, width, nv, lo, clamp):
    """The pivots two at a time (row2: row k + 1 after step k); inlined, so a constant
    ``nv`` reaches the intrinsics as a literal."""
    for k in range(0, n - 1, 2):
        bk = k * width
        b1 = bk + width
        minplus_row(row2, 0, d, b1, d[b1 + k], d, bk, nv, lo, clamp)
        dkk1 = d[bk + k + 1]
        for i in range(n):
            minplus_row_pair(d, i * width, k, dkk1, d, bk, row2, nv, lo, clamp)
    if n % 2:
        bk = (n - 1) * width
        for i in range(n):
            bi = i * width
            minplus_row(d, bi, d, bi, d[bi + n - 1], d, bk, nv, lo, clamp)


@njit(cache=True)
def _relax_pred(d, p, row, prow, n, width, inf, lo, clamp):
    """One pivot at a time, a win also taking row k's predecessor (SciPy's convention)."""
    for k in range(n):
        bk = k * width
        for j in range(width):
            row[j] = d[bk + j]
            prow[j] = p[bk + j]
        for i in range(n):
            bi = i * width
            a = d[bi + k]
            if a == inf:
                continue
            for j in range(width):
                x = narrow(a + row[j], d)
                if clamp and x < lo:
                    x = lo
                if x < d[bi + j]:
                    d[bi + j] = x
                    p[bi + j] = prow[j]


@njit(cache=True)
def _store(d, n, width, flat, base, size, threshold, out_inf, top, lanes_):
    """Graph g's padded size x size block of the output (``flat[base:]``, rows of ``size``):
    distances below ``threshold`` (at most ``top``), out_inf for the rest and the padding.
    Whole vectors (vectors.store_vector): a vector may run past its row into the next one,
    which is written after it; the block's last vector is moved back inside it (or, for
    blocks narrower than a vector, its entries written one by one), so no store leaves
    the block another thread may be writing."""
    end = base + size * size
    for i in range(size):
        row = base + i * size
        valid = n if i < n else 0
        di = i * width
        for o in range(0, size, lanes_):
            if row + o + lanes_ <= end:
                store_vector(flat, row + o, d, di + o, valid - o, threshold, out_inf, top)
            elif size >= lanes_:
                back = size - lanes_
                store_vector(flat, row + back, d, di + back, valid - back, threshold, out_inf, top)
                break
            else:
                for j in range(o, size):
                    v = d[di + j] if j < valid else threshold
                    flat[row + j] = out_inf if v >= threshold else (v if v < top else top)
                break


@njit(cache=True)
def _negative(d, n, width):
    """A negative diagonal entry: the graph has a negative cycle."""
    for i in range(n):
        if d[i * width + i] < 0:
            return True
    return False


@njit(cache=True)
def _store_pred(p, n, width, d, threshold, pred, g, none):
    size = pred.shape[1]
    for i in range(n):
        bi = i * width
        for j in range(n):
            pred[g, i, j] = p[bi + j] if d[bi + j] < threshold else none
        for j in range(n, size):
            pred[g, i, j] = none
    for i in range(n, size):
        for j in range(size):
            pred[g, i, j] = none


@njit(parallel=True, cache=True)
def solve_all(sizes, eptr, src, dst, w, out, negative, inf, lo, clamp, threshold, out_inf, top,
              chunk, lanes_):
    """Distances of every graph into ``out`` (B, N, N) in the arithmetic of ``inf``'s dtype
    (``w`` None: hop counts), reachable ones at most ``top`` (the clip, else the threshold);
    ``negative[g]`` flags a negative cycle."""
    count = sizes.size
    size = out.shape[1]
    flat = out.reshape(out.size)
    width_max = max(lanes_, (size + lanes_ - 1) // lanes_ * lanes_)
    for c in prange((count + chunk - 1) // chunk):
        d = np.full(size * width_max + lanes_, inf)       # + one vector: _store reads whole vectors
        row2 = np.full(width_max, inf)
        for g in range(c * chunk, min(count, (c + 1) * chunk)):
            n = sizes[g]
            nv = (n + lanes_ - 1) // lanes_
            _load(d, n, nv * lanes_, inf, src, dst, w, eptr[g], eptr[g + 1])
            negative[g] = _solve_loaded(d, row2, n, nv, flat, g, size, lo, clamp, threshold, out_inf, top, lanes_)


@njit(parallel=True, cache=True)
def solve_dense(addresses, rows, sizes, like, missing, use_missing, unit, out, negative, bad, inf, lo, clamp,
                threshold, out_inf, top, chunk, lanes_):
    """:func:`solve_all` reading each graph's start matrix straight from its dense matrix
    (convert.matrix_of: ``addresses``, ``rows``; the rules of convert.dense_scan; ``unit``:
    every edge weighs 1), one pass over the matrices and no edge list.  ``bad[g]``: the
    first entry (``i * n + j``) of graph g holding NaN or ``-inf``, else -1 (its distances
    are then meaningless: the caller refuses the batch)."""
    count = sizes.size
    size = out.shape[1]
    flat = out.reshape(out.size)
    width_max = max(lanes_, (size + lanes_ - 1) // lanes_ * lanes_)
    for c in prange((count + chunk - 1) // chunk):
        d = np.full(size * width_max + lanes_, inf)       # + one vector: _store reads whole vectors
        row2 = np.full(width_max, inf)
        for g in range(c * chunk, min(count, (c + 1) * chunk)):
            n = sizes[g]
            nv = (n + lanes_ - 1) // lanes_
            m = matrix_of(addresses, rows, sizes, g, like)
            bad[g] = _load_dense(d, m, n, rows[g], nv * lanes_, inf, missing, use_missing, unit, lanes_)
            negative[g] = _solve_loaded(d, row2, n, nv, flat, g, size, lo, clamp, threshold, out_inf, top, lanes_)


#: graphs a thread scans at a time (scan_dense)
SCAN_CHUNK = 64


def scan_dense(addresses, rows, sizes, like, missing, use_missing, top, bottom, counts, bad, low, high, whole):
    """convert.dense_scan's answers (the same arguments) for matrices whose every entry a wide
    dtype -- ``top``'s: float64, or int64 for integers of up to 32 bits -- holds apart from
    ``top``, its largest value: :func:`scan_wide`."""
    scan_wide(addresses, rows, sizes, like, missing, use_missing, top, top, bottom, counts, bad, low, high, whole,
              SCAN_CHUNK, lanes(np.asarray(top).dtype))


@njit(parallel=True, cache=True)
def scan_wide(addresses, rows, sizes, like, missing, use_missing, marker, top, bottom, counts, bad, low, high, whole,
              chunk, lanes_):
    """Each graph read as the solve reads it (:func:`_load_dense`, whole vectors) into a
    scratch of ``marker``'s dtype, absent entries and non-negative self-loops at ``marker``,
    and its statistics taken over the scratch in one long loop, which LLVM vectorizes
    (convert.dense_scan's loops over rows of 1-59 entries ran mostly in their scalar
    remainders: 3.5-5 us a graph of 1-59 vertices in float64 on the 2-core box, one thread,
    against 2.7-3 here, most of it the matrices' bytes coming from memory).  ``lanes_``:
    entries of ``marker``'s dtype in one vector."""
    count = sizes.size
    most = 0
    for g in range(count):
        most = max(most, sizes[g])
    width_max = max(lanes_, (most + lanes_ - 1) // lanes_ * lanes_)
    for c in prange((count + chunk - 1) // chunk):
        d = np.full(most * width_max + lanes_, marker)
        for g in range(c * chunk, min(count, (c + 1) * chunk)):
            n = sizes[g]
            width = (n + lanes_ - 1) // lanes_ * lanes_
            m = matrix_of(addresses, rows, sizes, g, like)
            bad[g] = _load_dense(d, m, n, rows[g], width, marker, missing, use_missing, False, lanes_)
            for i in range(n):
                if not d[i * width + i] < 0:         # a non-negative self-loop is no edge
                    d[i * width + i] = marker
            kept, fractions = 0, 0
            entries = d[:n * width]
            for e in range(n * width):
                x = entries[e]
                keep = x != marker
                kept += np.int64(keep)
                fractions += np.int64(keep & fractional(x))
            lo, hi = top, bottom
            for e in range(n * width):         # a loop of its own: with the sums, LLVM vectorizes neither
                x = entries[e]
                keep = x != marker
                lo = least(lo, x if keep else top)
                hi = greatest(hi, x if keep else bottom)
            counts[g], low[g], high[g], whole[g] = kept, lo, hi, fractions == 0


@njit(cache=True)
def _load_dense(d, m, n, r, width, inf, missing, use_missing, unit, lanes_):
    """d[:n * width] = the start matrix of the dense matrix ``m`` (row i at ``i * r``): INF
    where an entry is absent (+inf or ``missing``), 0 on the diagonal unless a negative
    self-loop is below it; returns the first entry holding NaN or -inf, else -1.  A row is
    read in whole vectors (vectors.load_vector) where they stay inside the matrix, else (its
    last row or two) entry by entry.  ``lanes_``: entries of ``d``'s dtype in one vector."""
    wrong = False
    extent = (n - 1) * r + n
    for i in range(n):
        base, o = i * r, i * width
        if base + width <= extent:
            for v in range(0, width, lanes_):
                wrong |= load_vector(d, o + v, m, base + v, n - v, inf, missing, use_missing, unit)
        else:
            for j in range(n):
                x = m[base + j]
                wrong |= (x != x) | (x == -np.inf)
                v = narrow(1, d) if unit else narrow(x, d)
                d[o + j] = inf if (x == np.inf) | (use_missing & (x == missing)) else v
            for j in range(n, width):
                d[o + j] = inf
        x = m[base + i]        # the diagonal from the matrix (a load of d here waited on the vector store)
        v = narrow(x, d)
        d[o + i] = v if (not unit and x < 0 and v < 0 and not (use_missing and x == missing)) else narrow(0, d)
    if wrong:               # maybe only in lanes past a row's end: look in the graph's own entries
        for e in range(n * n):
            x = m[e // n * r + e % n]
            if x != x or x == -np.inf:
                return e
    return -1


@njit(inline="always")
def _solve_loaded(d, row2, n, nv, flat, g, size, lo, clamp, threshold, out_inf, top, lanes_):
    """Floyd-Warshall on graph g's loaded rows, its block of the output written; True when
    it has a negative cycle."""
    width = nv * lanes_
    _relax(d, row2, n, width, nv, lo, clamp)
    _store(d, n, width, flat, g * size * size, size, threshold, out_inf, top, lanes_)
    return _negative(d, n, width)


@njit(parallel=True, cache=True)
def solve_all_pred(sizes, eptr, src, dst, w, out, pred, negative, inf, lo, clamp, threshold, out_inf,
                   top, chunk, lanes_, none):
    """:func:`solve_all` with predecessors (SciPy's convention, ``none`` where there is none)."""
    count = sizes.size
    size = out.shape[1]
    flat = out.reshape(out.size)
    width_max = max(lanes_, (size + lanes_ - 1) // lanes_ * lanes_)
    for c in prange((count + chunk - 1) // chunk):
        d = np.full(size * width_max + lanes_, inf)       # + one vector: _store reads whole vectors
        p = np.empty(size * width_max, np.int32)
        row = np.full(width_max, inf)
        prow = np.empty(width_max, np.int32)
        for g in range(c * chunk, min(count, (c + 1) * chunk)):
            n = sizes[g]
            width = (n + lanes_ - 1) // lanes_ * lanes_
            _load(d, n, width, inf, src, dst, w, eptr[g], eptr[g + 1])
            for i in range(n):
                for j in range(width):
                    p[i * width + j] = i if d[i * width + j] < inf and i != j else none
            _relax_pred(d, p, row, prow, n, width, inf, lo, clamp)
            _store_pred(p, n, width, d, threshold, pred, g, none)
            _store(d, n, width, flat, g * size * size, size, threshold, out_inf, top, lanes_)
            negative[g] = _negative(d, n, width)


@njit(cache=True)
def _graph_of(ptr, vertex):
    """The graph that holds ``vertex``: the last ``g`` with ``ptr[g] <= vertex``."""
    return np.searchsorted(ptr, vertex, side="right") - 1


@njit(parallel=True, cache=True)
def pyg_edges(src, dst, ptr, chunk):
    """One parallel pass over a PyG batch's edges, ``chunk`` edges a thread at a time:
    ``(local source, local target, eptr, code, first bad edge, grouped)``.  Code 1/2: a
    source/target outside the batch, 3: an edge between two graphs (graphs.py words the
    error; the first bad edge in edge order).  ``grouped``: each graph's edges come together
    and in graph order, as PyG stores them; only then is ``eptr`` (B + 1: graph g's edges
    are ``eptr[g] .. eptr[g + 1] - 1``) filled.  A graph is looked up (binary search in
    ``ptr``) only when the source leaves the current one; every edge writes the ``eptr``
    entries of the graphs its predecessor's graph is followed by, so threads write
    disjoint entries."""
    edges = src.size
    count = ptr.size - 1
    nodes = ptr[-1]
    local_src = np.empty(edges, np.int32)
    local_dst = np.empty(edges, np.int32)
    eptr = np.empty(count + 1, np.int64)
    parts = (edges + chunk - 1) // chunk
    codes = np.zeros(parts, np.int64)
    bads = np.zeros(parts, np.int64)
    scattered = np.zeros(parts, np.bool_)
    for c in prange(parts):
        lo = c * chunk
        prev = -1
        if lo > 0 and 0 <= src[lo - 1] < nodes:       # else the chunk before reports it
            prev = _graph_of(ptr, src[lo - 1])
        g = max(prev, 0)
        for e in range(lo, min(edges, lo + chunk)):
            u = src[e]
            v = dst[e]
            if u < 0 or u >= nodes:
                codes[c], bads[c] = 1, e
                break
            if v < 0 or v >= nodes:
                codes[c], bads[c] = 2, e
                break
            if u < ptr[g] or u >= ptr[g + 1]:
                g = _graph_of(ptr, u)
            if v < ptr[g] or v >= ptr[g + 1]:
                codes[c], bads[c] = 3, e
                break
            if g < prev:
                scattered[c] = True
            elif not scattered[c]:
                for h in range(prev + 1, g + 1):
                    eptr[h] = e
                prev = g
            local_src[e] = u - ptr[g]
            local_dst[e] = v - ptr[g]
    for c in range(parts):
        if codes[c]:
            return local_src, local_dst, eptr, codes[c], bads[c], False
    last = _graph_of(ptr, src[edges - 1]) if edges else -1
    for h in range(last + 1, count + 1):
        eptr[h] = edges
    return local_src, local_dst, eptr, 0, -1, not scattered.any()
