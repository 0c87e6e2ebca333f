"""The ``multigpu`` backend's ranks as threads of the caller's process, one per GPU.

Each thread runs :func:`floydwarp.multigpu.rank.run_rank` on its GPU with a
:class:`ThreadControl` as its control plane and :class:`~.peers.PeerLinks` for the panels
(peer-to-peer copies, no NCCL).  What a process per GPU had to pay is gone: no worker starts,
no pipes, no shared files -- every thread builds its block from the caller's graph, and
delivers it by DMA into the one host result, whose pages background threads lock while the
GPUs compute (:class:`floydwarp.gpu.transfer.HostMatrix`), each band of rows as the last
round finishes it (:mod:`floydwarp.gpu.delivery`).  Nothing is spawned, so a script that
calls ``solve(..., backend="multigpu")`` needs no ``if __name__ == "__main__":`` guard.

The threads only enqueue: kernels, copies and the events that order them run on the GPUs.
A thread that fails aborts every barrier, so the others stop at their next meeting instead
of waiting for it; the first failure is raised in the caller's thread.
"""
from __future__ import annotations

import threading
import time

import numpy as np

from ..plan import EngineOutput
from . import blocks
from . import rank as rank_engine
from .control import Control, reduce_values
from .partition import choose_grid
from .peers import BrokenOff, PeerLinks, enable_peer_access

#: seconds every thread has to reach a meeting once one has
DEFAULT_TIMEOUT = 600.0


class Meeting:
    """Where the threads of one run exchange small objects: a barrier and a slot each."""

    def __init__(self, size: int, timeout: float):
        self.barrier = threading.Barrier(size, timeout=timeout)
        self.slots = [None] * size

    def wait(self) -> None:
        try:
            self.barrier.wait()
        except threading.BrokenBarrierError:
            raise BrokenOff("the run on several GPUs broke off: another GPU's thread failed or did not "
                            "arrive in time") from None


class ThreadControl(Control):
    """:class:`Control` among the threads of one run (every method collective, as always)."""

    kind = "GPU"

    def __init__(self, meeting: Meeting, rank: int):
        self.meeting, self.rank, self.size = meeting, rank, len(meeting.slots)

    def _exchange(self, value) -> list:
        m = self.meeting
        m.slots[self.rank] = value
        m.wait()
        values = list(m.slots)
        m.wait()                       # nobody writes the next exchange before everyone has read
        return values

    def bcast(self, obj, root=0):
        return self._exchange(obj if self.rank == root else None)[root]

    def allreduce(self, value, op="sum"):
        return reduce_values(self._exchange(value), op)

    def gather(self, obj, root=0):
        values = self._exchange(obj)
        return values if self.rank == root else None

    def barrier(self):
        self.meeting.wait()


def _rank(control, plan, source, width, grid_shape, links, host, out):
    """One GPU's thread: its block, the rounds, its rows into ``host`` as the last round ends."""
    import cupy as cp

    from ..gpu import delivery, device

    rank = control.rank
    cp.cuda.Device(rank).use()
    rows = []

    def deliver_rows(part, grid, engine):
        r0, r1, c0, c1 = blocks.real_extent(part, grid)
        rows.append(delivery.Rows(host, engine.L, max(0, r1 - r0), max(0, c1 - c0), at=(r0, c0),
                                  stream=engine.main))
        return rows[-1]

    try:
        L, part, grid, timings, meta = rank_engine.run_rank(control, plan, source, rank, width=width,
                                                            grid_shape=grid_shape, on_rounds=deliver_rows,
                                                            links=links)
        t = time.perf_counter()
        rows[0].finish()
        negative = rank_engine.negative_anywhere(control, L, part, grid)
        timings["gather"] = control.allreduce(time.perf_counter() - t, "max")
        meta["gather_overlapped"] = rows[0].share()
        meta["device"] = device.current()["name"]
        out[rank] = {"timings": timings, "negative": negative, "metadata": meta}
    except BaseException:
        for started in rows:
            try:
                started.wait()
            except Exception:  # noqa: BLE001 -- the error that stopped the run is the one to see
                pass
        raise
    finally:
        cp.get_default_memory_pool().free_all_blocks()       # the next run, or the caller, gets the GPU


def run_threads(graph, plan, width: int, grid_shape=None) -> EngineOutput:
    """Every GPU's rank in a thread of this process; the result in one host array."""
    from ..gpu.transfer import HostMatrix

    rank_engine.check_plan(plan)
    gpus = rank_engine.gpu_count(plan)
    if grid_shape is None:
        grid_shape = plan.options.get("grid")
    shape = choose_grid(gpus, grid_shape)
    timeout = float(plan.options.get("timeout", DEFAULT_TIMEOUT))
    t0 = time.perf_counter()
    access = enable_peer_access(range(gpus))
    dt = np.dtype(plan.dtype)
    host = HostMatrix((plan.n, plan.n), dt, lock=True)       # mapped and locked while the GPUs compute
    source = blocks.of_graph(graph, dt, plan.inf)
    links = PeerLinks(*shape, timeout)
    meeting = Meeting(gpus, timeout)
    out, errors = {}, []

    def main(rank):
        try:
            _rank(ThreadControl(meeting, rank), plan, source, width, shape, links, host, out)
        except BaseException as exc:  # noqa: BLE001 -- raised in the caller's thread below
            errors.append(exc)
            links.abort()
            meeting.barrier.abort()

    threads = [threading.Thread(target=main, args=(r,), name=f"floydwarp-gpu-{r}", daemon=True)
               for r in range(gpus)]
    for t in threads:
        t.start()
    start = time.perf_counter() - t0
    for t in threads:
        t.join()
    if errors:
        # the failure that broke the run off, not the others' "broke off" that followed it
        raise next((e for e in errors if not isinstance(e, BrokenOff)), errors[0])
    first = out[0]
    timings = dict(first["timings"], start=start)
    meta = dict(first["metadata"], gpus=gpus, launcher="threads of this process, one per GPU",
                peer_access=all(access.values()))
    return EngineOutput(host.result(), None, timings, negative_diagonal=first["negative"], pred_loops=False,
                        metadata=meta)
