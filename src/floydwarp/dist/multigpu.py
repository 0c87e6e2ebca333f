"""The ``multigpu`` backend: several GPUs of one node, no MPI launcher needed.

``floydwarp solve --gpus N`` and ``floydwarp.solve(g, backend="multigpu", gpus=N)`` run
the multi-GPU engine of :mod:`floydwarp.dist.gpu_engine` in N worker processes that
floydwarp starts itself (:mod:`floydwarp.dist.launch`), one per GPU, with NCCL between
the GPUs and a pipe-based control plane.  The start matrix and the result live in one
file-backed shared mapping (``/dev/shm`` when it has room, else the temporary folder or
``workdir=``): the launcher writes the start matrix, each worker reads its block and
writes its part of the result back, so no matrix is ever pickled.

Algorithms: ``gpu-2d`` (default: 2D blocks, wide panels, lookahead) and ``gpu-rows``
(seed 002's 1D rows, a 64-row panel per round), both distances only; ``rows-p2p``
(:mod:`floydwarp.dist.p2p`, seed 001's hw3-3 design in one process).

Options: ``gpus`` (default: every visible GPU), ``grid=(Pr, Pc)``, ``timeout`` (seconds
all workers have to reach a collective after the first, default 600), ``lookahead``,
``workdir``.
"""
from __future__ import annotations

import dataclasses
import os
import tempfile
import time

import numpy as np

from ..plan import EngineOutput
from ..registry import register, register_backend
from . import gpu_engine, nccl
from .control import Control
from .launch import DEFAULT_TIMEOUT, run_workers
from .partition import choose_grid


def probe() -> str | None:
    from ..gpu import device

    return device.probe() or nccl.probe()


register_backend("multigpu", "Several GPUs of one node: one worker process per GPU, NCCL between them "
                 "(floydwarp solve --gpus N)", probe=probe)


def shared_folder(nbytes: int, workdir=None) -> str:
    """Where the shared matrix file goes: ``workdir``, else /dev/shm with room, else the temp folder."""
    if workdir is not None:
        return str(workdir)
    shm = "/dev/shm"
    try:
        st = os.statvfs(shm)
        if st.f_bavail * st.f_frsize > nbytes * 1.1:
            return shm
    except OSError:
        pass
    return tempfile.gettempdir()


class SharedMatrix:
    """The n x n matrix as a ``.npy`` file mapped by the launcher and every worker."""

    def __init__(self, n: int, dtype, workdir=None):
        dtype = np.dtype(dtype)
        fd, self.path = tempfile.mkstemp(prefix="floydwarp-", suffix=".npy",
                                         dir=shared_folder(n * n * dtype.itemsize, workdir))
        os.close(fd)
        self.array = np.lib.format.open_memmap(self.path, mode="w+", dtype=dtype, shape=(n, n))

    def fill_from(self, graph, dtype, inf, band_bytes=gpu_engine.BAND_BYTES):
        n = self.array.shape[0]
        band = max(1, band_bytes // max(1, n * np.dtype(dtype).itemsize))
        for lo in range(0, n, band):
            hi = min(n, lo + band)
            self.array[lo:hi] = graph.matrix_rows(lo, hi, dtype, inf)
        self.array.flush()

    def release(self):
        """Remove the file; the launcher's mapping (the result) stays valid."""
        try:
            os.unlink(self.path)
        except FileNotFoundError:
            pass


def worker_run(control: Control, rank: int, plan, path: str, width: int, grid_shape):
    """One worker: its block from the shared file, the rounds on GPU ``rank``, its part
    of the result back into the file.  Returns timings and facts (small)."""
    matrix = np.load(path, mmap_mode="r+")
    L, part, grid, timings, negative, meta = gpu_engine.run_rank(
        control, plan, lambda lo, hi, c0, c1: matrix[lo:hi, c0:c1], rank, width=width, grid_shape=grid_shape)
    t = time.perf_counter()
    for lo, c0, band in gpu_engine.download_bands(L, part, grid):
        matrix[lo:lo + band.shape[0], c0:c0 + band.shape[1]] = band
    matrix.flush()
    del L
    timings["gather"] = control.allreduce(time.perf_counter() - t, "max")
    from ..gpu import device

    meta["device"] = device.current()["name"]
    return {"timings": timings, "negative": negative, "metadata": meta}


def run_multigpu(graph, plan, width: int, grid_shape=None) -> EngineOutput:
    """The launcher's side: shared matrix, workers, result."""
    gpu_engine.check_plan(plan)
    gpus = gpu_engine.gpu_count(plan)
    if grid_shape is None:
        grid_shape = plan.options.get("grid")
    choose_grid(gpus, grid_shape)                  # refuse a bad grid before starting anything
    t0 = time.perf_counter()
    shared = SharedMatrix(plan.n, plan.dtype, plan.options.get("workdir"))
    try:
        shared.fill_from(graph, plan.dtype, plan.inf)
        setup = time.perf_counter() - t0
        worker_plan = dataclasses.replace(plan, progress=None)
        results = run_workers(worker_run, (worker_plan, shared.path, width, grid_shape), gpus,
                              timeout=float(plan.options.get("timeout", DEFAULT_TIMEOUT)))
    finally:
        shared.release()
    first = results[0]
    timings = {"fill": setup, **first["timings"]}
    meta = dict(first["metadata"], gpus=gpus, launcher="floydwarp (spawned workers)")
    return EngineOutput(shared.array, None, timings, negative_diagonal=first["negative"], pred_loops=False,
                        metadata=meta)


@register("multigpu", "gpu-2d", default=True, predecessors=False, dtypes=gpu_engine.GPU_DTYPES)
def gpu_2d(graph, plan) -> EngineOutput:
    """One worker process per GPU: 2D blocks, wide panels broadcast with NCCL, lookahead (distances only)."""
    return run_multigpu(graph, plan, gpu_engine.width_of(plan))


@register("multigpu", "gpu-rows", predecessors=False, dtypes=gpu_engine.GPU_DTYPES)
def gpu_rows(graph, plan) -> EngineOutput:
    """Seed 002's 1D rows, one worker process per GPU, a 64-row panel per round via NCCL (distances only)."""
    gpus = gpu_engine.gpu_count(plan)
    return run_multigpu(graph, plan, gpu_engine.width_of(plan, gpu_engine.ROWS_WIDTH), (gpus, 1))


# seed 001's single-process design registers itself on this backend
from . import p2p  # noqa: E402,F401
