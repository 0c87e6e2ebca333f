"""`floyd_warshall`: a drop-in for :func:`scipy.sparse.csgraph.floyd_warshall`.

The input is read exactly as SciPy reads it (a plain dense array by SciPy's
dense rule and a CSR or CSC matrix by its sparse rule, each in one Numba pass,
anything else by SciPy's own validation), then
solved by floydwarp: integer weights run in the narrowest exact integer
type, and the answer comes back as SciPy returns it.
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph._validation import validate_graph

from .cpu import team
from .errors import NegativeCycleError
from .graph import Graph
from .graph.graph import numba_passes, numba_readable
from .solve import solve

#: SciPy reads dense entries within this of 0 as "no edge" (np.ma.masked_values' atol)
_SCIPY_NULL_ATOL = 1e-8


def floyd_warshall(csgraph, directed=True, return_predecessors=False, unweighted=False,
                   overwrite=False, *, backend="auto", dtype=None):
    """All-pairs shortest paths, with SciPy's signature, conventions and errors.

    Parameters
    ----------
    csgraph : array, matrix, masked array or sparse matrix, (N, N)
        Dense input: 0, ``inf`` and ``nan`` off the diagonal mean "no edge".
        Sparse input: explicit zeros are zero-weight edges.
    directed : bool
        False makes every edge usable both ways.
    return_predecessors : bool
        Also return the (N, N) int32 predecessor matrix (-9999: none).
    unweighted : bool
        Count edges instead of summing weights.
    overwrite : bool
        Write the distances into ``csgraph`` when it is a C-ordered float64 array.
    backend : str
        floydwarp backend ("auto", "cpu", "gpu", ...).
    dtype : str, optional
        Distance type for the computation (default: narrowest exact one).

    Returns
    -------
    dist_matrix : ndarray of float64 (N, N)
    predecessors : ndarray of int32 (N, N), only if ``return_predecessors``

    Raises
    ------
    NegativeCycleError
        A subclass of SciPy's, if the graph has a negative cycle.

    Examples
    --------
    >>> from scipy.sparse import csr_matrix
    >>> import floydwarp as fw
    >>> graph = csr_matrix([[0, 1, 2, 0], [0, 0, 0, 1], [2, 0, 0, 3], [0, 0, 0, 0]])
    >>> dist, pred = fw.floyd_warshall(graph, directed=False, return_predecessors=True)
    >>> dist
    array([[0., 1., 2., 2.],
           [1., 0., 3., 1.],
           [2., 3., 0., 3.],
           [2., 1., 3., 0.]])
    >>> pred
    array([[-9999,     0,     0,     1],
           [    1, -9999,     0,     1],
           [    2,     0, -9999,     2],
           [    1,     3,     3, -9999]], dtype=int32)
    """
    result = solve(_graph(csgraph, directed, unweighted, overwrite), dtype=dtype or "auto",
                   backend=backend, predecessors=return_predecessors, output="host")
    result = result.to_host()
    if result.has_negative_cycle:
        raise NegativeCycleError(f"Negative cycle in nodes {result.negative_cycle_vertices}",
                                 vertices=result.negative_cycle_vertices)
    dist = result.to_dense()
    if overwrite and _writable_in_place(csgraph):
        csgraph[...] = dist
        dist = csgraph
    if return_predecessors:
        return dist, result.pred
    return dist


def _graph(csgraph, directed, unweighted, overwrite) -> Graph:
    """The graph of the float64 weight matrix SciPy's ``floyd_warshall`` works on (``inf``: no
    edge), written and validated in one Numba pass (graph/kernels.py).  A plain numeric n x n
    array is read there by SciPy's dense rule (0 -- within 1e-8 --, NaN and +-inf are no
    edge), in parallel; a CSR or CSC matrix by SciPy's sparse rule (explicit zeros are edges;
    :func:`_sparse_weights`); any other input goes through SciPy's own validation first
    (masked: masked entries and exact zeros are not edges)."""
    plain = (type(csgraph) is np.ndarray and csgraph.ndim == 2 and csgraph.shape[0] == csgraph.shape[1]
             and (csgraph.dtype.kind == "b" or numba_readable(csgraph.dtype)))
    if plain:
        dense, null_within, nonfinite_null = csgraph, _SCIPY_NULL_ATOL, True
    else:
        read = _sparse_weights(csgraph, directed, unweighted)
        if read is not None:
            return Graph._from_scanned(*read)
        dense = validate_graph(csgraph, directed, np.float64, csr_output=False, copy_if_dense=not overwrite)
        null_within, nonfinite_null = (-1.0 if sp.issparse(csgraph) else 0.0), False
    if dense.dtype.kind == "b":
        dense = dense.view(np.uint8)
    weights = np.empty(dense.shape, np.float64)
    n = dense.shape[0]
    scans = team.run(numba_passes().scipy_weights, n, dense, null_within, nonfinite_null, unweighted, directed,
                     weights, threads=team.shares(n, n * n))
    return Graph._from_scanned(weights, scans)


def _sparse_weights(csgraph, directed, unweighted):
    """``(weights, scans)``: the float64 weights (``inf``: no edge) of a square CSR or CSC
    matrix of numbers, read from its stored entries as SciPy reads them, and their weight
    statistics, in one Numba call (graph/kernels.py, ``scipy_sparse_weights``); None for any
    other input, and for a malformed matrix, which SciPy's validation then refuses as SciPy
    does."""
    if not sp.issparse(csgraph) or csgraph.format not in ("csr", "csc"):
        return None
    shape, data = csgraph.shape, csgraph.data
    if len(shape) != 2 or shape[0] != shape[1] or data.dtype.kind not in "biuf":
        return None
    out = np.empty(shape)
    data = data if data.dtype == np.float64 else data.astype(np.float64)
    scan = numba_passes().scipy_sparse_weights(csgraph.indptr, csgraph.indices, data, csgraph.format == "csr",
                                               unweighted, directed, out)
    if scan[-1] == -2:
        return None
    return out, [scan]


def _writable_in_place(a) -> bool:
    return (isinstance(a, np.ndarray) and not np.ma.isMaskedArray(a) and a.dtype == np.float64
            and a.flags.c_contiguous and a.flags.writeable)
