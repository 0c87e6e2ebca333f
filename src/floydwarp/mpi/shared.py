"""The mpi backend's GPU result in memory that every rank of one node maps.

When every rank runs on one node, the n x n result is a file in ``/dev/shm`` (else the
temporary folder, or ``workdir=``) that rank 0 creates and every rank maps: each rank copies
its block into it by DMA from its GPU (the rows of its block page-locked while the rounds
run, :meth:`floydwarp.gpu.transfer.HostMatrix.over`; each band as the last round finishes it,
:mod:`floydwarp.gpu.delivery`), and rank 0 keeps the mapping as the result once the file's
name is gone.  No byte of the result passes through MPI: gathering 3 x 1 GB through MPI
messages took 3.15 s at n = 32768 on four GPUs.
"""
from __future__ import annotations

import os
import tempfile

import numpy as np

from . import comm as mpi_util


def on_one_node(comm) -> bool:
    """Whether every rank of ``comm`` runs on this node."""
    return mpi_util.ranks_on_this_node(comm) == comm.Get_size()


def shared_folder(nbytes: int, workdir=None) -> str:
    """Where a shared file goes: ``workdir``, else /dev/shm with room, else the temp folder."""
    if workdir is not None:
        return str(workdir)
    try:
        st = os.statvfs("/dev/shm")
        if st.f_bavail * st.f_frsize > nbytes * 1.1:
            return "/dev/shm"
    except OSError:
        pass
    return tempfile.gettempdir()


class NodeResult:
    """The n x n result as one file mapped by every rank of the node (collective)."""

    def __init__(self, comm, n: int, dtype, workdir=None):
        self.comm = comm
        dtype = np.dtype(dtype)
        path = None
        if comm.Get_rank() == 0:
            fd, path = tempfile.mkstemp(prefix="floydwarp-result-", suffix=".bin",
                                        dir=shared_folder(n * n * dtype.itemsize, workdir))
            os.ftruncate(fd, n * n * dtype.itemsize)
            os.close(fd)
        self.path = comm.bcast(path, root=0)
        self.array = np.memmap(self.path, dtype=dtype, mode="r+", shape=(n, n)) if n else np.zeros((0, 0), dtype)

    def finish(self):
        """Once every rank's block is in (collective): rank 0's result; None elsewhere."""
        self.comm.Barrier()
        if self.comm.Get_rank() != 0:
            self.array = None
            return None
        try:
            os.unlink(self.path)             # the mapping stays: the memory goes with the result
        except FileNotFoundError:
            pass
        return self.array

    def discard(self):
        """A run that broke off: the file goes (rank 0), the mappings with the ranks."""
        if self.comm.Get_rank() == 0 and self.path:
            try:
                os.unlink(self.path)
            except FileNotFoundError:
                pass
