"""The control plane of a multi-process run: small objects between processes, never matrices.

The multi-GPU engines (:mod:`floydwarp.multigpu.rank`) move device data through NCCL;
what is left for the host is setup (NCCL unique ids), agreement (a flag every process
must know) and the end of the run (gathering small facts).  :class:`Control` is that
much and no more, so the engine is written once and runs

* under ``mpiexec`` (:class:`MpiControl`, one MPI rank per GPU), or
* in worker processes started by ``floydwarp solve --gpus N`` (:class:`PipeControl`,
  one worker per GPU, every message through the launcher in
  :mod:`floydwarp.multigpu.launch`, which also watches for dead or stuck workers).

Every method is collective: every process calls it, in the same order.
"""
from __future__ import annotations

import abc
import operator
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


class ControlTimeout(DeviceError):
    """A collective got no answer in time (the launcher or a peer is gone or stuck)."""


class PipeControl(Control):
    """:class:`Control` of one worker: every collective is a request to the launcher
    (``("collective", seq, name, root, payload)``) and its reply.

    The launcher matches the requests of all workers, checks that they are the same
    collective, and answers each; a reply that does not come within ``timeout`` seconds
    raises :class:`ControlTimeout` (the launcher is gone, or a peer never arrived)."""

    kind = "worker"

    def __init__(self, conn, rank: int, size: int, timeout: float):
        self.conn, self.rank, self.size, self.timeout = conn, int(rank), int(size), float(timeout)
        self._seq = 0

    def _call(self, name, root, payload):
        self._seq += 1
        try:
            self.conn.send(("collective", self._seq, name, root, payload))
            if not self.conn.poll(self.timeout):
                raise ControlTimeout(f"worker {self.rank}: no answer to {name} #{self._seq} from the launcher "
                                     f"within {self.timeout:g} s")
            tag, seq, value = self.conn.recv()
        except (EOFError, OSError, BrokenPipeError) as exc:
            raise ControlTimeout(f"worker {self.rank}: the launcher went away during {name} #{self._seq} "
                                 f"({type(exc).__name__})") from None
        if tag != "reply" or seq != self._seq:
            raise InternalError(f"worker {self.rank}: unexpected answer {tag!r} #{seq} to {name} #{self._seq}")
        return value

    def bcast(self, obj, root=0):
        return self._call("bcast", root, obj if self.rank == root else None)

    def allreduce(self, value, op="sum"):
        return self._call("allreduce", op, value)

    def gather(self, obj, root=0):
        return self._call("gather", root, obj)

    def barrier(self):
        self._call("barrier", None, None)


def answer_collective(name, root, payloads):
    """The launcher's side of one collective: the reply for each worker (by rank), from
    every worker's payload.  Kept apart from the pipes so it is tested on its own."""
    size = len(payloads)
    if name == "bcast":
        return [payloads[root]] * size
    if name == "allreduce":
        value = reduce_values(payloads, root)
        return [value] * size
    if name == "barrier":
        return [None] * size
    if name == "gather":
        return [list(payloads) if r == root else None for r in range(size)]
    raise InternalError(f"unknown collective {name!r}")
