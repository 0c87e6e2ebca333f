"""The control plane of a multi-GPU run: small objects between its ranks, never matrices.

The multi-GPU engine (:mod:`floydwarp.multigpu.rank`) moves device data by its links (NCCL
or peer copies); what is left for the host is setup (NCCL unique ids), agreement (a flag
every rank must know) and the end of the run (gathering small facts).  :class:`Control` is
that much and no more, so the engine is written once and runs

* under ``mpiexec`` (:class:`MpiControl`, one MPI rank per GPU), or
* in threads of the caller's process, ``floydwarp solve --gpus N`` (:class:`ThreadControl`,
  one thread per GPU, :mod:`floydwarp.multigpu.threads`).

Every method is collective: every rank calls it, in the same order.
"""
from __future__ import annotations

import abc
import operator
import threading
from functools import reduce

from ..errors import DeviceError, InternalError

#: reductions :meth:`Control.allreduce` knows, by name
REDUCTIONS = {
    "sum": operator.add,
    "max": max,
    "min": min,
    "or": lambda a, b: bool(a or b),
    "and": lambda a, b: bool(a and b),
}


def reduce_values(values, op: str):
    """Combine one value per process with the named reduction (shared by every Control)."""
    try:
        fn = REDUCTIONS[op]
    except KeyError:
        raise InternalError(f"unknown reduction {op!r}; choose one of {', '.join(REDUCTIONS)}") from None
    return reduce(fn, values)


class Control(abc.ABC):
    """Collectives on small picklable objects among ``size`` processes."""

    rank: int
    size: int
    #: what a process is called in messages ("rank", "worker")
    kind: str = "process"

    @abc.abstractmethod
    def bcast(self, obj, root: int = 0):
        """``obj`` of process ``root``, on every process."""

    @abc.abstractmethod
    def allreduce(self, value, op: str = "sum"):
        """Every process's ``value`` combined with ``op`` (see :data:`REDUCTIONS`), on every process."""

    @abc.abstractmethod
    def gather(self, obj, root: int = 0):
        """The list of every process's ``obj`` (by rank) on ``root``; None elsewhere."""

    def barrier(self):
        self.allreduce(None, "or")


class MpiControl(Control):
    """:class:`Control` over an mpi4py communicator (pickled lowercase collectives)."""

    kind = "rank"

    def __init__(self, comm):
        self.comm = comm
        self.rank = comm.Get_rank()
        self.size = comm.Get_size()

    def bcast(self, obj, root=0):
        return self.comm.bcast(obj, root=root)

    def allreduce(self, value, op="sum"):
        return reduce_values(self.comm.allgather(value), op)

    def gather(self, obj, root=0):
        return self.comm.gather(obj, root=root)

    def barrier(self):
        self.comm.Barrier()


class BrokenOff(DeviceError):
    """This rank stopped because another one failed or did not arrive in time (that failure is
    the one to report)."""


class Meeting:
    """Where the threads of one run meet: a barrier, and a slot each for what they exchange."""

    def __init__(self, size: int, timeout: float):
        self.barrier = threading.Barrier(size, timeout=timeout)
        self.slots = [None] * size

    def wait(self) -> None:
        try:
            self.barrier.wait()
        except threading.BrokenBarrierError:
            raise BrokenOff("the run on several GPUs broke off: another GPU's thread failed or did not "
                            "arrive in time") from None

    def abort(self) -> None:
        self.barrier.abort()


class ThreadControl(Control):
    """:class:`Control` among the threads of one process, one per GPU (:mod:`.threads`)."""

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
