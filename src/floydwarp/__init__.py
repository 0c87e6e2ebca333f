"""floydwarp: all-pairs shortest paths with Floyd-Warshall, as fast as the hardware allows.

>>> import floydwarp as fw
>>> r = fw.solve(fw.generate.erdos_renyi(100, percent=10, seed=1))
>>> r.n, r.has_negative_cycle
(100, False)
"""
from . import generate
from .errors import BackendUnavailableError, DtypeError, FloydwarpError, InexactWarning, NoPathError
from .graph import Graph
from .numeric import DTYPES, inf_of
from .predecessors import NO_PREDECESSOR
from .result import Result
from .solve import solve

__version__ = "0.1.0"


#: Names imported when first asked for: SciPy's adapter and its exception import SciPy, and
#: the batch API (15 ms of every process's start) is not needed to solve one graph.
_LAZY = {"NegativeCycleError": "errors", "floyd_warshall": "scipy_compat",
         "BatchResult": "batch", "GraphBatch": "batch", "solve_batch": "batch"}


def __getattr__(name):
    if name in _LAZY:
        import importlib

        value = getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
        globals()[name] = value        # later lookups find it without this call (1.4 us each)
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

__all__ = [
    "BatchResult", "GraphBatch", "solve_batch",
    "BackendUnavailableError", "DTYPES", "DtypeError", "FloydwarpError", "Graph", "InexactWarning", "NO_PREDECESSOR",
    "NegativeCycleError", "NoPathError", "Result", "floyd_warshall", "generate", "inf_of", "solve",
    "__version__",
]
