"""floydwarp: all-pairs shortest paths with Floyd-Warshall, as fast as the hardware allows.

>>> import floydwarp as fw
>>> r = fw.solve(fw.generate.erdos_renyi(100, percent=10, seed=1))
>>> r.n, r.has_negative_cycle
(100, False)
"""
from . import generate
from .batch import BatchResult, GraphBatch, solve_batch
from .errors import BackendUnavailableError, DtypeError, FloydwarpError, InexactWarning, NoPathError
from .graph import Graph
from .numeric import DTYPES, inf_of
from .predecessors import NO_PREDECESSOR
from .result import Result
from .solve import solve

__version__ = "0.1.0"


def __getattr__(name):
    # SciPy's adapter and its exception import SciPy: only when asked for
    if name == "NegativeCycleError":
        from .errors import NegativeCycleError
        return NegativeCycleError
    if name == "floyd_warshall":
        from .scipy_compat import floyd_warshall
        return floyd_warshall
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

__all__ = [
    "BatchResult", "GraphBatch", "solve_batch",
    "BackendUnavailableError", "DTYPES", "DtypeError", "FloydwarpError", "Graph", "InexactWarning", "NO_PREDECESSOR",
    "NegativeCycleError", "NoPathError", "Result", "floyd_warshall", "generate", "inf_of", "solve",
    "__version__",
]
