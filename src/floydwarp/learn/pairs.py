"""The pairs layout of the PyG transform (floydwarp.pyg): every graph's n x n block of a
padded batch, row by row, graph after graph, gathered by one parallel Numba pass into the
new arrays (NumPy's boolean mask and nonzero made three more arrays of the pairs' size,
each a fresh allocation, most of the transform's time)."""
from __future__ import annotations

from numba import njit, prange


@njit(parallel=True, cache=True)
def gather(padded, sizes, ptr, start, values, index, marking, inf, mark):
    """``values[start[g] + i * n + j] = padded[g, i, j]`` (trailing axes kept: ``padded`` is
    (B, N, N, K), ``values`` (P, K)), converted to ``values``' dtype, and with ``marking``
    ``mark`` where it reaches ``inf`` (the INF marker); where ``index`` is not empty,
    ``index[:, p]`` the pair's node indices ``(ptr[g] + i, ptr[g] + j)``."""
    with_index = index.size > 0
    for g in prange(sizes.size):
        n = sizes[g]
        base = start[g]
        for i in range(n):
            for j in range(n):
                p = base + i * n + j
                for k in range(values.shape[1]):
                    v = padded[g, i, j, k]
                    values[p, k] = mark if marking and v >= inf else v
                if with_index:
                    index[0, p] = ptr[g] + i
                    index[1, p] = ptr[g] + j
