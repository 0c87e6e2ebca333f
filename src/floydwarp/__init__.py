"""floydwarp: all-pairs shortest paths with Floyd-Warshall, as fast as the hardware allows.

>>> import floydwarp as fw
>>> r = fw.solve(fw.generate.erdos_renyi(100, percent=10, seed=1))
>>> r.n, r.has_negative_cycle
(100, False)
"""
from . import generate
from .batch import BatchResult, GraphBatch, solve_batch
from .errors import (BackendUnavailableError, DtypeError, FloydwarpError, NegativeCycleError,
                     NoPathError)
from .graph import Graph
from .numeric import DTYPES, inf_of
from .predecessors import NO_PREDECESSOR
from .result import Result
from .scipy_compat import floyd_warshall
from .solve import solve

__version__ = "0.1.0"

__all__ = [
    "BatchResult", "GraphBatch", "solve_batch",
    "BackendUnavailableError", "DTYPES", "DtypeError", "FloydwarpError", "Graph", "NO_PREDECESSOR",
    "NegativeCycleError", "NoPathError", "Result", "floyd_warshall", "generate", "inf_of", "solve",
    "__version__",
]
