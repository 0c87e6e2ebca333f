"""The panels of the mpi GPU algorithms between the ranks of one node: copies through CUDA IPC
instead of NCCL (``links="auto"`` picks them where every rank runs on one node).

Why: on 2 x H200, NCCL between processes cost an MPI job about 0.9 s that the threads of
``--gpus N`` do not pay.  It spent 0.54-0.62 s loading its kernels into each rank's context
and 0.32-0.34 s connecting the channels of a communicator
(bench/results/mpi-launch-h200x2-s19/).  CUDA IPC needs neither, and its copies run on the
copy engines, leaving every SM to phase 3, as :mod:`floydwarp.multigpu.peers` does between
threads.  The contract is that of :mod:`floydwarp.multigpu.nccl`: ``grid_comms``, ``bcast``
and ``drop_comms``.  So ``Gpu2D`` runs unchanged on it.

A broadcast in a group (a process row or column, an MPI communicator of its own) goes in five
steps:

1. The root records its *ready* event (an interprocess event) on its stream. Over MPI, as
   host data, it sends the IPC handle of the allocation that holds its array, the array's
   offset in it and its size.
2. Each member's stream waits for that event. It then copies from the root's memory, which the
   member opens once per allocation, and records its own *done* event.
3. The members tell the root, by an MPI gather, that their copies are queued.
4. The root's stream waits for their done events. So the root's array is not written again
   while a copy reads it.
5. A barrier ends the broadcast.

Each rank records the same two events at every broadcast.  Without the barrier, a member
could record its done event again, in a later broadcast, before a slow root had queued its wait
on the earlier record: ranks that are neither that root nor the next ones never wait for it.
"""
from __future__ import annotations

import contextlib

from ..errors import DeviceError, FloydwarpError
from ..multigpu import nccl
from ..multigpu.control import MpiControl
from ..multigpu.peers import PeerComms
from . import ipc

#: cudaEventDisableTiming | cudaEventInterprocess
EVENT_FLAGS = 0x2 | 0x4
#: cudaMemcpyDefault: the driver finds both devices from the addresses (unified addressing)
COPY_DEFAULT = 4
#: the ``links`` option's values
CHOICES = ("auto", "ipc", "nccl")
OPTIONS = {"links": "how panels move between the ranks' GPUs: ipc (CUDA IPC copies; every rank on one node), "
                    "nccl, or auto (default: ipc where every rank is on one node and its GPUs reach each other)"}


class IpcGroup:
    """One communicator of CUDA IPC broadcasts: the ranks of ``control`` (an :class:`MpiControl`
    over a process row or column), each with its GPU's ``runtime`` (CuPy's).
    ``allocation_of(ptr)`` gives ``(base, size)`` of the allocation that holds ``ptr``."""

    def __init__(self, control, runtime, allocation_of=ipc.allocation_of):
        self.control, self.rt, self.allocation_of = control, runtime, allocation_of
        rt = runtime
        self.ready, self.done = rt.eventCreateWithFlags(EVENT_FLAGS), rt.eventCreateWithFlags(EVENT_FLAGS)
        mine = (rt.ipcGetEventHandle(self.ready), rt.ipcGetEventHandle(self.done))
        every = control.bcast(control.gather(mine, root=0), root=0)
        others = [r for r in range(control.size) if r != control.rank]
        self.peer_ready = {r: rt.ipcOpenEventHandle(every[r][0]) for r in others}
        self.peer_done = {r: rt.ipcOpenEventHandle(every[r][1]) for r in others}
        #: base address of an allocation of this rank -> its IPC handle
        self.exported = {}
        #: IPC handle of a peer's allocation -> where it is mapped in this process
        self.opened = {}

    def broadcast(self, array, root: int, stream) -> None:
        """``array`` of rank ``root`` copied into every other rank's ``array`` (contiguous device
        arrays of one size), in the order of each rank's ``stream``."""
        rt, control = self.rt, self.control
        if control.rank == root:
            base, handle = self._export(array.data.ptr)
            rt.eventRecord(self.ready, stream.ptr)
            control.bcast((handle, array.data.ptr - base, array.nbytes), root=root)
        else:
            handle, offset, nbytes = control.bcast(None, root=root)
            if nbytes != array.nbytes:
                raise DeviceError(f"broadcast of {nbytes} bytes into a {array.nbytes}-byte buffer")
            rt.streamWaitEvent(stream.ptr, self.peer_ready[root], 0)
            rt.memcpyAsync(array.data.ptr, self._open(handle) + offset, nbytes, COPY_DEFAULT, stream.ptr)
            rt.eventRecord(self.done, stream.ptr)
        control.gather(None, root=root)             # every copy is queued
        if control.rank == root:
            for event in self.peer_done.values():
                rt.streamWaitEvent(stream.ptr, event, 0)
        control.barrier()                           # ... and waited for: the events may be recorded again

    def _export(self, ptr: int) -> tuple[int, bytes]:
        base, _ = self.allocation_of(ptr)
        if base not in self.exported:
            try:
                self.exported[base] = bytes(self.rt.ipcGetMemHandle(base))
            except Exception as exc:  # noqa: BLE001 -- CuPy's CUDARuntimeError, named in ours
                raise DeviceError(f"CUDA IPC cannot export this GPU memory ({exc}); pass links='nccl'") from exc
        return base, self.exported[base]

    def _open(self, handle: bytes) -> int:
        if handle not in self.opened:
            self.opened[handle] = self.rt.ipcOpenMemHandle(handle)
        return self.opened[handle]

    def close(self) -> None:
        """Unmap the peers' memory and destroy the events (every rank's copies have ended)."""
        rt = self.rt
        for ptr in self.opened.values():
            rt.ipcCloseMemHandle(ptr)
        for event in [*self.peer_ready.values(), *self.peer_done.values(), self.ready, self.done]:
            rt.eventDestroy(event)
        self.opened, self.peer_ready, self.peer_done = {}, {}, {}


class IpcLinks:
    """The links of one run under ``mpiexec`` on one node: a :class:`IpcGroup` for this rank's
    process row and one for its column (made by :meth:`grid_comms`, collectively), closed with
    :meth:`close` once every rank's rounds have ended."""

    name = "CUDA IPC copies between the ranks' GPUs (one node)"

    def __init__(self):
        self.groups, self.comms = [], []

    def grid_comms(self, control, grid) -> PeerComms:
        import cupy as cp

        def group(split, color, key):
            if split <= 1:
                return None
            comm = control.comm.Split(color, key)
            self.comms.append(comm)
            self.groups.append(IpcGroup(MpiControl(comm), cp.cuda.runtime))
            return self.groups[-1]

        return PeerComms(row=group(grid.cols, grid.my_row, grid.my_col), col=group(grid.rows, grid.my_col, grid.my_row))

    @staticmethod
    def bcast(comm, array, root: int, stream) -> None:
        if comm is None or array.size == 0:
            return
        if not array.flags.c_contiguous:
            raise FloydwarpError("CUDA IPC broadcasts need contiguous buffers")
        comm.broadcast(array, root, stream)

    def drop_comms(self, grid) -> None:
        """A rank's run broke off: the job ends (:func:`floydwarp.mpi.comm.abort_on_error`)."""

    def close(self) -> None:
        for group in self.groups:
            group.close()
        for comm in self.comms:
            comm.Free()
        self.groups, self.comms = [], []


class NcclLinks:
    """:mod:`floydwarp.multigpu.nccl`'s communicators, kept by the process between runs."""

    name = "NCCL"
    grid_comms = staticmethod(nccl.grid_comms)
    bcast = staticmethod(nccl.bcast)
    drop_comms = staticmethod(nccl.drop_comms)

    def close(self) -> None:
        """NCCL's communicators outlive the run: a job's next solve reuses them."""


def reach_each_other(comm, device: int) -> bool:
    """Whether this rank's GPU and the GPUs of the other ranks, every one on this node (ordinals
    0 .. ranks - 1), can copy to each other directly, on every rank (collective)."""
    import cupy as cp

    others = (other for other in range(comm.Get_size()) if other != device)
    mine = all(cp.cuda.runtime.deviceCanAccessPeer(device, other) for other in others)
    return bool(min(comm.allgather(mine)))


@contextlib.contextmanager
def links_for(comm, plan, device: int, one_node: bool):
    """The links of a run (collective: every rank gets the same kind), closed after it:
    ``links=`` (:data:`CHOICES`) as the plan asks, ``auto`` being ``ipc`` where every rank runs on
    one node (``one_node``) and its GPUs reach each other, else ``nccl``."""
    choice = plan.options.get("links") or "auto"
    if choice not in CHOICES:
        raise FloydwarpError(f"links must be one of {', '.join(CHOICES)}, got {choice!r}")
    if choice == "ipc" and not one_node:
        raise FloydwarpError("links='ipc' needs every MPI rank on one node; across nodes use links='nccl'")
    if choice == "auto":
        choice = "ipc" if one_node and reach_each_other(comm, device) else "nccl"
    links = IpcLinks() if choice == "ipc" else NcclLinks()
    yield links
    comm.Barrier()                  # no rank's copies read this rank's memory any more
    links.close()
