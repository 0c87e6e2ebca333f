"""Many small graphs at once: batched all-pairs shortest paths for graph learning and chemistry.

:func:`solve_batch` takes a list of graphs, a padded (B, N, N) array or a PyTorch Geometric
style batch (``edge_index``, ``batch``/``ptr``) and returns a :class:`BatchResult` whose
padded (B, N, N) distances live where the input did.  Inputs become one
:class:`GraphBatch` (graphs.py); an engine (engines.py: ``cpu``, Numba, and ``gpu``,
kernels/batch.cu) solves every graph at once; graphs with a negative cycle are redone by
:func:`floydwarp.solve`.
"""
from .graphs import GraphBatch
from .result import BatchResult
from .solve import solve_batch

__all__ = ["BatchResult", "GraphBatch", "solve_batch"]
