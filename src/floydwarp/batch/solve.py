"""`solve_batch()`: many small graphs -> one plan -> one engine -> a BatchResult."""
from __future__ import annotations

import math
import numbers

import numpy as np

from .. import numeric
from ..arrays import array_module, to_host
from ..errors import BackendUnavailableError, FloydwarpError
from ..options import count, flag, refused
from ..progress import progress_callback
from .engines import BatchPlan, resolve, store
from .graphs import GraphBatch
from .result import BatchResult


def solve_batch(graphs, *, dtype="auto", backend="auto", predecessors=False, unweighted=False, max_n=None,
                max_distance=None, sizes=None, edge_weight=None, output=None, progress=None,
                **unknown) -> BatchResult:
    """All-pairs shortest paths of many small graphs at once (graph learning, chemistry).

    Parameters
    ----------
    graphs : list, array (B, N, N), GraphBatch, PyG-style batch or batched DGL graph
        A list of anything :func:`floydwarp.solve` accepts; a padded (B, N, N) weight array
        (``inf`` = no edge) with ``sizes``; a :class:`GraphBatch`; an object with
        ``edge_index`` (2, E), optional ``edge_weight`` and ``batch`` or ``ptr`` (a PyTorch
        Geometric ``Batch``; build one from bare arrays with :meth:`GraphBatch.from_pyg`); or
        a batched DGL graph (``edges()`` and ``batch_num_nodes()``; :meth:`GraphBatch.from_dgl`).
        NumPy, CuPy and DLPack tensors (PyTorch, JAX) are read in place.
    dtype : {"auto", "uint8", "int16", "int32", "int64", "float32", "float64"}
        As :func:`floydwarp.solve`, for the whole batch; ``"auto"`` stores hop counts
        (``unweighted=True``) in uint8 when they fit.  uint8 holds non-negative distances
        below 255 (INF = 255).
    backend : {"auto", "cpu", "gpu"}
        ``"auto"`` runs where the batch lives: the GPU for device arrays, else the CPU.
    predecessors : bool
        Also return (B, N, N) int32 predecessors (SciPy's convention), for routes.
    unweighted : bool
        Every edge weighs 1: hop counts, as graph transformers use them.  No weight is read
        (sparse values, Graph weights, ``edge_weight``), so none is checked either.
    max_n : int, optional
        The padded size N (default: the largest graph); a larger graph is refused.
    max_distance : number, optional
        Reachable distances above it are stored as it (Graphormer's clipped spatial
        encoding); unreachable pairs stay INF.
    sizes : array (B,), optional
        Vertices of each graph of a padded array (default: N each).
    edge_weight : array (E,) or str, optional
        Weights for a PyG-style object that has none; for a DGL graph, an array or the name
        of an ``edata`` field.
    output : {None, "host", "device"}
        Where the result arrays go (default: where the input was).
    progress : bool or callable, optional
        ``True`` draws a progress bar; a callable receives ``(graphs done, graphs)``.
    **unknown
        None are taken: any other keyword raises :class:`~floydwarp.errors.OptionError`
        (a ``TypeError``) naming it and listing these.

    Returns
    -------
    BatchResult
        ``dist`` (B, N, N), ``sizes``, ``negative_cycle`` flags, and ``result[g]``: graph g
        as a :class:`floydwarp.Result`.

    Notes
    -----
    **What ``dist`` holds.**  Its dtype is ``r.dtype``: with ``dtype="auto"`` the narrowest
    that holds every distance -- uint8 for hop counts below 255 (``unweighted=True``, or
    ``max_distance`` below 255), else int16, int32 or int64 for integer weights, float64
    (or float32 when asked) for real ones.  Unreachable pairs *and the padding* hold
    ``r.inf``, the dtype's INF marker: ``np.inf`` only for float dtypes; for integers it is
    a finite number -- 255 (uint8), 16383 (int16), 2**30 - 1 (int32), 2**62 - 1 (int64).
    So test integer distances with ``r.dist >= r.inf`` (or ``== r.inf``), never against
    ``np.inf``: ``r.dist == np.inf`` is all False for integers.  ``r.to_dense()`` converts
    to float64 with ``np.inf`` at those places (``r[g].to_dense()`` for one graph, without
    padding); ``r.dist.astype(float)`` alone would keep 255 or 16383 as distances.

    >>> import numpy as np, floydwarp as fw
    >>> r = fw.solve_batch([np.array([[0, 3.0], [np.inf, 0]]), np.zeros((1, 1))])
    >>> r.dtype.name, int(r.inf), r.dist[0].tolist()
    ('int16', 16383, [[0, 3], [16383, 0]])
    >>> bool((r.dist == np.inf).any()), int((r.dist >= r.inf).sum())    # 1 unreachable + 3 padding
    (False, 4)
    >>> r.to_dense()[0].tolist(), r[1].to_dense().tolist()
    ([[0.0, 3.0], [inf, 0.0]], [[0.0]])

    Examples
    --------
    >>> import numpy as np, floydwarp as fw
    >>> edge_index = np.array([[0, 1, 1, 2, 3, 4], [1, 0, 2, 1, 4, 3]])
    >>> r = fw.solve_batch(fw.GraphBatch.from_pyg(edge_index, ptr=np.array([0, 3, 5])), unweighted=True)
    >>> r.dtype.name, r.dist[0].tolist(), r.sizes.tolist()
    ('uint8', [[0, 1, 2], [1, 0, 1], [2, 1, 0]], [3, 2])
    >>> r.dist[1].tolist()
    [[0, 1, 255], [1, 0, 255], [255, 255, 255]]
    """
    if unknown:
        raise refused(solve_batch, unknown)
    predecessors, unweighted = flag(predecessors, "predecessors"), flag(unweighted, "unweighted")
    if output not in (None, "host", "device"):
        raise FloydwarpError(f"output must be 'host' or 'device', got {output!r}")
    if output == "device":              # refused before the solve, not after it
        try:
            resolve("gpu", True)
        except BackendUnavailableError as exc:
            raise BackendUnavailableError(f"output='device' needs the GPU: {exc}") from None
    batch = GraphBatch.of(graphs, sizes=sizes, edge_weight=edge_weight, weighted=not unweighted)
    size = _padded_size(batch, max_n)
    stats = batch.weight_stats(unweighted)
    cap = _cap(max_distance, stats)
    choice, stored = numeric.choose_storage(dtype, stats, hops=unweighted, cap=cap)
    if choice.verify_after and max_distance is not None:
        raise numeric.DtypeError(f"dtype {choice.dtype.name} needs a check after the run that max_distance would "
                                 f"hide; use dtype='auto' ({numeric.smallest_fitting(stats).name})")
    engine = resolve(backend, batch.on_device)
    inf = numeric.inf_of(choice.dtype)
    plan = BatchPlan(dtype=choice.dtype, inf=inf, clamp=numeric.is_integer(choice.dtype) and stats.has_negative,
                     out_dtype=stored, out_inf=numeric.inf_of(stored),
                     threshold=numeric.unreachable_threshold(choice.dtype, stats), size=size,
                     predecessors=predecessors, unweighted=unweighted, max_distance=cap, stats=stats)
    with progress_callback(progress, f"batch/{engine.name}", unit="graph") as report:
        plan.progress = report
        out = engine.run(batch, plan)
    cycles = _redo_negative(batch, plan, out)
    if choice.verify_after and not numeric.verify_uncapped(out.dist, plan.out_inf, stats.max_weight):
        raise numeric.too_narrow(choice.dtype, stats)
    result = BatchResult(out.dist, out.pred, sizes=batch.host_sizes.copy(), negative_cycle=to_host(out.negative),
                         inf=plan.out_inf, backend=engine.name, timings=out.timings, labels=batch.labels,
                         cycles=cycles, metadata={**out.metadata, "arithmetic_dtype": choice.dtype.name})
    where = output or ("device" if batch.on_device else "host")
    return result.to_host() if where == "host" else result.to_device()


def _padded_size(batch, max_n) -> int:
    if max_n is None:
        return batch.max_size
    max_n = count(max_n, "max_n")
    if max_n < batch.max_size:
        g = int(np.argmax(batch.host_sizes))
        raise FloydwarpError(f"graph {g} has {batch.max_size} vertices, more than max_n = {max_n}")
    return max_n


def _cap(max_distance, stats):
    """The clipping distance (None: none); ``inf`` clips nothing."""
    if max_distance is None or (isinstance(max_distance, numbers.Real) and max_distance == math.inf):
        return None
    if not isinstance(max_distance, numbers.Real) or isinstance(max_distance, bool) or math.isnan(max_distance) \
            or max_distance < 0 or (stats.integral and max_distance != int(max_distance)):
        raise FloydwarpError(f"max_distance must be a non-negative {'integer' if stats.integral else 'number'}, "
                             f"got {max_distance!r}")
    return int(max_distance) if stats.integral else float(max_distance)


def _redo_negative(batch, plan, out) -> dict:
    """Graphs whose diagonal went negative are redone one by one by :func:`floydwarp.solve`,
    which owns the rules for negative cycles (float64 reruns, the cycles' reach); returns
    ``{graph: NegativeCycles}``."""
    from ..solver import solve

    flagged = np.flatnonzero(to_host(out.negative))
    cycles = {}
    xp = array_module(out.dist)
    for g in flagged.tolist():
        r = solve(batch.graph(g, plan.unweighted), dtype=plan.dtype, backend="cpu", predecessors=plan.predecessors)
        n = r.n
        out.dist[g, :n, :n] = xp.asarray(store(plan, r.dist))
        if out.pred is not None:
            out.pred[g, :n, :n] = xp.asarray(r.pred)
        cycles[g] = r.negative_cycles
    return cycles
