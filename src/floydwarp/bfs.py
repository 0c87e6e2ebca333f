"""All-pairs breadth-first search: what the ``bfs`` algorithms of the cpu and gpu backends share.

When every edge weighs 1 the distances are hop counts, and a breadth-first search from every
vertex finds them in about ``D m n / 64`` word operations (``D`` levels, ``m`` arcs, 64
vertices a word) where Floyd-Warshall needs ``n^3`` relaxations: at n = 2,000 with 20,000
edges and diameter 6, some 10^7 against 8 x 10^9.

The searches run level-synchronously, one bit per target vertex.  Row ``v`` of the answer is
built at ``v`` itself: bit ``t`` of ``visited[v]`` says that ``v`` reaches ``t`` within the
levels done, and ``frontier[v]`` holds the targets ``v`` reached at the last level, so

    next[v] = (OR over out-neighbours u of v of frontier[u]) AND NOT visited[v]

are the targets at distance ``level`` from ``v`` (a breadth-first search from every target
along reversed edges, all at once).  Each new bit writes ``dist[v, t] = level`` into row
``v``, so the rows are written where they live; a directed graph gets its own orientation
(``dist[v, t]`` = hops from ``v`` to ``t``) and an undirected one the same matrix either way.
Self-loops and parallel edges change nothing.  Unreached pairs keep the INF of the result's
dtype, the diagonal is 0, as in every other algorithm's result.

Distances are stored in the narrowest type that holds them (``numeric.hop_storage``): with
``dtype="auto"`` uint8 (INF 255) while every distance stays below 255, else the next integer
type; a search that reaches the current type's INF starts again in the next one.

Predecessors (``pred[i, j]``: the vertex before ``j`` on a shortest path from ``i``) come from
the distances: the smallest in-neighbour ``x`` of ``j`` with ``dist[i, x] = dist[i, j] - 1``,
``n m`` comparisons at most.  Distances fall by one along every predecessor edge, so they
never loop.
"""
from __future__ import annotations

#: target vertices a word of the bit sets holds
WORD = 64


def refusal(graph, options) -> str | None:
    """None when the breadth-first algorithms can solve ``graph``, else why not (the registry's
    ``accepts``): every edge must weigh 1 (hop counts are then its distances).  They take no
    checkpoint options (a run takes seconds where Floyd-Warshall's can take hours), so
    ``algorithm="auto"`` passes them over for a call that asks for a checkpoint."""
    if graph.num_edges == 0:
        return None
    stats = graph.weight_stats()
    if stats.min_weight == 1 and stats.max_weight == 1:
        return None
    return (f"breadth-first search counts hops, so every edge must weigh 1; this graph's weights "
            f"run from {stats.min_weight} to {stats.max_weight}")


def words(n: int) -> int:
    """Words of a bit set of ``n`` vertices."""
    return -(-int(n) // WORD)
