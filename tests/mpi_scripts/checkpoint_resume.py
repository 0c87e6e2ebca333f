"""Run under mpiexec: a blocked-2d run stopped by SIGTERM on rank 0 saves a checkpoint on
every rank; a second run resumes it.  Rank 0 prints one JSON line."""
import json
import os
import signal
import sys

import numpy as np
from mpi4py import MPI

import floydwarp as fw
from floydwarp.checkpoint import CheckpointInterrupt

folder, lookahead = sys.argv[1], sys.argv[2] == "1"
g = fw.generate.erdos_renyi(96, 20, seed=1, potential=5)
kw = dict(backend="mpi", block_size=8, predecessors=True, lookahead=lookahead, dtype="int32")
rank = MPI.COMM_WORLD.Get_rank()


def stop_after_round_3(done, total):
    if done == 3 and rank == 0:
        os.kill(os.getpid(), signal.SIGTERM)


stopped = False
try:
    fw.solve(g, checkpoint=folder, progress=stop_after_round_3, **kw)
except CheckpointInterrupt:
    stopped = True
resumed = fw.solve(g, resume=folder, **kw)
whole = fw.solve(g, **kw)
if rank == 0:
    print(json.dumps({"stopped": stopped,
                      "identical": bool(np.array_equal(resumed.dist, whole.dist)
                                        and np.array_equal(resumed.pred, whole.pred))}))
