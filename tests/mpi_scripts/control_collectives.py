"""Run under mpiexec: MpiControl's collectives (the multi-GPU engines' control plane) on CPU ranks.

Rank 0 prints one JSON line with what every collective returned.
"""
import json

from mpi4py import MPI

from floydwarp.multigpu.control import MpiControl

control = MpiControl(MPI.COMM_WORLD)
rank, size = control.rank, control.size
token = control.bcast({"ids": [1, 2]} if rank == 0 else None, root=0)
late = control.bcast(f"from {rank}", root=size - 1)
total = control.allreduce(rank + 1, "sum")
flag = control.allreduce(rank == size - 1, "or")
gathered = control.gather(rank * 10, root=0)
control.barrier()
if rank == 0:
    print(json.dumps({"size": size, "token": token, "late": late, "total": total, "flag": flag,
                      "gathered": gathered, "kind": control.kind}), flush=True)
