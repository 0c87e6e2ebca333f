"""Broadcasts between the GPUs of one process by peer-to-peer copies: the links of the
``multigpu`` backend, whose ranks are threads of the caller's process (:mod:`.threads`).

The same contract as :mod:`floydwarp.multigpu.nccl` (``grid_comms``, ``bcast``,
``drop_comms``), so ``Gpu2D`` runs unchanged on either.  A broadcast is a copy by the copy
engines (``cudaMemcpyPeerAsync``, over NVLink where the GPUs have it) from the root's array
into every other member's, ordered by CUDA events across the devices:

* the root records an event on its stream where its array is ready;
* every other member's stream waits for that event, then copies, then records its own;
* the root's stream waits for those before anything after the broadcast, so the root's
  array (a panel of its block, or a buffer it reuses) is not written again while a copy
  reads it.

No SM runs a copy, and no stream spins waiting for a peer (an NCCL kernel does both):
phase 3's persistent kernels keep every SM.  The host threads meet at a barrier twice per
broadcast, only to hand each other the events; the GPUs never wait for the host.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..errors import DeviceError
from ..grid import ProcessGrid
from .control import Meeting


class PeerGroup(Meeting):
    """The members of one communicator (a process row or column): threads of this process,
    one per GPU, meeting at a barrier; each one's slot holds its event after its copy."""

    def __init__(self, size: int, timeout: float):
        super().__init__(size, timeout)
        self.posted = None                   # the root's (pointer, device, event, bytes)


@dataclass
class PeerComms:
    """One GPU's communicators: ``(group, my index)`` of its process row and column, or None."""

    row: tuple | None
    col: tuple | None


class PeerLinks:
    """Every communicator of one run's grid, for the threads of this process to share."""

    def __init__(self, rows: int, cols: int, timeout: float):
        self.rows = [PeerGroup(cols, timeout) if cols > 1 else None for _ in range(rows)]
        self.cols = [PeerGroup(rows, timeout) if rows > 1 else None for _ in range(cols)]

    def grid_comms(self, control, grid: ProcessGrid) -> PeerComms:
        row, col = self.rows[grid.my_row], self.cols[grid.my_col]
        return PeerComms(None if row is None else (row, grid.my_col), None if col is None else (col, grid.my_row))

    def drop_comms(self, grid: ProcessGrid) -> None:
        """A GPU's run broke off: the others must not wait for it."""
        self.abort()

    def abort(self) -> None:
        for group in self.rows + self.cols:
            if group is not None:
                group.abort()

    @staticmethod
    def bcast(comm, array, root: int, stream) -> None:
        """``array`` of member ``root`` copied into every other member's ``array`` (contiguous
        device arrays of one size), in the order of each member's ``stream``."""
        import cupy as cp

        if comm is None or array.size == 0:
            return
        group, me = comm
        if me == root:
            group.posted = (array.data.ptr, array.device.id, stream.record(), array.nbytes)
        group.wait()                         # the root's event is posted
        ptr, device, ready, nbytes = group.posted
        if me != root:
            if nbytes != array.nbytes:
                raise DeviceError(f"broadcast of {nbytes} bytes into a {array.nbytes}-byte buffer")
            stream.wait_event(ready)
            cp.cuda.runtime.memcpyPeerAsync(array.data.ptr, array.device.id, ptr, device, nbytes, stream.ptr)
            group.slots[me] = stream.record()
        group.wait()                         # every copy is queued
        if me == root:
            for member, event in enumerate(group.slots):
                if member != root:
                    stream.wait_event(event)


def enable_peer_access(devices) -> dict:
    """Peer access between every pair of ``devices`` (ids) that supports it; which pairs do."""
    import cupy as cp

    rt = cp.cuda.runtime
    access = {}
    for a in devices:
        with cp.cuda.Device(a):
            for b in devices:
                if a == b:
                    continue
                access[(a, b)] = bool(rt.deviceCanAccessPeer(a, b))
                if access[(a, b)]:
                    try:
                        rt.deviceEnablePeerAccess(b)
                    except rt.CUDARuntimeError:
                        pass             # already enabled in this process
    return access
