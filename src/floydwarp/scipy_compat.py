"""`floyd_warshall`: a drop-in for :func:`scipy.sparse.csgraph.floyd_warshall`.

The input is read exactly as SciPy reads it (a plain dense array by SciPy's
dense rule and a CSR or CSC matrix by its sparse rule, each in one Numba pass,
anything else by SciPy's own validation), then
solved by floydwarp: integer weights run in the narrowest exact integer
type, and the answer comes back as SciPy returns it.  A graph of at most
:data:`TEXTBOOK_MAX_N` vertices runs SciPy's own loop, compiled, on the weights
as read: there the engine's fixed costs are more than the whole run.
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph._validation import validate_graph

from . import team
from .cpu import steps as cpu_steps
from .errors import NegativeCycleError
from .graph import Graph
from .graph.edge_arrays import numba_passes, numba_readable
from .options import refused
from .predecessors import NO_PREDECESSOR
from .solver import solve

#: SciPy reads dense entries within this of 0 as "no edge" (np.ma.masked_values' atol)
_SCIPY_NULL_ATOL = 1e-8
#: Graphs up to this size run SciPy's textbook loop (cpu/steps.py, ``scipy_textbook``) on
#: the weights as read, one Numba call, instead of solve(): the engine's fixed costs (~20 us
#: a call: plan, registry, tiles, Result) are more than that loop takes up to about 80
#: vertices (2-core box, CSR input, 30 % of the pairs: 9 against 38 us at 32 vertices, 38
#: against 57 at 64, 71 against 78 at 80; with predecessors 52 against 92 at 64).
TEXTBOOK_MAX_N = 64
#: the predecessor argument of a textbook run without predecessors
_NO_PRED = np.empty((0, 0), np.int32)


def floyd_warshall(csgraph, directed=True, return_predecessors=False, unweighted=False,
                   overwrite=False, *, backend="auto", dtype=None, **unknown):
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
    **unknown
        None are taken: any other keyword raises :class:`~floydwarp.errors.OptionError`
        (a ``TypeError``) naming it and listing these.

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
    if unknown:
        raise refused(floyd_warshall, unknown)
    weights, scans = _weights(csgraph, directed, unweighted, overwrite)
    answer = None
    if backend == "auto" and dtype is None and weights.shape[0] <= TEXTBOOK_MAX_N:
        answer = _textbook(weights, scans, return_predecessors)
    if answer is None:
        answer = _solved(weights, scans, dtype, backend, return_predecessors)
    dist, pred = answer
    if overwrite and _writable_in_place(csgraph):
        csgraph[...] = dist
        dist = csgraph
    if return_predecessors:
        return dist, pred
    return dist


def _solved(weights, scans, dtype, backend, with_pred):
    """(dist, pred) of the weights by solve(), or SciPy's NegativeCycleError."""
    result = solve(Graph.from_scanned(weights, scans), dtype=dtype or "auto", backend=backend,
                   predecessors=with_pred, output="host").to_host()
    if result.has_negative_cycle:
        raise NegativeCycleError(f"Negative cycle in nodes {result.negative_cycle_vertices}",
                                 vertices=result.negative_cycle_vertices)
    return result.to_dense(), result.pred


def _textbook(weights, scans, with_pred):
    """(dist, pred) by SciPy's loop in one Numba call, or None where solve() must answer: an
    entry to refuse, or a negative cycle (its vertices and error are solve()'s, from the
    weights, which are run on a copy when some are negative)."""
    negative = False
    for edges, seen, lo, hi, whole, bad_i, bad_j in scans:
        if bad_i >= 0:
            return None
        negative = negative or (seen and lo < 0)
    dist = weights.copy() if negative else weights
    pred = np.empty(dist.shape, np.int32) if with_pred else _NO_PRED
    if not cpu_steps.scipy_textbook(dist, pred, with_pred, NO_PREDECESSOR):
        return None
    return dist, (pred if with_pred else None)


def _weights(csgraph, directed, unweighted, overwrite):
    """``(weights, scans)``: the float64 weight matrix SciPy's ``floyd_warshall`` works on
    (``inf``: no edge), written and validated in one Numba pass (graph/kernels.py), with that
    pass's weight statistics (``dense_scan``'s answers).  A plain numeric n x n
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
            return read
        dense = validate_graph(csgraph, directed, np.float64, csr_output=False, copy_if_dense=not overwrite)
        null_within, nonfinite_null = (-1.0 if sp.issparse(csgraph) else 0.0), False
    if dense.dtype.kind == "b":
        dense = dense.view(np.uint8)
    weights = np.empty(dense.shape, np.float64)
    n = dense.shape[0]
    scans = team.run(numba_passes().scipy_weights, n, dense, null_within, nonfinite_null, unweighted, directed,
                     weights, threads=team.shares(n, n * n))
    return weights, scans


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
