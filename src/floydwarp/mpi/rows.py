"""The ``mpi`` backend's ``rows``: seed 002's 1D decomposition -- contiguous blocks of rows
per process; for each k the owner of row k broadcasts it and every process relaxes its rows."""
from __future__ import annotations

import time

import numpy as np

from ..plan import EngineOutput
from ..predecessors import NO_PREDECESSOR
from ..registry import register
from . import comm as mpi_util
from . import output
from .comm import clamp_floor, threads_for


@register("mpi", "rows", k_order=True)
def rows(graph, plan) -> EngineOutput:
    """Seed 002's 1D decomposition: row blocks per process, row k broadcast by its owner every k."""
    comm = mpi_util.world()
    size, rank, n = comm.Get_size(), comm.Get_rank(), plan.n
    bounds = np.linspace(0, n, size + 1).astype(np.int64)      # rows [bounds[p], bounds[p+1]) on p
    lo_row, hi_row = int(bounds[rank]), int(bounds[rank + 1])
    target = output.choose_target(comm, plan)          # before any work: refused alike on every rank
    meta = {"processes": size, "grid": [size, 1]}
    if target is not None:
        def compute(p):
            with mpi_util.abort_on_error(comm):
                d, pr, timings = _solve_rows(comm, graph, p, bounds)
                return [output.Part(lo_row, hi_row, 0, n, d, pr)], timings

        return output.finish_in_file(comm, graph, plan, target, compute, k_order=True, metadata=meta)
    with mpi_util.abort_on_error(comm):
        d, p, timings = _solve_rows(comm, graph, plan, bounds)
        t1 = time.perf_counter()
        counts = (np.diff(bounds) * n).tolist()
        dist = _gather_rows(comm, d, counts, n, plan.dtype)
        pred = _gather_rows(comm, p, counts, n, np.int32) if p is not None else None
        timings["gather"] = time.perf_counter() - t1
        return output.gathered(comm, dist, pred, timings, meta, plan)


def _solve_rows(comm, graph, plan, bounds):
    """This rank's block of rows, solved: ``(d, p, timings)``."""
    import numba

    from . import rowkernels

    rank, n = comm.Get_rank(), plan.n
    lo_row, hi_row = int(bounds[rank]), int(bounds[rank + 1])
    d = graph.matrix_rows(lo_row, hi_row, plan.dtype, plan.inf)
    p = None
    if plan.predecessors:
        rows_idx = np.arange(lo_row, hi_row, dtype=np.int32)[:, None]
        p = np.where(d < plan.inf, rows_idx, NO_PREDECESSOR).astype(np.int32)
        p[np.arange(hi_row - lo_row), np.arange(lo_row, hi_row)] = NO_PREDECESSOR
    owner = np.searchsorted(bounds, np.arange(n), side="right") - 1
    row = np.empty(n, plan.dtype)
    prow = np.empty(n, np.int32)
    clock = mpi_util.CommClock()
    previous = numba.get_num_threads()
    numba.set_num_threads(threads_for(plan, comm))
    try:
        def warm_up():                                        # compile off the clock
            rowkernels.relax_rows(d[:0], row, 0, bool(plan.clamp), clamp_floor(plan))
            if p is not None:
                rowkernels.relax_rows_pred(d[:0], p[:0], row, prow, 0, bool(plan.clamp), clamp_floor(plan))

        mpi_util.node_first(comm, warm_up)
        with clock():
            comm.Barrier()
        clock.seconds = 0.0
        t0 = time.perf_counter()
        step = max(1, n // 64)
        for k in range(n):
            root = int(owner[k])
            if rank == root:
                row[:] = d[k - lo_row]
                if p is not None:
                    prow[:] = p[k - lo_row]
            with clock():
                comm.Bcast(row, root=root)
                if p is not None:
                    comm.Bcast(prow, root=root)
            if p is None:
                rowkernels.relax_rows(d, row, k, bool(plan.clamp), clamp_floor(plan))
            else:
                rowkernels.relax_rows_pred(d, p, row, prow, k, bool(plan.clamp), clamp_floor(plan))
            if (k + 1) % step == 0 or k + 1 == n:
                plan.report(k + 1, n)
        compute = time.perf_counter() - t0
    finally:
        numba.set_num_threads(previous)
    return d, p, {"compute": compute, "comm": clock.seconds}


def _gather_rows(comm, block, counts, n, dtype):
    from mpi4py import MPI

    full = np.empty((n, n), dtype) if comm.Get_rank() == 0 else None
    recv = [full, counts, MPI._typedict[np.dtype(dtype).char]] if full is not None else None
    comm.Gatherv(np.ascontiguousarray(block), recv, root=0)
    return full
