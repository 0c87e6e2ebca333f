"""The ``multigpu`` backend: several GPUs of one node, no launcher needed.

``floydwarp solve --gpus N`` and ``floydwarp.solve(g, backend="multigpu", gpus=N)`` run the
multi-GPU engine of :mod:`floydwarp.multigpu.rank` on N GPUs from N threads of the caller's
process (:mod:`floydwarp.multigpu.threads`), one per GPU: each builds its block of the start
matrix on its GPU from the caller's graph (:mod:`floydwarp.multigpu.blocks`), the panels go
between the GPUs by peer-to-peer copies (:mod:`floydwarp.multigpu.peers`: copy engines and
NVLink, no SMs), and each GPU copies its block by DMA into the one host result, whose pages
background threads lock while the GPUs compute.  Nothing is spawned: a script needs no
``if __name__ == "__main__":`` guard, and there is no worker to start or feed.

Algorithms: ``gpu-2d`` (default: 2D blocks, wide panels, lookahead) and ``gpu-rows``
(seed 002's 1D rows, a 64-row panel per round), both distances only; ``rows-p2p``
(:mod:`floydwarp.multigpu.p2p`, seed 001's hw3-3 design).

Options: ``gpus`` (default: every visible GPU), ``grid=(Pr, Pc)``, ``block_size`` (the panel
width), ``timeout`` (seconds every GPU's thread has to reach a meeting once one has, default
600), ``lookahead``, ``timeline`` (the per-round timeline in the result's metadata),
``rest_bands``.
"""
from __future__ import annotations

from ..options import GRID
from ..plan import EngineOutput
from ..registry import register, register_backend
from . import p2p, rank, threads  # noqa: F401 -- p2p registers rows-p2p

#: the solve options of the algorithms run by a thread a GPU
THREAD_OPTIONS = {
    **rank.OPTIONS,
    "timeout": f"seconds every GPU's thread has to reach a meeting once one has (default {threads.DEFAULT_TIMEOUT:g})",
}


def probe() -> str | None:
    from ..gpu import device

    return device.probe()


register_backend("multigpu", "Several GPUs of one node: a thread per GPU, panels by peer-to-peer copies "
                 "(floydwarp solve --gpus N)", probe=probe,
                 options={"gpus": "how many GPUs (default: every visible one)"})


@register("multigpu", "gpu-2d", default=True, predecessors=False, dtypes=rank.GPU_DTYPES,
          options={**THREAD_OPTIONS, **GRID})
def gpu_2d(graph, plan) -> EngineOutput:
    """A thread per GPU: 2D blocks, wide panels copied peer to peer, lookahead (distances only)."""
    return threads.run_threads(graph, plan, rank.width_of(plan))


@register("multigpu", "gpu-rows", predecessors=False, dtypes=rank.GPU_DTYPES, options=THREAD_OPTIONS)
def gpu_rows(graph, plan) -> EngineOutput:
    """Seed 002's 1D rows, a thread per GPU, a 64-row panel copied peer to peer per round (distances only)."""
    return threads.run_threads(graph, plan, rank.width_of(plan, rank.ROWS_WIDTH), (rank.gpu_count(plan), 1))
