"""Turn whatever the user passed into a `Graph`."""
from __future__ import annotations

import sys

import numpy as np

from .dlpack import maybe_from_dlpack
from .errors import FloydwarpError
from .graph import Graph


def as_graph(obj, *, missing=np.inf) -> Graph:
    """A `Graph` from a Graph, dense array (NumPy, masked, CuPy, or any DLPack tensor such as
    PyTorch or JAX), SciPy sparse matrix or NetworkX graph."""
    if isinstance(obj, Graph):
        return obj
    if type(obj) is np.ndarray:                 # the common case, first: no other test applies
        return Graph.from_dense(obj, missing=missing)
    sp = sys.modules.get("scipy.sparse")       # a SciPy matrix means SciPy is imported already
    if sp is not None and sp.issparse(obj):
        return Graph.from_scipy(obj)
    obj = maybe_from_dlpack(obj)
    if type(obj).__module__.startswith("networkx"):
        return Graph.from_networkx(obj)
    if hasattr(obj, "shape") or isinstance(obj, (list, tuple)):
        return Graph.from_dense(obj, missing=missing)
    raise FloydwarpError(
        f"cannot make a graph from {type(obj).__name__}; pass a Graph, an n x n array, "
        "a SciPy sparse matrix or a NetworkX graph")
