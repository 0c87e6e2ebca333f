"""Numba kernels of ``cpu/bfs``: all-pairs breadth-first search with one bit per target
(floydwarp/bfs.py says what is computed; cpu/bfs.py runs it).

The targets are cut into batches of ``BATCH_WORDS`` words (256 targets) and the batches
search in parallel (``prange``), each with its own bit sets: ``visited``, ``frontier`` and
``nxt`` (n x BATCH_WORDS words each, 256 KB at n = 8,000), so a batch's whole search runs in
its core's cache and no level waits for another thread.  A level of a batch either

* pulls: every vertex not done (not every target of the batch reached) ORs its out-neighbours'
  frontier words (BATCH_WORDS words, one vector) -- no writes but its own row; or
* pushes: every vertex of the frontier ORs its words into its in-neighbours' accumulators --
  work in proportion to the frontier's arcs,

whichever reads fewer arcs (a pushed arc counted PUSH_COST times), so a long path (a frontier
of two vertices per target) costs O(m) a target word instead of O(n m), and the wide middle
levels of a small-world graph are pulled.  New bits become ``dist[v, t] = level`` in row v's block of the batch's
columns: a select per entry over the word (vectorized), never a scatter.

Every shift and mask is uint64 (Numba types uint64 with int64 as float64), and the column
indices of the row loops are too: a signed index gets a wraparound check for negative values
that keeps LLVM from vectorizing the loop (3 ms instead of 0.4 ms for a batch at n = 2,000).
"""
from __future__ import annotations

import numpy as np
from numba import carray, njit, prange, types

from ..errors import InternalError
from ..predecessors import NO_PREDECESSOR
from ..jit import PRANGE_ONLY, array_at, narrow, pointer, step

#: words of targets a batch searches for (4 x 64 = 256 targets: one AVX-512 vector, two AVX2)
BATCH_WORDS = 4
#: a level pushes while its frontier's in-arcs, times this, are fewer than the out-arcs of the
#: vertices still searching (what a pull reads); a pushed arc costs more than a pulled one
PUSH_COST = 4
_ONE = np.uint64(1)
_ZERO = np.uint64(0)
_ALL = np.uint64(0xFFFFFFFFFFFFFFFF)


def batches(n: int) -> int:
    """Batches of targets of an n-vertex search (the parallel tasks)."""
    return -(-int(n) // (64 * BATCH_WORDS))


@njit(inline="always")
def _valid_mask(n, base):
    """The bits of a word whose targets ``base .. base + 63`` exist (< n)."""
    if base >= n:
        return _ZERO
    if n - base >= 64:
        return _ALL
    return (_ONE << np.uint64(n - base)) - _ONE


@njit(inline="always")
def _write_levels(dist, v, words, n, t0, lv):
    """``dist[v, t] = lv`` for every target t whose bit is set in ``words[v]`` (the batch's
    new bits of v).  Indices, not row views: a view costs two reference-count updates."""
    for k in range(BATCH_WORDS):
        x = words[v, k]
        if x == _ZERO:
            continue
        base = np.uint64(t0 + 64 * k)
        for j in range(min(64, n - t0 - 64 * k)):
            c = base + np.uint64(j)
            dist[v, c] = lv if (x >> np.uint64(j)) & _ONE else dist[v, c]


@njit(cache=True)
def _settle(v, acc, a, visited, nxt, valid, done, dist, n, t0, lv):
    """(A call, not inlined: the search's two copies cost 5 s of compile a dtype and no speed.)
    The new bits of vertex v (``acc[a]`` AND NOT visited) into ``nxt[v]`` and
    ``visited[v]``, written into its row as ``lv``: 0 when there were none, 1 when there were,
    2 when v has now reached every target of the batch (it is done)."""
    found = _ZERO
    full = True
    for k in range(BATCH_WORDS):
        x = acc[a, k] & ~visited[v, k]
        nxt[v, k] = x
        found |= x
        seen = visited[v, k] | x
        visited[v, k] = seen
        full = full and seen == valid[k]
    if found == _ZERO:
        return 0
    done[v] = full
    _write_levels(dist, v, nxt, n, t0, lv)
    return 2 if full else 1


@njit(inline="always")
def _search(b, out_ptr, out_idx, in_ptr, in_idx, dist, inf):
    """Batch ``b``'s search: fills its columns of ``dist`` (INF where unreached); returns the
    largest level reached, or -1 when a distance reached ``inf`` (the dtype is too narrow)."""
    n = dist.shape[0]
    t0 = b * 64 * BATCH_WORDS
    t1 = min(n, t0 + 64 * BATCH_WORDS)
    big = narrow(inf, dist)
    for v in range(n):
        for t in range(t1 - t0):
            dist[v, np.uint64(t0 + t)] = big
    valid = np.empty(BATCH_WORDS, np.uint64)
    for k in range(BATCH_WORDS):
        valid[k] = _valid_mask(n, t0 + 64 * k)
    visited = np.zeros((n, BATCH_WORDS), np.uint64)
    frontier = np.zeros((n, BATCH_WORDS), np.uint64)
    nxt = np.zeros((n, BATCH_WORDS), np.uint64)
    acc = np.zeros((n, BATCH_WORDS), np.uint64)       # push: what in-neighbours sent
    done = np.zeros(n, np.bool_)
    touched = np.zeros(n, np.bool_)
    members = np.empty(n, np.int64)                    # the frontier's vertices
    found = np.empty(n, np.int64)                      # the next frontier's
    reached = np.empty(n, np.int64)                    # push: vertices sent to
    for t in range(t0, t1):
        bit = _ONE << np.uint64((t - t0) & 63)
        visited[t, (t - t0) >> 6] = bit
        frontier[t, (t - t0) >> 6] = bit
        dist[t, t] = 0
        members[t - t0] = t
    size = t1 - t0
    pushed = 0                                         # in-arcs of the frontier
    for t in range(t0, t1):
        pushed += in_ptr[t + 1] - in_ptr[t]
    pulled = out_ptr[n]                                # out-arcs of the vertices not done
    level = 0
    scratch = np.zeros((1, BATCH_WORDS), np.uint64)
    while size > 0:
        level += 1
        count = 0
        ahead = 0
        lv = narrow(level if level < inf else 0, dist)
        if pushed * PUSH_COST > pulled:
            for v in range(n):
                if done[v]:
                    continue
                for k in range(BATCH_WORDS):
                    scratch[0, k] = _ZERO
                for e in range(out_ptr[v], out_ptr[v + 1]):
                    u = out_idx[e]
                    for k in range(BATCH_WORDS):
                        scratch[0, k] |= frontier[u, k]
                got = _settle(v, scratch, 0, visited, nxt, valid, done, dist, n, t0, lv)
                if got:
                    found[count] = v
                    count += 1
                    ahead += in_ptr[v + 1] - in_ptr[v]
                    if got == 2:
                        pulled -= out_ptr[v + 1] - out_ptr[v]
        else:
            sent = 0
            for i in range(size):
                u = members[i]
                for e in range(in_ptr[u], in_ptr[u + 1]):
                    v = in_idx[e]
                    if done[v]:
                        continue
                    if not touched[v]:
                        touched[v] = True
                        reached[sent] = v
                        sent += 1
                    for k in range(BATCH_WORDS):
                        acc[v, k] |= frontier[u, k]
            for i in range(sent):
                v = reached[i]
                touched[v] = False
                got = _settle(v, acc, v, visited, nxt, valid, done, dist, n, t0, lv)
                if got:
                    found[count] = v
                    count += 1
                    ahead += in_ptr[v + 1] - in_ptr[v]
                    if got == 2:
                        pulled -= out_ptr[v + 1] - out_ptr[v]
                for k in range(BATCH_WORDS):
                    acc[v, k] = _ZERO
        if count and level >= inf:
            return -1
        for i in range(size):
            u = members[i]
            for k in range(BATCH_WORDS):
                frontier[u, k] = _ZERO
        frontier, nxt = nxt, frontier
        members, found = found, members
        size = count
        pushed = ahead
    return level - 1


def hop_distances(out_ptr, out_idx, in_ptr, in_idx, dist, inf) -> int:
    """All-pairs hop counts into ``dist`` (n x n, C-ordered, any integer dtype, every entry
    written): INF where unreached.  Returns the largest distance found, or -1 when some
    distance reached ``inf`` (``dist`` is then incomplete: a wider dtype must run).  Each batch
    of targets is searched by a C function pointer made for ``dist``'s dtype (jit.step), so
    the parallel loop is compiled once for every dtype (the search once for each: it took
    17-40 s a dtype on the 2-core box, linked into the loop's every version)."""
    if not dist.flags.c_contiguous:
        raise InternalError("hop_distances writes a C-ordered matrix in place")
    search = step(_search_of, (dist.dtype,), types.int64(*[types.int64] * 8))
    return int(_searches(search, out_ptr, out_idx, in_ptr, in_idx, dist.ctypes.data, dist.shape[0], inf))


def _search_of(dt):
    like, offsets, ids = np.empty(0, dt), np.empty(0, np.int64), np.empty(0, np.int32)

    def search(b, out_ptr_at, out_idx_at, in_ptr_at, in_idx_at, dist_at, n, inf):
        out_ptr, in_ptr = array_at(out_ptr_at, n + 1, offsets), array_at(in_ptr_at, n + 1, offsets)
        out_idx, in_idx = array_at(out_idx_at, out_ptr[n], ids), array_at(in_idx_at, in_ptr[n], ids)
        return _search(b, out_ptr, out_idx, in_ptr, in_idx, carray(pointer(dist_at, like), (n, n)), inf)

    return search


@njit(cache=True, parallel=PRANGE_ONLY)
def _searches(search, out_ptr, out_idx, in_ptr, in_idx, dist, n, inf):
    """hop_distances' batches in parallel (``dist``: the matrix's address)."""
    tasks = -(-n // (64 * BATCH_WORDS))
    deepest = np.zeros(max(tasks, 1), np.int64)
    at = (np.int64(out_ptr.ctypes.data), np.int64(out_idx.ctypes.data), np.int64(in_ptr.ctypes.data),
          np.int64(in_idx.ctypes.data))
    for b in prange(tasks):
        deepest[b] = search(np.int64(b), at[0], at[1], at[2], at[3], dist, n, inf)
    most = 0
    for b in range(tasks):
        if deepest[b] < 0:
            return -1
        most = max(most, deepest[b])
    return most


@njit(cache=True, parallel=PRANGE_ONLY)
def hop_predecessors(dist, in_ptr, in_idx, inf, pred):
    """``pred[i, j]``: the smallest in-neighbour x of j with ``dist[i, x] == dist[i, j] - 1``
    (NO_PREDECESSOR on the diagonal and for unreached pairs), rows in parallel."""
    n = dist.shape[0]
    for i in prange(n):
        row = dist[i]
        for j in range(n):
            p = NO_PREDECESSOR
            d = np.int64(row[j])
            if j != i and d < inf:
                for e in range(in_ptr[j], in_ptr[j + 1]):
                    x = in_idx[e]
                    if np.int64(row[x]) == d - 1:
                        p = x
                        break
            pred[i, j] = p
    return pred
