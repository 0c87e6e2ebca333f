"""Numba passes from many matrices to one batch edge list (batch/lists.py calls them).

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
from numba import carray, njit, prange, types
from numba.extending import intrinsic


@intrinsic
def _pointer(typingctx, address, like):
    """The int64 ``address`` as a pointer to entries of ``like``'s dtype."""
    if not isinstance(address, types.Integer) or not isinstance(like, types.Array):
        return None
    ptr = types.CPointer(like.dtype)
    sig = ptr(address, like)

    def codegen(context, builder, signature, args):
        return builder.inttoptr(args[0], context.get_value_type(ptr))

    return sig, codegen


@njit(inline="always")
def _matrix(addresses, rows, sizes, g, like):
    """Graph g's entries as a flat array (row i at ``i * rows[g]``)."""
    n = sizes[g]
    return carray(_pointer(addresses[g], like), (max(0, (n - 1) * rows[g] + n),))


@njit(inline="always")
def _absent(x, missing, use_missing):
    return x == np.inf or (use_missing and x == missing)


@njit(parallel=True, cache=True)
def dense_scan(addresses, rows, sizes, like, missing, use_missing, counts, bad):
    """Per graph g: ``counts[g]`` edges and ``bad[g]`` the first entry (``i * n + j``)
    holding NaN or ``-inf``, else -1.  A row is counted without a branch (the compares
    summed, which LLVM vectorizes) and searched entry by entry only when it holds a bad one;
    the weights' statistics come from the edges (GraphBatch.weight_stats), where asked for."""
    for g in prange(sizes.size):
        m = _matrix(addresses, rows, sizes, g, like)
        n, r = sizes[g], rows[g]
        edges, first = 0, -1
        for i in range(n):
            row = m[i * r:i * r + n]
            kept, wrong = 0, 0
            for j in range(n):
                x = row[j]
                absent = (x == np.inf) | (use_missing & (x == missing))
                wrong += np.int64((x != x) | (x == -np.inf))
                kept += np.int64(~absent & ((i != j) | (x < 0)))
            edges += kept
            if wrong:
                for j in range(n):
                    x = row[j]
                    if x != x or x == -np.inf:
                        first = i * n + j
                        break
                break
        counts[g], bad[g] = edges, first


@njit(parallel=True, cache=True)
def dense_edges(addresses, rows, sizes, like, missing, use_missing, eptr, src, dst, weight):
    """Graph g's edges into ``src``, ``dst`` (its own vertex ids) and ``weight`` from
    ``eptr[g]`` on, in row order (the rules and counts of :func:`dense_scan`)."""
    for g in prange(sizes.size):
        m = _matrix(addresses, rows, sizes, g, like)
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
    from 0 to its entry count, 2 entry ``where[g]``'s index is out of range 0..n - 1, else 0."""
    for g in prange(sizes.size):
        n = sizes[g]
        p = ip_at[g]
        e0 = eptr[g]
        count = eptr[g + 1] - e0
        if indptr[p] != 0 or indptr[p + n] != count:
            bad[g] = 1
            continue
        for v in range(n):
            a, b = indptr[p + v], indptr[p + v + 1]
            if b < a or b > count:
                bad[g] = 1
                break
            for k in range(a, b):
                u = indices[at[g] + k]
                if u < 0 or u >= n:
                    bad[g], where[g] = 2, k
                    break
                if by_row[g]:
                    src[e0 + k], dst[e0 + k] = v, u
                else:
                    src[e0 + k], dst[e0 + k] = u, v
            if bad[g]:
                break
