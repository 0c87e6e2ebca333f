"""The per-graph steps of the batch CPU kernels (kernels.py) -- load a graph's start rows,
relax them, store them -- as C function pointers (Numba ``cfunc``\\ s), made on first use
for the dtypes a run needs and kept in Numba's cache.

Why pointers: a kernel that calls a jitted function links its code in and optimizes the
whole again, once for every combination of argument types it is compiled for.  The dense
kernel read the matrices' dtype, added in the arithmetic dtype and stored the output's, so
a test suite compiled it in 32 versions (about 10 s each on the 2-core box), each holding
another copy of the relaxation.  Through pointers -- one C signature a kind of step,
whatever its dtypes: every array by its address, the arithmetic's scalars in a small array
(:func:`bounds`) -- each kernel is compiled once, the relaxation once for each arithmetic
dtype (1-2 s), and each loader and store (about a second) once for its pair of dtypes.  A
call through a pointer costs a few nanoseconds a graph; the steps were separate functions
before as well.

The rows: a graph is solved in a flat scratch matrix whose rows are padded to a whole
number of vectors (``width = nv * lanes(dtype)`` entries, row ``i`` at ``i * width``): the
row updates (vectors.py) run on full vectors with no scalar remainder.  The padding columns
start at INF and only ever receive candidates through padding columns of row k, so they
never reach a real entry (``k`` runs over the graph's own vertices only).

Arithmetic follows numeric.py (vectors.py says how each dtype adds): a candidate wins only
when strictly smaller, and with ``clamp`` every new entry is kept at or above ``-INF``.
The relaxation takes two pivots (k, k + 1) per pass over the matrix: row k + 1 and each
d[i, k + 1] first take their step-k values, then every row takes both steps at once -- the
textbook recurrence, half the loads and stores.
"""
from __future__ import annotations

import numpy as np
from numba import njit, types

from ..jit import array_at, narrow, step
from ..predecessors import NO_PREDECESSOR
from .vectors import lanes, load_vector, minplus_row, minplus_row_pair, prefetch, store_vector

#: an address (of a scratch matrix, an input matrix, the output, the bounds) as the steps take it
_AT = types.int64
_INT = types.int64
#: the arithmetic dtype's scalars, an array of four read by address: INF, the clamp's floor
#: (-INF, or 0 without the clamp), the unreachable threshold, the clip (``top``)
BOUNDS = ("inf", "lo", "threshold", "top")


def bounds(dtype, inf, lo, threshold, top) -> np.ndarray:
    """The :data:`BOUNDS` array the steps of ``dtype`` read (keep it alive while they run)."""
    return np.array([inf, lo, threshold, top], dtype)


def relax(dtype):
    """``void(d, row2, n, width, nv, bounds, clamp, ahead, ahead_rows, ahead_stride,
    ahead_bytes)``: Floyd-Warshall on one graph's loaded rows (``d``: n rows of ``width = nv
    * lanes`` entries; ``row2``: one row of scratch), asking meanwhile for the cache lines of
    the next graph's matrix (``ahead``: its address, 0 for none; ``ahead_rows`` rows of
    ``ahead_bytes`` bytes, ``ahead_stride`` bytes apart), spread over the pivots: its load
    then finds them in cache.  Loading a padded float64 array's rows was most of what its
    hop counts cost beyond PyG edges' (2 threads, 3,000 graphs of 1-59 vertices, one run
    alternating: 2.51 -> 2.24 us a graph for the solve alone)."""
    return step(_relax_of, (np.dtype(dtype),),
                types.void(_AT, _AT, _INT, _INT, _INT, _AT, types.boolean, _AT, _INT, _INT, _INT))


def relax_pred(dtype):
    """``void(d, p, row, prow, n, width, bounds, clamp, pred, base, size)``: :func:`relax`
    with predecessors (SciPy's convention, one pivot at a time; ``p``, ``prow``: int32
    scratch), graph g's block of the int32 (B, size, size) predecessors at ``pred + base``
    written."""
    return step(_relax_pred_of, (np.dtype(dtype),),
                 types.void(_AT, _AT, _AT, _AT, _INT, _INT, _AT, types.boolean, _AT, _INT, _INT))


def store(dtype, out_dtype, out_inf):
    """``bool(d, n, width, out, base, size, bounds)``: graph g's padded size x size block of
    the output (entries of ``out_dtype`` from ``out + base``): distances below the threshold
    (at most ``top``), ``out_inf`` for the rest and the padding; True when the graph has a
    negative cycle (a negative diagonal entry).  ``d`` holds ``size`` rows of the scratch."""
    out_dt = np.dtype(out_dtype)
    return step(_store_of, (np.dtype(dtype), out_dt, out_dt.type(out_inf)),
                 types.boolean(_AT, _INT, _INT, _AT, _INT, _INT, _AT))


def load_dense(dtype, matrix_dtype):
    """``int64(d, m, n, r, width, bounds, missing, use_missing, unit)``: the start rows of the
    dense matrix at ``m`` (entries of ``matrix_dtype``, row i at ``i * r``; ``missing``: the
    address of one entry, the value read as no edge where ``use_missing``; ``unit``: every
    edge weighs 1); returns the first entry holding NaN or -inf, else -1 (:func:`_load_dense`)."""
    return step(_dense_of, (np.dtype(dtype), np.dtype(matrix_dtype)),
                 types.int64(_AT, _AT, _INT, _INT, _INT, _AT, _AT, types.boolean, types.boolean))


def load_edges(dtype, weighted):
    """``void(d, n, width, bounds, src, dst, w, lo, hi)``: the start rows of one graph from its
    edges ``lo .. hi - 1`` (int32 ``src``/``dst``; ``w`` in ``dtype``, read only when
    ``weighted``, else every edge weighs 1)."""
    return step(_edges_of, (np.dtype(dtype), bool(weighted)),
                 types.void(_AT, _INT, _INT, _AT, _AT, _AT, _AT, _INT, _INT))


# ---------------------------------------------------------------------- the steps' bodies
def _relax_of(dt):
    like = np.empty(0, dt)

    def relax_rows(d_at, row2_at, n, width, nv, bounds_at, clamp, ahead, ahead_rows, ahead_stride, ahead_bytes):
        d = array_at(d_at, n * width, like)
        row2 = array_at(row2_at, width, like)
        lo = array_at(bounds_at, 4, like)[1]
        nxt = (ahead, ahead_rows, ahead_stride, (ahead_bytes + 63) // 64 + 1)
        if nv == 1:                  # rows of 1..4 vectors get straight-line code
            _pivots(d, row2, n, width, 1, lo, clamp, nxt)
        elif nv == 2:
            _pivots(d, row2, n, width, 2, lo, clamp, nxt)
        elif nv == 3:
            _pivots(d, row2, n, width, 3, lo, clamp, nxt)
        elif nv == 4:
            _pivots(d, row2, n, width, 4, lo, clamp, nxt)
        else:
            _pivots(d, row2, n, width, nv, lo, clamp, nxt)

    return relax_rows


def _relax_pred_of(dt):
    like, ids = np.empty(0, dt), np.empty(0, np.int32)

    def relax_pred_rows(d_at, p_at, row_at, prow_at, n, width, bounds_at, clamp, pred_at, base, size):
        d, p = array_at(d_at, n * width, like), array_at(p_at, n * width, ids)
        row, prow = array_at(row_at, width, like), array_at(prow_at, width, ids)
        inf, lo, threshold, _ = array_at(bounds_at, 4, like)
        for i in range(n):
            for j in range(width):
                p[i * width + j] = i if d[i * width + j] < inf and i != j else NO_PREDECESSOR
        _relax_pred(d, p, row, prow, n, width, inf, lo, clamp)
        _store_pred(p, n, width, d, threshold, array_at(pred_at, base + size * size, ids), base, size)

    return relax_pred_rows


def _store_of(dt, out_dt, out_inf):
    like, out_like, lane = np.empty(0, dt), np.empty(0, out_dt), lanes(dt)

    def store_rows(d_at, n, width, out_at, base, size, bounds_at):
        width_max = max(lane, (size + lane - 1) // lane * lane)
        d = array_at(d_at, size * width_max + lane, like)
        _, _, threshold, top = array_at(bounds_at, 4, like)
        _store(d, n, width, array_at(out_at, base + size * size, out_like), base, size, threshold, out_inf, top, lane)
        for i in range(n):
            if d[i * width + i] < 0:
                return True
        return False

    return store_rows


def _dense_of(dt, m_dt):
    like, m_like, lane = np.empty(0, dt), np.empty(0, m_dt), lanes(dt)

    def load_matrix(d_at, m_at, n, r, width, bounds_at, missing_at, use_missing, unit):
        d = array_at(d_at, n * width, like)
        m = array_at(m_at, max(0, (n - 1) * r + n), m_like)
        inf, missing = array_at(bounds_at, 4, like)[0], array_at(missing_at, 1, m_like)[0]
        return _load_dense(d, m, n, r, width, inf, missing, use_missing, unit, lane)

    return load_matrix


def _edges_of(dt, weighted):
    like, ids = np.empty(0, dt), np.empty(0, np.int32)

    def load_weighted(d_at, n, width, bounds_at, src_at, dst_at, w_at, lo, hi):
        _load(array_at(d_at, n * width, like), n, width, array_at(bounds_at, 4, like)[0], array_at(src_at, hi, ids),
              array_at(dst_at, hi, ids), array_at(w_at, hi, like), lo, hi)

    def load_hops(d_at, n, width, bounds_at, src_at, dst_at, w_at, lo, hi):
        _load(array_at(d_at, n * width, like), n, width, array_at(bounds_at, 4, like)[0], array_at(src_at, hi, ids),
              array_at(dst_at, hi, ids), None, lo, hi)

    return load_weighted if weighted else load_hops


@njit(inline="always")
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


@njit(inline="always")
def _ask_rows(nxt, first, last):
    """Prefetch rows ``first .. last - 1`` of the next graph (``nxt``: its address, rows,
    row stride and cache lines a row; address 0: none)."""
    ahead, _, stride, lines = nxt
    if ahead:
        for i in range(first, last):
            at = ahead + i * stride
            for line in range(lines):
                prefetch(at + line * 64)


@njit(inline="always")
def _pivots(d, row2, n, width, nv, lo, clamp, nxt):
    """The pivots two at a time (row2: row k + 1 after step k); inlined, so a constant
    ``nv`` reaches the intrinsics as a literal.  Each pass asks for its share of the next
    graph's rows (:func:`_ask_rows`): spread out, the requests overlap the arithmetic, where
    all of them at once (tried before, one and two graphs ahead) made the solve slower."""
    rows, passes, asked = nxt[1], max(1, n // 2), 0
    for k in range(0, n - 1, 2):
        upto = min(rows, rows * (k // 2 + 1) // passes)
        _ask_rows(nxt, asked, upto)
        asked = upto
        bk = k * width
        b1 = bk + width
        minplus_row(row2, 0, d, b1, d[b1 + k], d, bk, nv, lo, clamp)
        dkk1 = d[bk + k + 1]
        for i in range(n):
            minplus_row_pair(d, i * width, k, dkk1, d, bk, row2, nv, lo, clamp)
    _ask_rows(nxt, asked, rows)
    if n % 2:
        bk = (n - 1) * width
        for i in range(n):
            bi = i * width
            minplus_row(d, bi, d, bi, d[bi + n - 1], d, bk, nv, lo, clamp)


@njit(inline="always")
def _store(d, n, width, flat, base, size, threshold, out_inf, top, lanes_):
    """Graph g's padded size x size block of the output (``flat[base:]``, rows of ``size``).
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


@njit(inline="always")
def _load_dense(d, m, n, r, width, inf, missing, use_missing, unit, lanes_):
    """d[:n * width] = the start matrix of the dense matrix ``m`` (row i at ``i * r``): INF
    where an entry is absent (+inf or ``missing``), 0 on the diagonal unless a negative
    self-loop is below it; returns the first entry holding NaN or -inf, else -1.  A row is
    read in whole vectors (vectors.load_vector) where they stay inside the ``r`` x ``r``
    entries the matrix's memory holds (batch/dense.py: a padded array's block, a listed
    matrix itself), else (a listed matrix's last row or two) entry by entry.  ``lanes_``:
    entries of ``d``'s dtype in one vector."""
    wrong = False
    extent = r * r
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


@njit(inline="always")
def _store_pred(p, n, width, d, threshold, pred, base, size):
    """Graph g's padded size x size block of the predecessors (``pred[base:]``): ``p`` where
    the distance is below ``threshold``, else none, and none in the padding."""
    for i in range(size):
        for j in range(size):
            at = i * width + j
            pred[base + i * size + j] = p[at] if i < n and j < n and d[at] < threshold else NO_PREDECESSOR
