"""Run under mpiexec: rank 1 dies by SIGKILL in round 3 of a blocked-2d solve."""
import os
import signal
import sys

import floydwarp as fw
from floydwarp.mpi import blocked as engine

mode = sys.argv[1] if len(sys.argv) > 1 else "kill"
original = engine.BlockCyclic.close_pivot


def failing(self, r):
    if self.comm.Get_rank() == 1 and r == 3:
        if mode == "kill":
            os.kill(os.getpid(), signal.SIGKILL)
        raise RuntimeError("injected failure in round 3")
    return original(self, r)


engine.BlockCyclic.close_pivot = failing
fw.solve(fw.generate.erdos_renyi(96, 20, seed=1), backend="mpi", block_size=8)
