"""Numba kernels of the ``cpu`` backend's blocked schedule: min-plus tile products, the phases
of a round, the tiled layout (the per-k loops are cpu/steps.py's).

Everything here and there works on host NumPy arrays and follows numeric.py's rules:

* integer sums are computed in the matrix dtype (``jit.narrow``): INF = max // 2
  makes every sum of two entries representable, and keeping the add in the
  narrow type is what lets LLVM use 16 (int16) or 8 (int32) lanes per vector;
* a candidate replaces an entry only when ``cand < d`` (``jit.select_min``, Python's
  ``min(d, x)`` as ``x if x < d else d``: one select, one ``vpmins*`` / ``vminp*``),
  so NaN from ``inf + -inf`` never wins.  Without
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
from numba import njit

from ..jit import narrow, select_max, select_min
from .crew import first_job, next_job
from .steps import fw_steps_pred_with, fw_steps_with


# --------------------------------------------------------------------------- helpers
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


@njit(cache=True, inline="always")
def clamp_below(c, lo):
    """``c = max(c, lo)`` on a 2-D array.  Inlined into its callers' Numba IR: compiled as
    a function of its own it took ~90 ms of the phase 2-3 kernel's cold compile, which the
    compile helper (cpu/ahead.py) runs on the first run's longest path."""
    m, w = c.shape
    for i in range(m):
        for j in range(w):
            c[i, j] = select_max(lo, c[i, j])


# --------------------------------------------------------------------------- min-plus tile kernels
@njit(cache=True)
def minplus(c, a, b):
    """``c[i, j] = min(c[i, j], min_k a[i, k] + b[k, j])``; c, a, b do not overlap.

    Candidates are taken in increasing k with a strict ``<``: ``select_min(d, x)`` is
    ``x if x < d else d``, one select (few IR blocks: cheap to compile), and NaN never
    wins.  No clamp here (see the module docstring).
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
                c0 = select_min(c0, narrow(a00 + b0, c))
                c1 = select_min(c1, narrow(a10 + b0, c))
                c2 = select_min(c2, narrow(a20 + b0, c))
                c3 = select_min(c3, narrow(a30 + b0, c))
                c0 = select_min(c0, narrow(a01 + b1, c))
                c1 = select_min(c1, narrow(a11 + b1, c))
                c2 = select_min(c2, narrow(a21 + b1, c))
                c3 = select_min(c3, narrow(a31 + b1, c))
                c0 = select_min(c0, narrow(a02 + b2, c))
                c1 = select_min(c1, narrow(a12 + b2, c))
                c2 = select_min(c2, narrow(a22 + b2, c))
                c3 = select_min(c3, narrow(a32 + b2, c))
                c0 = select_min(c0, narrow(a03 + b3, c))
                c1 = select_min(c1, narrow(a13 + b3, c))
                c2 = select_min(c2, narrow(a23 + b3, c))
                c3 = select_min(c3, narrow(a33 + b3, c))
                c[i, j] = c0; c[i + 1, j] = c1; c[i + 2, j] = c2; c[i + 3, j] = c3
    # the k steps left after the 4-k blocks (rows 0 .. m4 - 1) and the rows left after the 4-row
    # blocks (every k), one row at a time: one loop nest for both keeps minplus' compile short
    for i in range(m):
        for k in range(k4 if i < m4 else 0, kk):
            aik = a[i, k]
            for j in range(w):
                c[i, j] = select_min(c[i, j], narrow(aik + b[k, j], c))


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
    # as in minplus: the k steps left after the 4-k blocks and the rows left after the 2-row
    # blocks in one loop nest, one row at a time
    for i in range(m):
        for k in range(k4 if i < m2 else 0, kk):
            aik = a[i, k]
            for j in range(w):
                x = narrow(aik + b[k, j], c)
                if x < c[i, j]:
                    c[i, j] = x; pc[i, j] = pb[k, j]



# --------------------------------------------------------------------------- tiled layout
# The passes over many tiles or rows are serial kernels over tasks ``first .. stop - 1``
# that team.py spreads over the cores (nogil: the shares run at once).
@njit(cache=True, nogil=True)
def unpack_rows(t, d, first, stop):
    """Rows ``first .. stop - 1`` of the n x n matrix ``d`` from the tiles."""
    n = d.shape[0]
    nb = t.shape[0]
    bs = t.shape[2]
    for i in range(first, stop):
        ib = i // bs
        ii = i - ib * bs
        for jb in range(nb):
            j0 = jb * bs
            w = select_min(bs, n - j0)
            for jj in range(w):
                d[i, j0 + jj] = t[ib, jb, ii, jj]


# --------------------------------------------------------------------------- blocked rounds
@njit(cache=True)
def copy_tile(src, dst):
    """``dst[:, :] = src`` by explicit loops (see :func:`copy_of`)."""
    for i in range(src.shape[0]):
        for j in range(src.shape[1]):
            dst[i, j] = src[i, j]


# The three phases of a round are separate calls: the blocked schedule (floydwarp.schedule)
# calls them in turn, so it can time them and checkpoint between rounds.
@njit(cache=True)
def close_pivot(t, r, clamp, lo, rowk):
    """Phase 1: close the pivot tile ``t[r, r]`` (``rowk``: a buffer of a tile row).  Returns
    whether the tile's diagonal went negative (final for a single tile).  The engine copies
    the closed tile into the panel copies that phases 2 and 3 read, with NumPy (~2 us a
    round): copied here, the copies took ~0.12 s of this kernel's cold compile (0.49 -> 0.36
    s), on the first run's longest path (bench/NOTES_cpu.md)."""
    fw_steps_with(t[r, r], 0, t.shape[2], clamp, lo, rowk)
    return negative_diagonal(t[r, r])


@njit(cache=True)
def close_pivot_pred(t, p, r, clamp, lo, rowk, prowk):
    """:func:`close_pivot` with predecessors."""
    fw_steps_pred_with(t[r, r], p[r, r], 0, t.shape[2], clamp, lo, rowk, prowk)
    return negative_diagonal(t[r, r])


@njit(inline="always")
def negative_diagonal(tile):
    for i in range(tile.shape[0]):
        if tile[i, i] < 0:
            return True
    return False


@njit(inline="always")
def round_tile(nb, r, panel, s):
    """Tile ``(I, J)`` of task ``s`` of a round's phase 2 (``panel``: the pivot row tiles
    ``(r, 0..nb-1)``, then the pivot column tiles ``(0..nb-1, r)``) or phase 3 (every tile
    ``(s // nb, s % nb)``), and whether the phase leaves it alone (the pivot tile; the
    pivot row and column in phase 3)."""
    if panel:
        side = s // nb                    # 0: pivot row, 1: pivot column
        other = s - side * nb
        return r + side * (other - r), other + side * (r - other), other == r
    ib = s // nb
    jb = s - ib * nb
    return ib, jb, ib == r or jb == r


@njit(inline="always")
def share_of(tasks, me, count):
    """Tasks ``first, stop`` of thread ``me`` of ``count``: contiguous equal shares (the
    static schedule ``prange`` used)."""
    return tasks * me // count, tasks * (me + 1) // count


@njit(cache=True, nogil=True)
def update_tiles(t, clamp, lo, rowp, colp, crew, me, count, r, panel):
    """Phases 2 and 3, one kernel, on a crew of ``count`` threads (cpu/crew.py): thread
    ``me`` does its share of each job; the leader (0) posts job ``(r, panel)`` and returns
    when the crew has done it, a worker does jobs until the crew stops.

    Every tile ``(I, J)`` of the job (:func:`round_tile`) becomes ``min(t[I, J], colp[I]
    (x) rowp[J])``, where ``rowp`` and ``colp`` hold copies of the pivot row and column
    tiles.  Phase 2 is that product too, with ``colp[r] = rowp[r] = P*`` (the pivot tile
    after phase 1, copied there by the engine): a pivot row tile becomes ``P* (x) old`` and a pivot
    column tile ``old (x) P*``.  Each phase-2 task copies its tile's old value into its
    panel slot first and its new value after, so the panels are ready for phase 3 with
    no copy between the phases."""
    nb = t.shape[0]
    job = first_job(crew, me, count, r, panel)
    while job >= 0:
        r, panel = crew[1], crew[2] != 0
        first, stop = share_of(2 * nb if panel else nb * nb, me, count)
        for s in range(first, stop):
            ib, jb, skip = round_tile(nb, r, panel, s)
            if skip:
                continue
            x = t[ib, jb]
            if panel:
                slot = rowp[jb] if ib == r else colp[ib]
                copy_tile(x, slot)
            minplus(x, colp[ib], rowp[jb])
            if clamp:
                clamp_below(x, lo)
            if panel:
                copy_tile(x, slot)
        job = next_job(crew, me, count, job)


@njit(cache=True, nogil=True)
def update_tiles_pred(t, p, clamp, lo, rowp, colp, prow, crew, me, count, r, panel):
    """:func:`update_tiles` with predecessors: ``prow`` holds copies of the pivot row's
    predecessor tiles (a win through ``k`` takes ``p[k, j]``, which lies in row panel J;
    phase 2 keeps it up to date as it does ``rowp``)."""
    nb = t.shape[0]
    job = first_job(crew, me, count, r, panel)
    while job >= 0:
        r, panel = crew[1], crew[2] != 0
        first, stop = share_of(2 * nb if panel else nb * nb, me, count)
        for s in range(first, stop):
            ib, jb, skip = round_tile(nb, r, panel, s)
            if skip:
                continue
            x = t[ib, jb]
            px = p[ib, jb]
            row_tile = panel and ib == r
            if panel:
                slot = rowp[jb] if row_tile else colp[ib]
                copy_tile(x, slot)
                if row_tile:
                    copy_tile(px, prow[jb])
            minplus_pred(x, px, colp[ib], rowp[jb], prow[jb])
            if clamp:
                clamp_below(x, lo)
            if panel:
                copy_tile(x, slot)
                if row_tile:
                    copy_tile(px, prow[jb])
        job = next_job(crew, me, count, job)
