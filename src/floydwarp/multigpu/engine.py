"""The ``multigpu`` backend: several GPUs of one node, no MPI launcher needed.

``floydwarp solve --gpus N`` and ``floydwarp.solve(g, backend="multigpu", gpus=N)`` run
the multi-GPU engine of :mod:`floydwarp.multigpu.rank` in N worker processes that
floydwarp starts itself (:mod:`floydwarp.multigpu.launch`), one per GPU, with NCCL between
the GPUs and a pipe-based control plane.  The workers and their NCCL communicators are
started by the first run of a process and kept for the later ones.  Data go through
shared files (``/dev/shm`` when it has room, else the temporary folder or ``workdir=``),
never pickled: an edge list in its compact bus types, from which each worker builds its
block on its GPU (:mod:`floydwarp.multigpu.blocks`), and the n x n result, into which each
worker copies its block by DMA: its threads page-lock the worker's rows of the file while
the GPU computes (pages not locked in time go through pinned staging).  A dense graph's
start matrix goes into that file first, and the workers read their blocks from it.

Algorithms: ``gpu-2d`` (default: 2D blocks, wide panels, lookahead) and ``gpu-rows``
(seed 002's 1D rows, a 64-row panel per round), both distances only; ``rows-p2p``
(:mod:`floydwarp.multigpu.p2p`, seed 001's hw3-3 design in one process).

Options: ``gpus`` (default: every visible GPU), ``grid=(Pr, Pc)``, ``timeout`` (seconds
all workers have to reach a collective after the first, default 600), ``lookahead``,
``workdir``.
"""
from __future__ import annotations

from ..plan import EngineOutput
from ..registry import register, register_backend
from . import nccl, p2p, rank, threads, workers  # noqa: F401 -- p2p registers rows-p2p


def probe() -> str | None:
    from ..gpu import device

    return device.probe() or nccl.probe()


register_backend("multigpu", "Several GPUs of one node: one worker process per GPU, NCCL between them "
                 "(floydwarp solve --gpus N)", probe=probe)


@register("multigpu", "gpu-2d", default=True, predecessors=False, dtypes=rank.GPU_DTYPES)
def gpu_2d(graph, plan) -> EngineOutput:
    """One worker process per GPU: 2D blocks, wide panels broadcast with NCCL, lookahead (distances only)."""
    return _launcher(plan)(graph, plan, rank.width_of(plan))


@register("multigpu", "gpu-rows", predecessors=False, dtypes=rank.GPU_DTYPES)
def gpu_rows(graph, plan) -> EngineOutput:
    """Seed 002's 1D rows, one worker process per GPU, a 64-row panel per round via NCCL (distances only)."""
    gpus = rank.gpu_count(plan)
    return _launcher(plan)(graph, plan, rank.width_of(plan, rank.ROWS_WIDTH), (gpus, 1))


def _launcher(plan):
    return workers.run_multigpu if plan.options.get("launcher") == "processes" else threads.run_threads
