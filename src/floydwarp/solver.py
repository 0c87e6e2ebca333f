"""`solve()`: graph -> plan -> engine -> result."""
from __future__ import annotations

import contextlib
import dataclasses
import inspect
import time

import numpy as np

from . import numeric, registry
from .arrays import array_module, to_host
from .cycles import NegativeCycles
from .errors import InternalError
from .inputs import as_graph
from .options import flag
from .plan import Plan
from .predecessors import NO_PREDECESSOR, has_loops
from .progress import progress_callback
from .result import Result


_NO_GUARD = contextlib.nullcontext()


def solve(graph, *, dtype="auto", backend="auto", algorithm="auto", predecessors=False,
          block_size=None, threads=None, progress=None, **options) -> Result:
    """All-pairs shortest paths by Floyd-Warshall (or, when every edge weighs 1, by all-pairs
    breadth-first search).

    Parameters
    ----------
    graph : Graph, array_like, SciPy sparse matrix or NetworkX graph
        Dense arrays use ``inf`` for "no edge" (see :meth:`Graph.from_dense`).
    dtype : {"auto", "int16", "int32", "int64", "float32", "float64"}
        Distance type.  ``"auto"`` takes the narrowest type that provably holds
        every shortest path (hop counts of ``bfs``: uint8 while they stay below 255);
        an explicit type that cannot is refused.
    backend : {"auto", "cpu", "gpu", "reference", ...}
        Where to run; see ``floydwarp info`` for what is available.
    algorithm : str
        The backend's algorithm.  ``"auto"``: ``bfs`` (cpu, gpu) when every edge weighs 1,
        else the backend's default.
    predecessors : bool
        Also compute the predecessor matrix, for routes.
    block_size, threads : int, optional
        Tile size and CPU thread count (defaults are measured per backend).
    progress : bool or callable, optional
        ``True`` draws a progress bar; a callable receives ``(done, total)``.
    **options
        The options of the chosen backend and algorithm, which each declares when it
        registers (``floydwarp info --options`` lists them with what they do), and the
        general ones: ``output="host"|"device"|"auto"`` (where the GPU backend leaves the
        result), ``phases=True`` (time the blocked schedule's phases) and
        ``output_file="NAME.npy"``, the file the result is bound for: ``gpu`` then keeps
        the result on the device (unless ``output="host"``), from where ``io.write_result``
        streams it into the file with no copy of the whole matrix in host memory.  ``mpi``:
        it lets every rank write its part of the result into
        that file (the ``.npy`` result layout) when rank 0 cannot gather it, and
        ``parallel_write=True`` does so always; the Result on rank 0 then reads the
        file through read-only memory maps.  Without ``output_file`` a result too
        large for rank 0 is refused before the run.  Any other option (a misspelt one,
        or one that another algorithm reads) raises :class:`~floydwarp.errors.OptionError`,
        a ``TypeError`` naming it and listing the options the call takes.

    Returns
    -------
    Result

    Examples
    --------
    >>> import numpy as np, floydwarp as fw
    >>> w = np.array([[0, 3, np.inf], [np.inf, 0, -1], [2, np.inf, 0]])
    >>> r = fw.solve(w)
    >>> r.dist.tolist(), r.dtype.name
    ([[0, 3, 2], [1, 0, -1], [2, 5, 0]], 'int16')
    """
    start = time.perf_counter()
    predecessors = flag(predecessors, "predecessors")
    graph = as_graph(graph)
    stats = graph.weight_stats()
    choice = numeric.choose_dtype(dtype, stats)
    name = registry.resolve_backend(backend, graph.n)
    impl = registry.lookup(name, algorithm, dtype=choice.dtype, predecessors=predecessors, n=graph.n,
                           graph=graph, options=options, parameters=_PARAMETERS)
    plan = Plan(n=graph.n, dtype=choice.dtype, inf=numeric.inf_of(choice.dtype),
                clamp=numeric.is_integer(choice.dtype) and stats.has_negative,
                backend=name, algorithm=impl.algorithm, predecessors=predecessors,
                block_size=block_size, threads=threads, options=options, stats=stats,
                verify_after=choice.verify_after, narrow=numeric.is_auto(dtype))
    prepared = time.perf_counter()
    with _signals_guard(plan), progress_callback(progress, lambda: f"{name}/{impl.algorithm} n={graph.n}") as report:
        plan.progress = report
        out, negative = _run(impl, graph, plan, stats)
        if plan.predecessors and not negative and not impl.k_order and _loops_possible(plan, stats) \
                and _pred_loops(out):
            out = _rerun_in_k_order(graph, plan, stats, out)
    written = bool(out.metadata.get("output_file"))      # written rank by rank: checked by the ranks
    if plan.verify_after and not written:
        # an MPI rank other than 0 holds no matrix: its engine tells it rank 0's outcome
        uncapped = out.uncapped if out.uncapped is not None else numeric.verify_uncapped(out.dist, plan.inf,
                                                                                          stats.max_weight)
        if not uncapped:
            raise numeric.too_narrow(choice.dtype, stats)
    if out.dist is None:
        return None        # an MPI rank other than 0: the result lives on rank 0
    ran = time.perf_counter()
    dist = out.dist
    inf = plan.inf if dist.dtype == plan.dtype else numeric.inf_of(dist.dtype)     # a narrowed result's
    cycles = _negative_cycles(graph, dist) if negative else NegativeCycles.none(graph.n)
    timings = {"prepare": prepared - start, **out.timings, "finish": time.perf_counter() - ran}
    return Result(dist, out.pred, inf=inf, labels=graph.labels, backend=name,
                  algorithm=impl.algorithm, timings=timings, num_edges=graph.num_edges,
                  negative_cycles=cycles, graph=graph, solver=solve,
                  metadata={**out.metadata, "dtype_verified_after_run": bool(choice.verify_after)})


def _signals_guard(plan):
    """A checkpointed run saves and stops on SIGTERM / Ctrl-C from its start (the start matrix,
    the compile), not only once its rounds begin; other runs leave signals alone."""
    if not (plan.options.get("checkpoint") or plan.options.get("resume")):
        return _NO_GUARD
    from .checkpoint import stop_on_signals

    return stop_on_signals()


#: solve()'s own keywords (an option error's "did you mean" looks among them too)
_PARAMETERS = tuple(inspect.signature(solve).parameters)[1:-1]


def _run(impl, graph, plan, stats):
    """Run one engine: exact distances with unreachable pairs at INF, and whether a diagonal went negative."""
    if plan.clamp and plan.options.get("resume") and _float64_rerun_saved(plan):
        # stopped in the float64 rerun: the integer run had ended in a negative cycle
        out, negative = _rerun_in_float64(impl, graph, plan, None), True
    else:
        out = impl.run(graph, plan)
        if out.metadata.get("output_file"):
            # written rank by rank (mpi): the ranks applied these rules to their own parts
            return out, out.negative_diagonal
        negative = out.negative_diagonal
        if negative is None:
            negative = _has_negative_diagonal(out.dist, plan)
        if negative and plan.clamp:
            out = _rerun_in_float64(impl, graph, plan, out)
    if out.dist is not None:
        numeric.normalize_unreachable(out.dist, plan.dtype, stats)
        if out.pred is not None:
            # With negative weights an unreachable pair can be "improved" through INF
            # entries before normalization; it has no predecessor.
            array_module(out.pred).copyto(out.pred, NO_PREDECESSOR, where=out.dist >= plan.inf)
    return out, negative


def _diagonal(dist) -> np.ndarray:
    """The diagonal on the host: n values, and no device reduction to compile (CuPy compiles
    a reduction anew for some array sizes, seconds each on a machine without its cache)."""
    return to_host(array_module(dist).diagonal(dist))


def _has_negative_diagonal(dist, plan) -> bool:
    """Whether an entry of the diagonal went negative.  One above 0 (INF, NaN) is refused: the
    start matrix's diagonal is 0 or a negative self-loop and Floyd-Warshall never raises an
    entry, so the engine lost data (on a GPU: a copy that did not land, issue 35)."""
    diagonal = _diagonal(dist)
    if diagonal.size == 0:
        return False
    if not diagonal.max() <= 0:                  # NaN too
        v = int(np.flatnonzero(~(diagonal <= 0))[0])
        raise InternalError(f"{plan.backend}/{plan.algorithm} returned {diagonal[v]} as the distance from vertex {v} "
                            f"to itself (n = {plan.n}, {np.dtype(plan.dtype).name}); a diagonal entry can only stay "
                            f"0 or go negative: the run lost data, and its result is refused")
    return bool(diagonal.min() < 0)


def _loops_possible(plan, stats) -> bool:
    """In exact (integer) arithmetic every predecessor edge is tight, so a loop of them is
    a zero-weight cycle: with every weight positive there is none to look for."""
    return not (numeric.exact(plan.dtype, stats) and stats.min_weight > 0)


def _pred_loops(out) -> bool:
    return out.pred_loops if out.pred_loops is not None else has_loops(out.pred)


def _negative_cycles(graph, dist) -> NegativeCycles:
    return NegativeCycles.from_graph(graph, np.flatnonzero(_diagonal(dist) < 0))


def _merged_timings(first, second):
    return {k: first.get(k, 0.0) + second.get(k, 0.0) for k in {*first, *second}}


def _rerun_in_float64(impl, graph, plan, first):
    """Integer runs clamp at -INF to stay in range, but with a negative cycle the
    clamped values can leak into pairs the cycle does not touch (INF + -INF = 0).
    float64 keeps those pairs exact (inf + -inf is NaN, which never wins), so the
    distances are recomputed there and cast back (a checkpointed run's rerun saves in a
    folder of its own inside the run's; ``first`` is None where a resumed run goes straight
    on with the rerun it had stopped in)."""
    from .checkpoint import rerun_options

    out = impl.run(graph, dataclasses.replace(plan, dtype=np.dtype("float64"), inf=np.inf, clamp=False,
                                              verify_after=False, options=rerun_options(plan.options)))
    dist = out.dist
    if dist is not None:
        dist = numeric.from_float64(dist, plan.dtype, plan.inf)
    timings = out.timings if first is None else _merged_timings(first.timings, out.timings)
    return dataclasses.replace(out, dist=dist, timings=timings)


def _float64_rerun_saved(plan) -> bool:
    from .checkpoint import rerun_saved

    return rerun_saved(plan.options)


def _rerun_in_k_order(graph, plan, stats, first):
    """The blocked order closed a predecessor loop around a zero-weight cycle: redo the run
    with the backend's textbook-order algorithm, whose predecessors cannot loop."""
    fallback = registry.k_order_algorithm(plan.backend, plan.n)
    out, _ = _run(fallback, graph, dataclasses.replace(plan, algorithm=fallback.algorithm), stats)
    metadata = {**out.metadata, "pred_fallback": f"{plan.algorithm} left a predecessor loop; "
                                                 f"recomputed with {fallback.algorithm}"}
    return dataclasses.replace(out, timings=_merged_timings(first.timings, out.timings), metadata=metadata)
