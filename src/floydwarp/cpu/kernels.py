"""Numba kernels of the ``cpu`` backend.

Everything here works on host NumPy arrays and follows numeric.py's rules:

* integer sums are computed in the matrix dtype (:func:`narrow`): INF = max // 2
  makes every sum of two entries representable, and keeping the add in the
  narrow type is what lets LLVM use 16 (int16) or 8 (int32) lanes per vector;
* a candidate replaces an entry only when ``cand < d`` (``x if x < d else d``,
  one ``vpmins*`` / ``vminp*``), so NaN from ``inf + -inf`` never wins.  Without
  predecessors the update is that select and an unconditional store (2x faster
  than a conditional store for float32 rows, 12x for the phase-1 tile); with
  predecessors the conditional store is the fast form (9.8 vs 1.1 G/s for
  ``rows``), measured on the 2-core dev machine;
* with ``clamp`` every entry ends at or above ``lo = -INF``.

The hot kernel is :func:`minplus` (``c = min(c, a (x) b)``) on separate
arrays: ``a`` and ``b`` are copies, so the vectorizer's runtime alias checks
pass and the j loop runs on full vectors; four rows of ``c`` and four k steps
share each load.  It only reads ``a``/``b``, so the clamp can be applied once
per tile afterwards (:func:`clamp_below`) instead of per candidate: clamping is
monotone, ``max(min_k x_k, lo) = min_k max(x_k, lo)``, and unclamped
intermediates stay within ``[-2 INF, INF]``, representable in the dtype.
"""
from __future__ import annotations

import numpy as np
from numba import njit, prange
from numba.extending import overload
from numba.np.numpy_support import as_dtype


# --------------------------------------------------------------------------- helpers
#: Parallelize explicit ``prange`` loops only: no implicit parfors from array
#: expressions or copies, no parfor fusion (see :func:`copy_of`).
PRANGE_ONLY = {"comprehension": False, "reduction": False, "inplace_binop": False,
                "setitem": False, "numpy": False, "stencil": False, "fusion": False,
                "prange": True}


def narrow(value, arr):
    """``value`` converted to ``arr``'s dtype (Numba widens int32 + int32 to int64)."""
    return value


@overload(narrow, inline="always")
def _narrow_impl(value, arr):
    scalar = as_dtype(arr.dtype).type

    def impl(value, arr):
        return scalar(value)

    return impl


@njit(cache=True)
def copy_of(src):
    """A C-contiguous copy of a 2-D array, by explicit loops.

    Parallel functions copy only through explicit loops: with Numba 0.68 a
    slice assignment ``buf[:] = d[k]`` before a ``prange`` loop inside an outer
    loop was miscompiled (the prange read stale or garbage ``buf``).
    """
    m, w = src.shape
    out = np.empty((m, w), src.dtype)
    for i in range(m):
        for j in range(w):
            out[i, j] = src[i, j]
    return out


@njit(cache=True)
def copy_row(src, k, out):
    """``out[:] = src[k, :]`` by an explicit loop (see :func:`copy_of`)."""
    for j in range(src.shape[1]):
        out[j] = src[k, j]


@njit(cache=True)
def clamp_below(c, lo):
    """``c = max(c, lo)`` on a 2-D array."""
    m, w = c.shape
    for i in range(m):
        for j in range(w):
            v = c[i, j]
            c[i, j] = v if v > lo else lo


# --------------------------------------------------------------------------- min-plus tile kernels
@njit(cache=True)
def minplus(c, a, b):
    """``c[i, j] = min(c[i, j], min_k a[i, k] + b[k, j])``; c, a, b do not overlap.

    Candidates are taken in increasing k with a strict ``<``.  No clamp here
    (see the module docstring).
    """
    m, w = c.shape
    kk = a.shape[1]
    m4 = m - m % 4
    k4 = kk - kk % 4
    for i in range(0, m4, 4):
        for k in range(0, k4, 4):
            a00 = a[i, k]; a01 = a[i, k + 1]; a02 = a[i, k + 2]; a03 = a[i, k + 3]
            a10 = a[i + 1, k]; a11 = a[i + 1, k + 1]; a12 = a[i + 1, k + 2]; a13 = a[i + 1, k + 3]
            a20 = a[i + 2, k]; a21 = a[i + 2, k + 1]; a22 = a[i + 2, k + 2]; a23 = a[i + 2, k + 3]
            a30 = a[i + 3, k]; a31 = a[i + 3, k + 1]; a32 = a[i + 3, k + 2]; a33 = a[i + 3, k + 3]
            for j in range(w):
                b0 = b[k, j]; b1 = b[k + 1, j]; b2 = b[k + 2, j]; b3 = b[k + 3, j]
                c0 = c[i, j]; c1 = c[i + 1, j]; c2 = c[i + 2, j]; c3 = c[i + 3, j]
                x = narrow(a00 + b0, c); c0 = x if x < c0 else c0
                x = narrow(a10 + b0, c); c1 = x if x < c1 else c1
                x = narrow(a20 + b0, c); c2 = x if x < c2 else c2
                x = narrow(a30 + b0, c); c3 = x if x < c3 else c3
                x = narrow(a01 + b1, c); c0 = x if x < c0 else c0
                x = narrow(a11 + b1, c); c1 = x if x < c1 else c1
                x = narrow(a21 + b1, c); c2 = x if x < c2 else c2
                x = narrow(a31 + b1, c); c3 = x if x < c3 else c3
                x = narrow(a02 + b2, c); c0 = x if x < c0 else c0
                x = narrow(a12 + b2, c); c1 = x if x < c1 else c1
                x = narrow(a22 + b2, c); c2 = x if x < c2 else c2
                x = narrow(a32 + b2, c); c3 = x if x < c3 else c3
                x = narrow(a03 + b3, c); c0 = x if x < c0 else c0
                x = narrow(a13 + b3, c); c1 = x if x < c1 else c1
                x = narrow(a23 + b3, c); c2 = x if x < c2 else c2
                x = narrow(a33 + b3, c); c3 = x if x < c3 else c3
                c[i, j] = c0; c[i + 1, j] = c1; c[i + 2, j] = c2; c[i + 3, j] = c3
        for k in range(k4, kk):
            a0 = a[i, k]; a1 = a[i + 1, k]; a2 = a[i + 2, k]; a3 = a[i + 3, k]
            for j in range(w):
                bk = b[k, j]
                x = narrow(a0 + bk, c)
                if x < c[i, j]:
                    c[i, j] = x
                x = narrow(a1 + bk, c)
                if x < c[i + 1, j]:
                    c[i + 1, j] = x
                x = narrow(a2 + bk, c)
                if x < c[i + 2, j]:
                    c[i + 2, j] = x
                x = narrow(a3 + bk, c)
                if x < c[i + 3, j]:
                    c[i + 3, j] = x
    for i in range(m4, m):
        for k in range(kk):
            aik = a[i, k]
            for j in range(w):
                x = narrow(aik + b[k, j], c)
                if x < c[i, j]:
                    c[i, j] = x


@njit(cache=True)
def minplus_pred(c, pc, a, b, pb):
    """:func:`minplus` with predecessors: a winning ``a[i, k] + b[k, j]`` sets ``pc[i, j] = pb[k, j]``."""
    m, w = c.shape
    kk = a.shape[1]
    m2 = m - m % 2
    k4 = kk - kk % 4
    for i in range(0, m2, 2):
        for k in range(0, k4, 4):
            a00 = a[i, k]; a01 = a[i, k + 1]; a02 = a[i, k + 2]; a03 = a[i, k + 3]
            a10 = a[i + 1, k]; a11 = a[i + 1, k + 1]; a12 = a[i + 1, k + 2]; a13 = a[i + 1, k + 3]
            for j in range(w):
                b0 = b[k, j]; b1 = b[k + 1, j]; b2 = b[k + 2, j]; b3 = b[k + 3, j]
                q0 = pb[k, j]; q1 = pb[k + 1, j]; q2 = pb[k + 2, j]; q3 = pb[k + 3, j]
                c0 = c[i, j]; c1 = c[i + 1, j]
                p0 = pc[i, j]; p1 = pc[i + 1, j]
                x = narrow(a00 + b0, c)
                if x < c0:
                    c0 = x; p0 = q0
                x = narrow(a10 + b0, c)
                if x < c1:
                    c1 = x; p1 = q0
                x = narrow(a01 + b1, c)
                if x < c0:
                    c0 = x; p0 = q1
                x = narrow(a11 + b1, c)
                if x < c1:
                    c1 = x; p1 = q1
                x = narrow(a02 + b2, c)
                if x < c0:
                    c0 = x; p0 = q2
                x = narrow(a12 + b2, c)
                if x < c1:
                    c1 = x; p1 = q2
                x = narrow(a03 + b3, c)
                if x < c0:
                    c0 = x; p0 = q3
                x = narrow(a13 + b3, c)
                if x < c1:
                    c1 = x; p1 = q3
                c[i, j] = c0; c[i + 1, j] = c1
                pc[i, j] = p0; pc[i + 1, j] = p1
        for k in range(k4, kk):
            a0 = a[i, k]; a1 = a[i + 1, k]
            for j in range(w):
                bk = b[k, j]
                x = narrow(a0 + bk, c)
                if x < c[i, j]:
                    c[i, j] = x; pc[i, j] = pb[k, j]
                x = narrow(a1 + bk, c)
                if x < c[i + 1, j]:
                    c[i + 1, j] = x; pc[i + 1, j] = pb[k, j]
    for i in range(m2, m):
        for k in range(kk):
            aik = a[i, k]
            for j in range(w):
                x = narrow(aik + b[k, j], c)
                if x < c[i, j]:
                    c[i, j] = x; pc[i, j] = pb[k, j]


# --------------------------------------------------------------------------- in-place FW on one tile
@njit(cache=True)
def fw_tile(t, clamp, lo):
    """Floyd-Warshall in place on a square array (phase 1 of the blocked schedule).

    Row k is copied to a buffer per k, so the j loop reads and writes
    different arrays and vectorizes.
    """
    n = t.shape[0]
    rowk = np.empty(n, t.dtype)
    for k in range(n):
        copy_row(t, k, rowk)
        for i in range(n):
            aik = t[i, k]
            for j in range(n):
                x = narrow(aik + rowk[j], t)
                if clamp:
                    x = x if x > lo else lo
                v = t[i, j]
                t[i, j] = x if x < v else v


@njit(cache=True)
def fw_tile_pred(t, p, clamp, lo):
    n = t.shape[0]
    rowk = np.empty(n, t.dtype)
    prowk = np.empty(n, p.dtype)
    for k in range(n):
        copy_row(t, k, rowk)
        copy_row(p, k, prowk)
        for i in range(n):
            aik = t[i, k]
            for j in range(n):
                x = narrow(aik + rowk[j], t)
                if clamp:
                    x = x if x > lo else lo
                if x < t[i, j]:
                    t[i, j] = x
                    p[i, j] = prowk[j]


# --------------------------------------------------------------------------- tiled layout
@njit(cache=True, parallel=PRANGE_ONLY)
def unpack(t, d):
    """Write the tiles back into the n x n matrix ``d``."""
    n = d.shape[0]
    nb = t.shape[0]
    bs = t.shape[2]
    for i in prange(n):
        ib = i // bs
        ii = i - ib * bs
        for jb in range(nb):
            j0 = jb * bs
            w = min(bs, n - j0)
            for jj in range(w):
                d[i, j0 + jj] = t[ib, jb, ii, jj]


# --------------------------------------------------------------------------- blocked rounds
@njit(cache=True)
def panels(t, r):
    """Contiguous copies of the pivot row tiles ``t[r, :]`` and pivot column tiles ``t[:, r]``."""
    nb, _, bs, _ = t.shape
    rowp = np.empty((nb, bs, bs), t.dtype)
    colp = np.empty((nb, bs, bs), t.dtype)
    for b in range(nb):
        for i in range(bs):
            for j in range(bs):
                rowp[b, i, j] = t[r, b, i, j]
                colp[b, i, j] = t[b, r, i, j]
    return rowp, colp


# The three phases of a round are separate kernels: the blocked schedule (floydwarp.schedule)
# calls them in turn, so it can time them and checkpoint between rounds.
@njit(cache=True)
def close_pivot(t, r, clamp, lo):
    """Phase 1: close the pivot tile ``t[r, r]``."""
    fw_tile(t[r, r], clamp, lo)


@njit(cache=True)
def close_pivot_pred(t, p, r, clamp, lo):
    fw_tile_pred(t[r, r], p[r, r], clamp, lo)


@njit(cache=True, parallel=PRANGE_ONLY)
def update_panels(t, r, clamp, lo):
    """Phase 2: pivot row tiles become piv* (x) x, pivot column tiles x (x) piv*."""
    nb = t.shape[0]
    piv = copy_of(t[r, r])
    for s in prange(2 * nb):
        if s < nb:
            if s != r:
                x = t[r, s]
                old = copy_of(x)
                minplus(x, piv, old)
                if clamp:
                    clamp_below(x, lo)
        else:
            ib = s - nb
            if ib != r:
                x = t[ib, r]
                old = copy_of(x)
                minplus(x, old, piv)
                if clamp:
                    clamp_below(x, lo)


@njit(cache=True, parallel=PRANGE_ONLY)
def update_panels_pred(t, p, r, clamp, lo):
    nb = t.shape[0]
    piv = copy_of(t[r, r])
    ppiv = copy_of(p[r, r])
    for s in prange(2 * nb):
        if s < nb:
            if s != r:
                x = t[r, s]
                old = copy_of(x)
                pold = copy_of(p[r, s])
                minplus_pred(x, p[r, s], piv, old, pold)
                if clamp:
                    clamp_below(x, lo)
        else:
            ib = s - nb
            if ib != r:
                x = t[ib, r]
                old = copy_of(x)
                minplus_pred(x, p[ib, r], old, piv, ppiv)
                if clamp:
                    clamp_below(x, lo)


@njit(cache=True, parallel=PRANGE_ONLY)
def product(t, r, clamp, lo):
    """Phase 3: every other tile, from contiguous copies of the two panels."""
    nb = t.shape[0]
    rowp, colp = panels(t, r)
    for s in prange(nb * nb):
        ib = s // nb
        jb = s - ib * nb
        if ib != r and jb != r:
            x = t[ib, jb]
            minplus(x, colp[ib], rowp[jb])
            if clamp:
                clamp_below(x, lo)


@njit(cache=True, parallel=PRANGE_ONLY)
def product_pred(t, p, r, clamp, lo):
    nb = t.shape[0]
    rowp, colp = panels(t, r)
    prow, _ = panels(p, r)
    for s in prange(nb * nb):
        ib = s // nb
        jb = s - ib * nb
        if ib != r and jb != r:
            x = t[ib, jb]
            minplus_pred(x, p[ib, jb], colp[ib], rowp[jb], prow[jb])
            if clamp:
                clamp_below(x, lo)


# --------------------------------------------------------------------------- rows and serial
@njit(inline="always")
def relax_row(d, i, rowk, k, clamp, lo):
    """``d[i, j] = min(d[i, j], d[i, k] + rowk[j])`` for every j (rowk: a copy of row k)."""
    dik = d[i, k]
    for j in range(d.shape[1]):
        x = narrow(dik + rowk[j], d)
        if clamp:
            x = x if x > lo else lo
        v = d[i, j]
        d[i, j] = x if x < v else v


@njit(inline="always")
def relax_row_pred(d, p, i, rowk, prowk, k, clamp, lo):
    """:func:`relax_row` with predecessors: a win sets ``p[i, j] = prowk[j]``."""
    dik = d[i, k]
    for j in range(d.shape[1]):
        x = narrow(dik + rowk[j], d)
        if clamp:
            x = x if x > lo else lo
        if x < d[i, j]:
            d[i, j] = x
            p[i, j] = prowk[j]


@njit(cache=True, parallel=PRANGE_ONLY)
def rows_steps(d, k0, k1, clamp, lo):
    """Steps k0..k1-1 of Floyd-Warshall: per k, row k copied to a buffer, rows i in parallel."""
    n = d.shape[0]
    rowk = np.empty(n, d.dtype)
    for k in range(k0, k1):
        copy_row(d, k, rowk)
        for i in prange(n):
            relax_row(d, i, rowk, k, clamp, lo)


@njit(cache=True, parallel=PRANGE_ONLY)
def rows_steps_pred(d, p, k0, k1, clamp, lo):
    n = d.shape[0]
    rowk = np.empty(n, d.dtype)
    prowk = np.empty(n, p.dtype)
    for k in range(k0, k1):
        copy_row(d, k, rowk)
        copy_row(p, k, prowk)
        for i in prange(n):
            relax_row_pred(d, p, i, rowk, prowk, k, clamp, lo)


@njit(cache=True)
def serial_steps(d, k0, k1, clamp, lo):
    """Steps k0..k1-1 of the textbook triple loop, in place, one thread."""
    n = d.shape[0]
    for k in range(k0, k1):
        for i in range(n):
            dik = d[i, k]
            for j in range(n):
                x = narrow(dik + d[k, j], d)
                if clamp:
                    x = x if x > lo else lo
                v = d[i, j]
                d[i, j] = x if x < v else v


@njit(cache=True)
def serial_steps_pred(d, p, k0, k1, clamp, lo):
    n = d.shape[0]
    for k in range(k0, k1):
        for i in range(n):
            dik = d[i, k]
            for j in range(n):
                x = narrow(dik + d[k, j], d)
                if clamp:
                    x = x if x > lo else lo
                if x < d[i, j]:
                    d[i, j] = x
                    p[i, j] = p[k, j]


# --------------------------------------------------------------------------- predecessor check
@njit(cache=True, parallel=PRANGE_ONLY)
def pred_rows_with_cycles(p, first=0):
    """Rows i whose predecessors do not lead every reachable j back to i.

    O(n^2): each vertex of a row is walked once.  The blocked schedule can
    close a predecessor loop around a zero-weight cycle (unlike the k-outer
    order of ``rows``/``serial``, where a strict improvement through k never
    revisits a vertex); the engine checks and falls back when this finds one.
    """
    n = p.shape[1]
    bad = np.zeros(p.shape[0], np.bool_)
    for i in prange(p.shape[0]):
        src = first + i
        mark = np.zeros(n, np.int32)          # 0 unseen, -1 leads to i, w > 0 on walk w
        for j in range(n):
            if j == src or p[i, j] < 0 or mark[j] == -1:
                continue
            walk_id = j + 1
            v = j
            ok = True
            while v != src and mark[v] != -1:
                if mark[v] == walk_id:
                    ok = False
                    break
                mark[v] = walk_id
                v = p[i, v]
                if v < 0:
                    ok = False
                    break
            if not ok:
                bad[i] = True
                break
            v = j
            while v != src and mark[v] == walk_id:
                mark[v] = -1
                v = p[i, v]
    return bad
