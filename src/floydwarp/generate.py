"""Random graphs: Erdős–Rényi as seeds 000 and 004 generate them.

Deterministic for a seed on every platform (NumPy's PCG64 stream, drawn in
fixed-size row chunks so memory never changes the sequence) and vectorized,
so n = 30,000 at a few percent takes seconds.
"""
from __future__ import annotations

import numpy as np

from .errors import FloydwarpError
from .graph import Graph, check_vertex_count

_ROWS_PER_CHUNK = 1024


def erdos_renyi(n: int, percent: float = 25.0, *, seed: int = 0, weights=(1, 16),
                potential: int = 0, directed: bool = True, real: bool = False) -> Graph:
    """A random graph: each ordered pair (i != j) is an edge with probability ``percent / 100``.

    Parameters
    ----------
    n : int
        Number of vertices.
    percent : float
        Edge percentage 0..100 (seed 000's ``-p``; seed 004's density).
    seed : int
        Generator seed (seed 000's ``-s``).
    weights : (int, int)
        Inclusive range of integer weights, 1..16 by default (seed 000).  A
        negative lower bound gives negative weights and, in dense graphs,
        almost surely negative cycles.
    potential : int
        If positive, each vertex draws ``h(v)`` in ``0..potential`` and each
        edge weight becomes ``w + h(u) - h(v)``: negative weights with no
        negative cycle (every cycle keeps its length).
    directed : bool
        False mirrors every edge (i, j) to (j, i) with the same weight.
    real : bool
        True draws the weights uniformly from ``[lo, hi)`` as float64 instead of
        integers (fractional weights: no integer arithmetic for float runs).

    Examples
    --------
    >>> g = erdos_renyi(1000, 5, seed=42)
    >>> g.n, g.num_edges
    (1000, 49742)
    """
    n = check_vertex_count(int(n))
    if n < 0:
        raise FloydwarpError(f"n must be >= 0, got {n}")
    if not 0 <= percent <= 100:
        raise FloydwarpError(f"percent must be between 0 and 100, got {percent}")
    lo, hi = (int(w) for w in weights)
    if lo > hi:
        raise FloydwarpError(f"weight range {lo}..{hi} is empty")
    rng = np.random.Generator(np.random.PCG64(seed))
    p = percent / 100.0
    srcs, dsts, ws = [], [], []
    for start in range(0, n, _ROWS_PER_CHUNK):
        rows = min(_ROWS_PER_CHUNK, n - start)
        hit = rng.random((rows, n)) < p
        w = rng.uniform(lo, hi, size=(rows, n)) if real else rng.integers(lo, hi + 1, size=(rows, n), dtype=np.int64)
        r = np.arange(rows)
        hit[r, start + r] = False                   # no self-loops
        if not directed:
            hit[np.arange(start, start + rows)[:, None] <= np.arange(n)[None, :]] = False
        i, j = np.nonzero(hit)
        srcs.append((i + start).astype(np.int64)); dsts.append(j.astype(np.int64)); ws.append(w[i, j])
    src = np.concatenate(srcs) if srcs else np.zeros(0, np.int64)
    dst = np.concatenate(dsts) if dsts else np.zeros(0, np.int64)
    w = np.concatenate(ws) if ws else np.zeros(0, np.float64 if real else np.int64)
    if not directed:
        src, dst, w = np.concatenate([src, dst]), np.concatenate([dst, src]), np.concatenate([w, w])
    if potential > 0:
        h = rng.integers(0, int(potential) + 1, size=n, dtype=np.int64)
        w = w + h[src] - h[dst]
    # The pairs are distinct and off the diagonal by construction: no dedupe pass needed.
    return Graph(n, edges=(src, dst, w))
