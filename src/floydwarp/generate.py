"""Random graphs: Erdős–Rényi as seeds 000 and 004 generate them.

In time proportional to the edges (geometric gaps between them, weights drawn for
the edges only), on every core, and the same graph for a seed on every machine:
n = 110,000 at 5 % (6e8 edges) takes seconds, not minutes.
"""
from __future__ import annotations

import math

import numpy as np

from .errors import FloydwarpError
from .team import usable_cores
from .draws import PER_PAIR_FROM, ROWS_PER_BLOCK, block_streams, potentials
from .graph import Graph, check_vertex_count
from .numeric import WeightStats

#: gaps (pairs, weights) drawn per step: a few hundred KiB of temporaries, in cache
_GAPS_PER_STEP = 1 << 16


def erdos_renyi(n: int, percent: float = 25.0, *, seed: int = 0, weights=(1, 16),
                potential: int = 0, directed: bool = True, real: bool = False, device: bool = False) -> Graph:
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
        edge weight becomes ``w + h(u) - h(v)``: every cycle keeps its length, so
        with non-negative ``weights`` there are negative weights and no negative cycle.
    directed : bool
        False draws each unordered pair (i < j) once, with probability
        ``percent / 100``, and mirrors it to (j, i) with the same drawn weight
        (``potential`` then shifts the two directions apart: ``w + h(i) - h(j)``
        and ``w + h(j) - h(i)``).
    real : bool
        True draws the weights uniformly from ``[lo, hi)`` as float64 instead of
        integers (fractional weights: no integer arithmetic for float runs).
    device : bool
        True draws the graph on the GPU (CuPy; gpu/generate.py): the same graph, in
        milliseconds, whose edges stay in GPU memory, where a ``backend="gpu"`` solve
        builds its start matrix from them (they come to the host only when asked for).
        Integer weights whose range ``hi - lo`` is below 2**32 - 1.

    Notes
    -----
    The work is proportional to the edges, not to the n^2 pairs.  The candidate
    pairs of each block of 1024 rows are numbered row by row (i != j; i < j when
    undirected), and the edges among them are the hits of Bernoulli(p) trials,
    drawn one of three ways by density:

    * p < 40 %: geometric gaps from one edge to the next,
      ``1 + floor(log1p(-u) / log1p(-p))`` for a uniform ``u`` in [0, 1): one number,
      a ``log1p`` and a running sum per *edge*;
    * 40 % <= p < 100 %: one uniform ``u`` per *pair*, an edge where ``u < p``:
      cheaper than a gap per edge once edges are that common (measured on the
      2-core box: a gap ~10.5 ns an edge, a pair ~2.7 + 3.6 p ns);
    * p = 100 %: every pair, nothing drawn.

    Both make every pair an edge with probability p, independently, at the 2**-53
    resolution of NumPy's PCG64 ``random()``.  Each block draws from its own streams
    (``SeedSequence(seed)`` spawned per block: the edges' places, their weights; one
    more for ``potential``), so blocks are drawn on all cores at once and the graph
    depends on (n, percent, seed, options) alone, not on cores or memory.  ``log1p``
    is the one floating-point function involved: a platform whose ``log1p`` differs
    in the last bit can move an edge only where a gap lands within rounding of an
    integer (odds about 1e-14 an edge).  Cost: bench/results/generate-2core.json.

    The edges are int64, the weights int64 (float64 when ``real``), as
    ``Graph.from_edges`` gives them; sorted by (source, target) when ``directed``.

    Examples
    --------
    >>> g = erdos_renyi(1000, 5, seed=42)
    >>> g.n, g.num_edges
    (1000, 50067)
    """
    n = check_vertex_count(int(n))
    if n < 0:
        raise FloydwarpError(f"n must be >= 0, got {n}")
    if not 0 <= percent <= 100:
        raise FloydwarpError(f"percent must be between 0 and 100, got {percent}")
    lo, hi = (int(w) for w in weights)
    if lo > hi:
        raise FloydwarpError(f"weight range {lo}..{hi} is empty")
    if device:
        from .gpu.generate import erdos_renyi as on_device

        return on_device(n, percent, seed, (lo, hi), int(potential), directed, real)
    p = percent / 100.0
    potential_stream, streams = block_streams(n, seed)
    blocks = [_Block(start, min(ROWS_PER_BLOCK, n - start), n, directed, place, weight)
              for start, (place, weight) in zip(range(0, n, ROWS_PER_BLOCK), streams)]
    with _Pool(len(blocks)) as pool:
        pool.map(lambda b: b.draw_edges(p), blocks)
        m = sum(b.edges for b in blocks)
        total = m if directed else 2 * m
        src, dst = np.empty(total, np.int64), np.empty(total, np.int64)
        w = np.empty(total, np.float64 if real else np.int64)
        h = potentials(potential_stream, potential, n) if potential > 0 else None
        first = np.cumsum([0] + [b.edges for b in blocks])
        stats = pool.map(lambda bf: bf[0].fill(src, dst, w, bf[1], m, lo, hi, real, h), zip(blocks, first))
    return Graph.from_edges(src, dst, w, n=n, stats=_joined_stats(n, stats), sorted=directed)


class _Block:
    """One block of rows: its candidate pairs numbered row by row, its two streams (the
    edges' places, their weights), and the targets of its edges once drawn."""

    def __init__(self, start, rows, n, directed, place_stream, weight_stream):
        self.start, self.rows, self.n, self.directed = start, rows, n, directed
        self.place_stream, self.weight_stream = place_stream, weight_stream
        per_row = np.full(rows, n - 1, np.int64) if directed else n - 1 - np.arange(start, start + rows, dtype=np.int64)
        self.offsets = np.concatenate([[0], np.cumsum(per_row)])     # row r's pairs: offsets[r] ..
        self.counts = np.zeros(rows, np.int64)                        # edges per row
        self.targets = np.zeros(0, np.int32)
        self.edges = 0

    def draw_edges(self, p):
        """Draw which pairs are edges: per row the count, and the targets in order."""
        cells = int(self.offsets[-1])
        if cells == 0 or p <= 0:
            return
        expected = cells * p
        self.targets = np.empty(int(expected + 6 * math.sqrt(expected) + 64), np.int32)
        for q in _places(np.random.Generator(np.random.PCG64(self.place_stream)), cells, p):
            self._add(q)

    def _add(self, q):
        """Append the edges at the sorted pair numbers ``q``."""
        per_row = np.diff(np.searchsorted(q, self.offsets))
        row = np.repeat(np.arange(self.rows, dtype=np.int64), per_row)
        col = q - self.offsets[row]                      # the k-th candidate of its row
        row += self.start
        if self.directed:
            col += col >= row                            # skip the diagonal
        else:
            col += row + 1                               # the pairs above it
        end = self.edges + col.size
        if end > self.targets.size:                      # past 6 sigma: rare
            self.targets = np.concatenate([self.targets, np.empty(max(col.size, self.targets.size), np.int32)])
        self.targets[self.edges:end] = col
        self.counts += per_row
        self.edges = end

    def fill(self, src, dst, w, at, m, lo, hi, real, h):
        """Write the block's edges from index ``at`` (and their mirrors from ``m + at`` when
        undirected), draw their weights; the block's (min, max, integral) weight."""
        end = at + self.edges
        if end == at:
            return None
        row_ends = at + np.cumsum(self.counts)
        for r, (a, b) in enumerate(zip(row_ends - self.counts, row_ends)):
            src[a:b] = self.start + r                     # a loop of 1024: no m-sized temporary
        dst[at:end] = self.targets[:self.edges]
        self.targets = None
        rng = np.random.Generator(np.random.PCG64(self.weight_stream))
        low, high, integral = math.inf, -math.inf, True
        for a in range(at, end, _GAPS_PER_STEP):          # in cache-sized steps
            b = min(a + _GAPS_PER_STEP, end)
            w[a:b] = rng.uniform(lo, hi, size=b - a) if real else rng.integers(lo, hi + 1, size=b - a,
                                                                               dtype=np.int64)
            parts = [slice(a, b)]
            if not self.directed:
                mirror = slice(m + a, m + b)
                src[mirror], dst[mirror], w[mirror] = dst[a:b], src[a:b], w[a:b]
                parts.append(mirror)
            for part in parts:
                if h is not None:
                    w[part] += h[src[part]] - h[dst[part]]
                x = w[part]
                low, high = min(low, x.min()), max(high, x.max())
                integral = integral and (not real or bool(np.all(x == np.floor(x))))
        return low, high, integral


def _places(rng, cells, p):
    """The pair numbers (0 .. cells-1) that Bernoulli(p) trials hit, in sorted batches: from
    geometric gaps below :data:`PER_PAIR_FROM`, from one uniform number per pair above it,
    and every pair at p = 1."""
    if p >= 1:
        return _all_places(cells)
    return _pair_places(rng, cells, p) if p >= PER_PAIR_FROM else _gap_places(rng, cells, p)


def _gap_places(rng, cells, p):
    """:func:`_places` from geometric gaps: one uniform number, a ``log1p`` and a running sum per hit."""
    scale = 1.0 / math.log1p(-p)
    u = np.empty(_GAPS_PER_STEP)
    q = np.empty(_GAPS_PER_STEP, np.int64)
    base = 0.0                                            # the first pair not yet decided
    while True:
        left = (cells - base) * p                        # hits expected in the rest
        size = int(min(_GAPS_PER_STEP, left + 4 * math.sqrt(left) + 16))
        x = u[:size]
        rng.random(out=x)
        np.negative(x, out=x)
        np.log1p(x, out=x)
        x *= scale                                       # misses before each hit: floor of this
        np.floor(x, out=x)
        np.fmin(x, cells, out=x)                         # a gap past the block is a gap past it
        x += 1.0
        np.cumsum(x, out=x)
        x += base - 1.0                                  # the hits' pair numbers (exact in float64)
        cut = int(np.searchsorted(x, cells))
        q[:cut] = x[:cut]
        yield q[:cut]
        if cut < size:
            return
        base = x[-1] + 1.0


def _pair_places(rng, cells, p):
    """:func:`_places` from one uniform number per pair, compared with p."""
    u = np.empty(_GAPS_PER_STEP)
    for a in range(0, cells, _GAPS_PER_STEP):
        x = u[:min(_GAPS_PER_STEP, cells - a)]
        rng.random(out=x)
        q = np.flatnonzero(x < p)
        q += a
        yield q


def _all_places(cells):
    """Every pair number, in batches (p = 1)."""
    for a in range(0, cells, _GAPS_PER_STEP):
        yield np.arange(a, min(a + _GAPS_PER_STEP, cells), dtype=np.int64)


def _joined_stats(n, parts) -> WeightStats:
    parts = [s for s in parts if s is not None]
    if not parts:
        return WeightStats(n, 0, 0, True)
    integral = all(s[2] for s in parts)
    conv = int if integral else float
    return WeightStats(n, conv(min(s[0] for s in parts)), conv(max(s[1] for s in parts)), integral)


class _Pool:
    """``map`` over the blocks on every core (NumPy's random fills and ufuncs release the
    GIL), or on this thread when there is one block."""

    def __init__(self, tasks):
        self.workers = min(usable_cores(), tasks)
        self.pool = None

    def __enter__(self):
        if self.workers > 1:
            from concurrent.futures import ThreadPoolExecutor

            self.pool = ThreadPoolExecutor(self.workers, thread_name_prefix="floydwarp-generate")
        return self

    def map(self, fn, items) -> list:
        return list(self.pool.map(fn, items) if self.pool else map(fn, items))

    def __exit__(self, *exc):
        if self.pool:
            self.pool.shutdown()
