"""The random streams of the Erdos-Renyi generator, shared by the host's (generate.py) and the
GPU's (gpu/generate.py), so that both draw the same graph for a seed."""
from __future__ import annotations

import numpy as np

#: rows per block; the blocks and their streams depend on n alone
ROWS_PER_BLOCK = 1024
#: the density from which one uniform number per pair (~2.7 + 3.6 p ns a pair on the 2-core
#: box) is cheaper than a geometric gap per edge (~10.5 p ns a pair)
PER_PAIR_FROM = 0.4


def block_streams(n: int, seed: int):
    """The generator's random streams for n vertices: the potential's, and per block of
    :data:`ROWS_PER_BLOCK` rows its (places, weights) pair -- ``SeedSequence`` children, the
    same for the host generator and the GPU's (gpu/generate.py)."""
    potential_stream, *per_block = np.random.SeedSequence(seed).spawn(1 + -(-n // ROWS_PER_BLOCK))
    return potential_stream, [tuple(s.spawn(2)) for s in per_block]


def potentials(stream, potential: int, n: int) -> np.ndarray:
    """h(v) of every vertex, drawn in 0..potential from the potential stream."""
    return np.random.Generator(np.random.PCG64(stream)).integers(0, int(potential) + 1, size=n, dtype=np.int64)
