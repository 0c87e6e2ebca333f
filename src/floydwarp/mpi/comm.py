"""MPI plumbing: the world communicator, timed collectives, and failing fast.

The MPI builds pip installs are not CUDA-aware: only host buffers go through
MPI here (device data moves through NCCL).
"""
from __future__ import annotations

import contextlib
import os
import sys
import time

#: seconds a failing rank waits, after writing its message, before MPI_Abort ends the job
ABORT_GRACE_S = 0.25


#: where MPI launchers tell a process its index among the ranks of its node (Open MPI,
#: MPICH's and Intel MPI's Hydra, Slurm's srun)
LOCAL_RANK_VARIABLES = ("OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "SLURM_LOCALID")


def launcher_local_rank(environ=os.environ) -> int | None:
    """This process's index among the ranks of its node as the MPI launcher tells it; None
    where it does not."""
    local = next((environ[v] for v in LOCAL_RANK_VARIABLES if v in environ), "")
    return int(local) if local.isdigit() else None


#: (ranks on this node, ranks in all) as MPI launchers tell them: Open MPI, MPICH's and Intel
#: MPI's Hydra
RANK_COUNT_VARIABLES = (("OMPI_COMM_WORLD_LOCAL_SIZE", "OMPI_COMM_WORLD_SIZE"), ("MPI_LOCALNRANKS", "PMI_SIZE"))


def launched_on_one_node(environ=os.environ) -> bool:
    """Whether the MPI launcher says that every rank of the job runs on this node (Slurm: a job
    of one node).  False where it says nothing."""
    if environ.get("SLURM_NNODES") == "1":
        return True
    return any(environ.get(local) is not None and environ.get(local) == environ.get(every)
               for local, every in RANK_COUNT_VARIABLES)


#: Open MPI's messaging for a job whose ranks all run on one node, where the user chose none:
#: ob1, which carries messages there through shared memory.  By default MPI_Init started UCX,
#: which took 0.24-0.27 s of each rank's start on 2 x H200 (Open MPI 4.1.6), against 0.04-0.06 s
#: with ob1 (bench/results/mpi-ipc-h200x2-s20/).
ONE_NODE_MCA = {"OMPI_MCA_pml": "ob1"}


def world(environ=os.environ):
    """MPI's world communicator; MPI is started here (the first import of ``mpi4py.MPI``), with
    :data:`ONE_NODE_MCA` where the launcher says every rank runs on this node."""
    if "mpi4py.MPI" not in sys.modules and launched_on_one_node(environ):
        for key, value in ONE_NODE_MCA.items():
            environ.setdefault(key, value)
    from mpi4py import MPI

    return MPI.COMM_WORLD


def probe() -> str | None:
    try:
        import mpi4py  # noqa: F401
    except ImportError:
        return "mpi4py is not installed: pip install 'floydwarp[mpi]' (and run under mpiexec)"
    return None


def ranks_on_this_node(comm) -> int:
    from mpi4py import MPI

    local = comm.Split_type(MPI.COMM_TYPE_SHARED)
    try:
        return local.Get_size()
    finally:
        local.Free()


def node_rank(comm) -> int:
    """This rank's index among the ranks of its node (which GPU it drives)."""
    from mpi4py import MPI

    local = comm.Split_type(MPI.COMM_TYPE_SHARED)
    try:
        return local.Get_rank()
    finally:
        local.Free()


def local_rank(comm=None) -> int:
    """This rank's index among the ranks of its node, the GPU it drives: as the MPI launcher
    tells it (MPI need not have started), else asked of ``comm`` (default: the world; collective)."""
    local = launcher_local_rank()
    return local if local is not None else node_rank(world() if comm is None else comm)


def node_first(comm, work):
    """``work()`` on every rank (collective), on each node's first rank before its others: the
    kernels it compiles land in Numba's cache, where the node's other ranks then load them
    instead of compiling the same ones at once on the same cores (check_equal.py under
    ``mpiexec -n 2`` on the 2-core box, cold cache: 99 s of CPU in 53 s, one rank alone 56).
    A rank that fails ends the job (:func:`abort_on_error`), so none waits here for ever."""
    from mpi4py import MPI

    local = comm.Split_type(MPI.COMM_TYPE_SHARED)
    try:
        first = local.Get_rank() == 0
        if first:
            work()
        local.Barrier()
        if not first:
            work()
    finally:
        local.Free()


class CommClock:
    """Accumulates the seconds spent inside MPI calls (seed 002's communication share)."""

    def __init__(self):
        self.seconds = 0.0

    @contextlib.contextmanager
    def __call__(self):
        t0 = time.perf_counter()
        try:
            yield
        finally:
            self.seconds += time.perf_counter() - t0


@contextlib.contextmanager
def abort_on_error(comm):
    """Any exception on one rank ends the whole job (no rank is left waiting in a collective).

    The message names the rank; MPI_Abort makes every process exit non-zero.
    """
    from ..errors import CheckpointError, CheckpointInterrupt

    try:
        yield
    except (CheckpointInterrupt, CheckpointError):
        raise                      # every rank stops at the same round, or refuses the same checkpoint, by agreement
    except BaseException as exc:  # noqa: BLE001 - every failure must end the job
        if comm.Get_size() == 1:
            raise
        sys.stderr.write(f"floydwarp: rank {comm.Get_rank()} of {comm.Get_size()} failed: "
                         f"{type(exc).__name__}: {exc}\n")
        sys.stderr.flush()
        # The launcher forwards a rank's output from a pipe on its own time, and MPI_Abort ends
        # it with the job: without a pause the message was lost now and then (MPICH's hydra on a
        # busy 2-core box), leaving a failed job with nothing said.
        time.sleep(ABORT_GRACE_S)
        comm.Abort(int(os.environ.get("FLOYDWARP_MPI_ABORT_CODE", "3")))


def threads_for(plan, comm) -> int:
    """Numba threads of one rank: ``plan.threads``, else the node's cores shared among its ranks."""
    import numba

    if plan.threads is not None:
        return int(plan.threads)
    share = max(1, (os.cpu_count() or 1) // ranks_on_this_node(comm))
    return min(share, numba.config.NUMBA_NUM_THREADS)


def clamp_floor(plan):
    """-INF in the run's dtype: the floor of clamped relaxations (plan.clamp)."""
    import numpy as np

    return np.dtype(plan.dtype).type(-plan.inf)
