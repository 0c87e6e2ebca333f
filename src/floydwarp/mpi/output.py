"""Where an MPI run's result goes: gathered to rank 0, or written rank by rank into one file.

Gathering needs the whole n x n result (and its predecessors) in rank 0's memory, a few times
over while it is assembled and checked.  When that does not fit, every rank writes its own tiles
(or rows) straight into one result in the memory-mappable ``.npy`` layout of
:mod:`floydwarp.io.result_files` (``NAME.npy``, ``NAME.pred.npy``, ``NAME.json``):

1. rank 0 makes the temporary files beside the target (:func:`~floydwarp.io.result_files.npy_temp_files`),
   writes the ``.npy`` headers and sizes the files; their names go to every rank;
2. every rank opens them as ``r+`` memory maps, writes its parts, flushes and fsyncs;
3. every rank checks its band of rows (predecessor loops), then rank 0 writes the JSON sidecar and
   renames the set into place (sidecar last), and the others wait for it.

A step that fails on any rank fails on every rank with the same :class:`FloydwarpError` (naming the
file and the rank), after rank 0 has removed the temporary files: the target is then untouched.
The files must be on a file system every rank sees (checked: a rank that cannot open rank 0's
temporary file says so).

Since the whole matrix never exists in one process, the rules ``solve()`` applies to a gathered
matrix (unreachable entries to exactly INF without a predecessor, the float64 redo of an integer
run that met a negative cycle, the dtype check, the predecessor-loop check) are applied here, by
every rank to its own parts.
"""
from __future__ import annotations

import contextlib
import dataclasses
import os
import time
from pathlib import Path

import numpy as np

from .. import numeric
from ..cpu.storage import available_memory
from ..errors import FloydwarpError
from ..io import check_result_path, result_files
from ..plan import EngineOutput
from ..predecessors import NO_PREDECESSOR, has_loops

#: Gather only when rank 0 has this many times the result's bytes available: the padded
#: assembly buffer, the trimmed copy and solve()'s masks all exist at once.
GATHER_SAFETY = 3
#: Bytes of predecessor rows a rank reads at a time when it checks them for loops.
CHECK_CHUNK_BYTES = 64 << 20


@dataclasses.dataclass
class Part:
    """A block of the result held by one rank: global rows r0:r1, columns c0:c1 (views into its
    tiles or rows, so the rules applied to a part change the rank's own matrices)."""

    r0: int
    r1: int
    c0: int
    c1: int
    dist: np.ndarray
    pred: np.ndarray | None = None


class WriteFailed(FloydwarpError):
    """A step of the parallel write failed on some rank; raised on every rank alike."""


# --------------------------------------------------------------------------- gather or write?
def result_bytes(n: int, dtype, predecessors: bool) -> int:
    return int(n) * int(n) * (np.dtype(dtype).itemsize + (4 if predecessors else 0))


#: the solve options of every mpi algorithm (mpi/engine.py declares them)
OPTIONS = {
    "parallel_write": "True: write into output_file even when rank 0 could gather; False: never (default: "
                      "only when the result does not fit in rank 0's memory)",
}


def choose_target(comm, plan) -> Path | None:
    """Decide, before any computing and alike on every rank, where the result goes.

    ``None``: gather to rank 0.  A path: every rank writes its part there.  Options (``solve(...,
    output_file=PATH, parallel_write=...)``): ``parallel_write=None`` (default) writes in parallel
    only when the result does not fit in rank 0's memory, ``True`` always (needs ``output_file``),
    ``False`` never.  A result that does not fit with no ``output_file`` is refused here, on every
    rank, with the same message.
    """
    path = plan.options.get("output_file")
    force = plan.options.get("parallel_write")
    path = None if path is None else _checked_path(Path(path))
    if force and path is None:
        raise FloydwarpError("parallel_write=True needs output_file=PATH.npy (where every rank writes its part)")
    if force is not None:
        return path if force else None
    need = result_bytes(plan.n, plan.dtype, plan.predecessors)
    available = comm.bcast(available_memory() if comm.Get_rank() == 0 else None, root=0)
    if available is None or need * GATHER_SAFETY <= available:
        return None
    if path is None:
        raise FloydwarpError(
            f"the result ({need:,} bytes for n = {plan.n:,}, {np.dtype(plan.dtype).name}"
            f"{' with predecessors' if plan.predecessors else ''}) cannot be gathered to rank 0: it has "
            f"{available:,} bytes available, {GATHER_SAFETY}x the result is needed; give an output .npy path "
            f"(solve(..., output_file='out.npy'), or -o out.npy with --distributed) and every rank writes its part")
    return path


def _checked_path(path: Path) -> Path:
    if path.suffix.lower() != ".npy":
        raise FloydwarpError(f"{path}: ranks write the .npy result layout; name the output NAME.npy")
    check_result_path(path)
    return path


# --------------------------------------------------------------------------- the rules of solve(), per part
def finish_in_file(comm, graph, plan, path, compute, *, k_order: bool, metadata: dict) -> EngineOutput:
    """Run ``compute(plan) -> (parts, timings)`` on every rank, apply solve()'s post-run rules to
    the parts, write them into ``path`` and return rank 0's read-only memory maps of it.

    Collective: every rank calls it with its own parts.
    """
    from mpi4py import MPI

    stats = graph.weight_stats()
    parts, timings = compute(plan)
    negative = comm.allreduce(any(_negative_diagonal(p) for p in parts), op=MPI.LOR)
    if negative and plan.clamp:
        parts, timings = _redo_in_float64(compute, plan, parts, timings)
    for p in parts:
        numeric.normalize_unreachable(p.dist, plan.dtype, stats)
        if p.pred is not None:
            np.copyto(p.pred, NO_PREDECESSOR, where=p.dist >= plan.inf)
    if plan.verify_after:
        # an explicit dtype only checkable after the run: check before writing
        if not comm.allreduce(all(numeric.verify_uncapped(p.dist, plan.inf, stats.max_weight) for p in parts),
                              op=MPI.LAND):
            raise numeric.too_narrow(plan.dtype, stats)
    t0 = time.perf_counter()
    check_loops = plan.predecessors and not negative and not k_order
    meta = {**metadata, "output_file": str(path), "written_by_ranks": comm.Get_size()}
    sidecar = dict(labels=graph.labels, backend=plan.backend, algorithm=plan.algorithm,
                   num_edges=graph.num_edges, metadata=meta)
    loops = write_parts(comm, path, plan.n, plan.dtype, plan.inf, parts, has_pred=plan.predecessors,
                        check_loops=check_loops, sidecar={**sidecar, "timings": timings})
    timings = {**timings, "write": time.perf_counter() - t0}
    dist = pred = None
    if comm.Get_rank() == 0:
        dist_path, pred_path, _ = result_files.npy_paths(path)
        dist = np.load(dist_path, mmap_mode="r")
        pred = np.load(pred_path, mmap_mode="r") if plan.predecessors else None
    return EngineOutput(dist, pred, timings, negative_diagonal=negative,
                        pred_loops=loops if check_loops else False, metadata=meta)


def _negative_diagonal(p: Part) -> bool:
    lo, hi = max(p.r0, p.c0), min(p.r1, p.c1)
    if lo >= hi:
        return False
    idx = np.arange(lo, hi)
    return bool((p.dist[idx - p.r0, idx - p.c0] < 0).any())


def _redo_in_float64(compute, plan, parts, timings):
    """A clamped integer run met a negative cycle: recompute in float64 and cast back into the
    integer parts (why: see ``solve._rerun_in_float64``)."""
    plan64 = dataclasses.replace(plan, dtype=np.dtype("float64"), inf=np.inf, clamp=False)
    parts64, timings64 = compute(plan64)
    for p, q in zip(parts, parts64):
        p.dist[...] = numeric.from_float64(q.dist, plan.dtype, plan.inf)
        if p.pred is not None:
            p.pred[...] = q.pred
    merged = {k: timings.get(k, 0.0) + timings64.get(k, 0.0) for k in {*timings, *timings64}}
    return parts, merged


# --------------------------------------------------------------------------- the write itself
def write_parts(comm, path, n, dtype, inf, parts, *, has_pred, check_loops=False, sidecar=None) -> bool:
    """Every rank writes its parts into the ``.npy`` result layout at ``path`` (collective).

    Returns whether any predecessor row loops (when ``check_loops``), known on every rank.
    """
    failure, loops = None, False
    try:
        if comm.Get_rank() == 0:
            with contextlib.ExitStack() as stack:
                temps, text = _agree(comm, path, "create", lambda: _create(stack, path, n, dtype, inf, has_pred,
                                                                            sidecar or {}))[0]
                loops = _fill(comm, path, temps, n, parts, check_loops)
                try:
                    temps[2].write_text(text)
                except OSError as exc:
                    raise WriteFailed(f"cannot write {path}: rank 0 could not write its sidecar: {exc}") from None
        else:
            temps, _ = _agree(comm, path, "create", lambda: None)[0]
            loops = _fill(comm, path, temps, n, parts, check_loops)
    except WriteFailed as exc:
        failure = str(exc)
    except Exception as exc:  # noqa: BLE001 - rank 0 renaming the files into place
        failure = f"cannot write {path}: rank {comm.Get_rank()} could not finish it: {type(exc).__name__}: {exc}"
    # rank 0 has renamed the files into place, or removed them, before anyone leaves
    failures = [f for f in comm.allgather(failure) if f]
    if failures:
        raise WriteFailed(failures[0])
    return loops


def _create(stack, path, n, dtype, inf, has_pred, sidecar):
    """Rank 0: the temporary files (removed if the write fails), their .npy headers, sized (sparse
    until the ranks fill them), and the sidecar's text."""
    meta_path = result_files.npy_paths(path)[2]
    text = result_files.npy_sidecar(meta_path, n=n, dtype=dtype, inf=inf, has_pred=has_pred, **sidecar)
    temps = stack.enter_context(result_files.npy_temp_files(path, has_pred=has_pred))
    np.lib.format.open_memmap(temps[0], mode="w+", dtype=np.dtype(dtype), shape=(n, n)).flush()
    if has_pred:
        np.lib.format.open_memmap(temps[1], mode="w+", dtype=np.int32, shape=(n, n)).flush()
    return temps, text


def _fill(comm, path, temps, n, parts, check_loops) -> bool:
    _agree(comm, path, "write its part of", lambda: _write_own_parts(temps, parts))
    if not check_loops:
        return False
    bad = _agree(comm, path, "check the predecessors in", lambda: _band_has_loops(comm, temps[1], n))
    return any(bad)


def _write_own_parts(temps, parts):
    """Write this rank's parts into the memory-mapped temporary files, then flush them to disk."""
    for tmp, field in zip(temps[:2], ("dist", "pred")):
        if tmp is None:
            continue
        try:
            mm = np.load(tmp, mmap_mode="r+")
        except FileNotFoundError:
            raise FloydwarpError(f"cannot open {tmp}, which rank 0 created: parallel writes need a "
                                 f"folder every rank sees (a shared file system)") from None
        for p in parts:
            mm[p.r0:p.r1, p.c0:p.c1] = getattr(p, field)
        mm.flush()
        del mm
        fd = os.open(tmp, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _band_has_loops(comm, pred_tmp, n) -> bool:
    """Whether a predecessor row in this rank's band of rows loops (each row is checked alone)."""
    from ..passes import pred_rows_with_cycles

    size, rank = comm.Get_size(), comm.Get_rank()
    lo, hi = n * rank // size, n * (rank + 1) // size
    pred = np.load(pred_tmp, mmap_mode="r")
    step = max(1, CHECK_CHUNK_BYTES // (4 * max(n, 1)))
    for s in range(lo, hi, step):
        if pred_rows_with_cycles(np.ascontiguousarray(pred[s:min(hi, s + step)]), s).any():
            return True
    return False


def _agree(comm, path, what, step):
    """Run one step on every rank; if it failed anywhere, raise the same WriteFailed on every rank.

    Returns every rank's result of the step."""
    try:
        outcome = (True, step())
    except Exception as exc:  # noqa: BLE001 - reported on every rank below
        outcome = (False, f"{type(exc).__name__}: {exc}")
    everyone = comm.allgather(outcome)
    failed = [(rank, msg) for rank, (ok, msg) in enumerate(everyone) if not ok]
    if failed:
        rank, msg = failed[0]
        more = f" (and {len(failed) - 1} more ranks)" if len(failed) > 1 else ""
        raise WriteFailed(f"cannot write {path}: rank {rank} could not {what} it{more}: {msg}")
    return [value for _, value in everyone]


def gathered(comm, dist, pred, timings, meta, plan) -> EngineOutput:
    """Rank 0 gets the matrices; every rank learns what solve() decides on: whether a diagonal
    went negative, whether the predecessors loop, and whether no distance was capped
    (:func:`uncapped_everywhere`)."""
    negative = bool(dist is not None and np.any(np.diagonal(dist) < 0))
    loops = bool(pred is not None and not negative and has_loops(pred))
    negative, loops, uncapped = comm.bcast((negative, loops, _uncapped(dist, plan)), root=0)
    return EngineOutput(dist, pred, timings, negative_diagonal=negative, pred_loops=loops, uncapped=uncapped,
                        metadata=meta)


def uncapped_everywhere(comm, dist, plan) -> bool | None:
    """Rank 0's check of a result gathered there (:func:`_uncapped`), told to every rank (no
    collective where the plan checks nothing)."""
    return comm.bcast(_uncapped(dist, plan), root=0) if plan.verify_after else None


def _uncapped(dist, plan) -> bool | None:
    """Whether no distance of a result in an explicit dtype only checkable after the run was
    capped (numeric.verify_uncapped); None where the plan checks nothing, or where this rank
    holds no matrix.  Told to every rank, so that solve() refuses the dtype on every rank: rank 0
    alone raised, and the others returned as if the run had succeeded (a program going on to a
    collective call hung)."""
    if not plan.verify_after or dist is None:
        return None
    return bool(numeric.verify_uncapped(dist, plan.inf, plan.stats.max_weight))
