"""Run under mpiexec: a blocked-2d run stopped by SIGTERM on rank 0 saves a checkpoint on
every rank; a second run resumes it; with rank 1's shard corrupted, every rank refuses to
resume, with rank 1's reason.  Rank 0 prints one JSON line."""
import json
import os
import signal
import sys

import numpy as np
from mpi4py import MPI

import floydwarp as fw
from floydwarp.errors import CheckpointError, CheckpointInterrupt

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
MPI.COMM_WORLD.Barrier()
if rank == 1:                    # one byte of rank 1's shard: only rank 1 can see it
    shard = next(iter(__import__("pathlib").Path(folder).glob("shard-1.r*.dist.npy")))
    data = bytearray(shard.read_bytes())
    data[-1] ^= 1
    shard.write_bytes(bytes(data))
MPI.COMM_WORLD.Barrier()
try:
    fw.solve(g, resume=folder, **kw)
    refused = None
except CheckpointError as exc:
    refused = str(exc)
refusals = MPI.COMM_WORLD.gather(refused, root=0)
if rank == 0:
    print(json.dumps({"stopped": stopped,
                      "identical": bool(np.array_equal(resumed.dist, whole.dist)
                                        and np.array_equal(resumed.pred, whole.pred)),
                      "refused": refusals}))
