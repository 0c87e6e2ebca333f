"""Random batches of small graphs shaped like molecules, in the PyTorch Geometric layout.

Each graph has ``n`` vertices (uniform in ``sizes``), a random spanning tree (a molecule's
bonds connect it) plus ``rings * n`` extra edges (ring closures), every edge stored in both
directions as PyG stores undirected graphs: about 2.2 directed edges per vertex.  Vectorized
over the whole batch and deterministic for a seed, so 10^6 graphs take seconds.
"""
from __future__ import annotations

import numpy as np

from ..errors import FloydwarpError


def molecules(count: int, *, sizes=(10, 60), rings: float = 0.1, seed: int = 0):
    """``(edge_index (2, E) int64, ptr (count + 1,) int64)`` of ``count`` random molecule-like graphs."""
    lo, hi = int(sizes[0]), int(sizes[1])
    if count < 0 or lo < 1 or hi < lo:
        raise FloydwarpError(f"need count >= 0 and 1 <= sizes[0] <= sizes[1]; got {count} and {sizes}")
    rng = np.random.default_rng(seed)
    n = rng.integers(lo, hi + 1, size=count)
    ptr = np.zeros(count + 1, dtype=np.int64)
    np.cumsum(n, out=ptr[1:])
    total = int(ptr[-1])
    graph = np.repeat(np.arange(count), n)
    local = np.arange(total) - ptr[graph]
    # tree: vertex v > 0 of each graph bonds to a uniformly random earlier vertex
    child = np.flatnonzero(local > 0)
    parent = ptr[graph[child]] + (rng.random(child.size) * local[child]).astype(np.int64)
    # ring closures: random pairs within a graph (self-pairs dropped)
    extra = rng.binomial(n, rings)
    owner = np.repeat(np.arange(count), extra)
    a = ptr[owner] + (rng.random(owner.size) * n[owner]).astype(np.int64)
    b = ptr[owner] + (rng.random(owner.size) * n[owner]).astype(np.int64)
    keep = a != b
    u = np.concatenate([child, a[keep]])
    v = np.concatenate([parent, b[keep]])
    src = np.concatenate([u, v])
    dst = np.concatenate([v, u])
    order = np.argsort(src, kind="stable")          # PyG keeps a graph's edges together
    return np.stack([src[order], dst[order]]), ptr
