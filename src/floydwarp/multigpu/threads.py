"""The ``multigpu`` backend's ranks as threads of the caller's process, one per GPU.

Each thread runs :func:`floydwarp.multigpu.rank.run_rank` on its GPU with a
:class:`ThreadControl` as its control plane and :class:`~.peers.PeerLinks` for the panels
(peer-to-peer copies, no NCCL).  What a process per GPU had to pay is gone: no worker starts,
no pipes, no shared files -- every thread builds its block from the caller's graph, and
delivers it by DMA into the one host result, whose pages background threads lock while the
GPUs compute (:class:`floydwarp.gpu.transfer.HostMatrix`), each band of rows as the last
round finishes it (:mod:`floydwarp.gpu.delivery`).  With ``output="device"`` (the CLI's
summary-only runs) the result stays on GPU 0 instead, and the bands go there over NVLink.
Nothing is spawned, so a script that calls ``solve(..., backend="multigpu")`` needs no
``if __name__ == "__main__":`` guard.

The threads only enqueue: kernels, copies and the events that order them run on the GPUs.
A thread that fails aborts every barrier, so the others stop at their next meeting instead
of waiting for it; the first failure is raised in the caller's thread.
"""
from __future__ import annotations

import threading
import time

import numpy as np

from ..errors import DeviceError
from ..plan import EngineOutput
from . import blocks
from . import rank as rank_engine
from .control import BrokenOff, Meeting, ThreadControl
from .partition import choose_grid
from .result import result_on_gpu
from .peers import PeerLinks, enable_peer_access

#: seconds every thread has to reach a meeting once one has
DEFAULT_TIMEOUT = 600.0
#: seconds the other threads get to stop once one has failed
STOP_GRACE = 30.0


def in_threads(target, size: int, timeout: float, on_failure=None) -> list:
    """``target(control)`` in ``size`` threads, each with its :class:`ThreadControl`; their
    results by rank.  The first thread to fail aborts the meetings (and calls ``on_failure``),
    so the others stop at their next one; its error is raised here, not their "broke off"."""
    meeting = Meeting(size, timeout)
    results, errors = [None] * size, []

    def main(rank):
        try:
            results[rank] = target(ThreadControl(meeting, rank))
        except BaseException as exc:  # noqa: BLE001 -- raised in the caller's thread below
            errors.append(exc)
            meeting.abort()
            if on_failure is not None:
                on_failure()

    threads = [threading.Thread(target=main, args=(r,), name=f"floydwarp-gpu-{r}", daemon=True)
               for r in range(size)]
    for t in threads:
        t.start()
    for rank, t in enumerate(threads):
        while t.is_alive():
            t.join(STOP_GRACE if errors else 1.0)
            if errors and t.is_alive():
                raise DeviceError(f"GPU {rank}'s thread did not stop within {STOP_GRACE:g} s of a failure "
                                  f"elsewhere ({errors[0]})")
    if errors:
        raise next((e for e in errors if not isinstance(e, BrokenOff)), errors[0])
    return results


def _rank(control, plan, source, width, shape, links, deliver_into):
    """One GPU's thread: its block, the rounds, its rows into the result as the last round ends."""
    import cupy as cp

    # The GPU memory the run used stays in CuPy's pool for the next call, as the gpu backend's
    # does (cupy.get_default_memory_pool().free_all_blocks() gives it back): allocating a
    # 1 GB block again took 40 ms of a 0.8 s call at n = 32768 on 4 GPUs.
    cp.cuda.Device(control.rank).use()
    result, timings, negative, uncapped, meta = rank_engine.run_delivered(
        control, plan, source, control.rank, width=width, grid_shape=shape, deliver_into=deliver_into, links=links)
    return {"result": result, "timings": timings, "negative": negative, "uncapped": uncapped, "metadata": meta}


def run_threads(graph, plan, width: int, grid_shape=None) -> EngineOutput:
    """Every GPU's rank in a thread of this process; the result in one host array, or on GPU 0
    (:func:`result_on_gpu`)."""
    from ..gpu import delivery
    from ..gpu.transfer import HostMatrix

    rank_engine.check_plan(plan)
    gpus = rank_engine.gpu_count(plan)
    shape = choose_grid(gpus, plan.options.get("grid") if grid_shape is None else grid_shape)
    timeout = float(plan.options.get("timeout", DEFAULT_TIMEOUT))
    t0 = time.perf_counter()
    access = enable_peer_access(range(gpus))
    dt = np.dtype(plan.dtype)
    target, where = result_on_gpu(plan, width, shape, dt)
    if target is not None:
        deliveries = delivery.DeviceRows
    else:
        target, deliveries = HostMatrix((plan.n, plan.n), dt, lock=True), delivery.Rows   # locked while they compute

    def deliver_into(L, extent, stream):
        r0, r1, c0, c1 = extent
        return deliveries(target, L, r1 - r0, c1 - c0, at=(r0, c0), stream=stream)

    peers = all(access.values())
    source = blocks.of_graph(graph, dt, plan.inf, shared_by=(shape, timeout) if peers else None)
    links = PeerLinks(*shape, timeout)
    start = time.perf_counter() - t0

    def abort():
        links.abort()
        source.abort()

    ranks = in_threads(lambda control: _rank(control, plan, source, width, shape, links, deliver_into), gpus,
                       timeout, on_failure=abort)
    first = ranks[0]
    timings = dict(first["timings"], start=start)
    meta = dict(first["metadata"], gpus=gpus, launcher="threads of this process, one per GPU",
                peer_access=peers, result=where, **rank_engine.choices(plan, grid_shape))
    return EngineOutput(first["result"], None, timings, negative_diagonal=first["negative"], pred_loops=False,
                        uncapped=first["uncapped"], metadata=meta)
