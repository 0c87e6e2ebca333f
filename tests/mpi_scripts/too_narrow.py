"""mpiexec -n P: an explicit dtype that a run proves too narrow is refused on every rank, by every
algorithm, where rank 0 alone raised and the others returned None as if the run had succeeded."""
import json

from mpi4py import MPI

import floydwarp as fw
from floydwarp import registry

comm = MPI.COMM_WORLD
g = fw.Graph.from_edges([0, 1], [1, 2], [10000, 10000], n=3)        # 20000: beyond int16's 16383
outcomes = {}
for impl in registry.algorithms("mpi"):
    if impl.algorithm in ("gpu-2d", "gpu-rows"):
        continue                                                      # GPUs: tests/mpi_scripts/check_gpu.py
    try:
        fw.solve(g, backend="mpi", algorithm=impl.algorithm, dtype="int16")
        outcomes[impl.algorithm] = "returned"
    except fw.DtypeError as exc:
        outcomes[impl.algorithm] = "too narrow" if "too narrow" in str(exc) else str(exc)
everyone = comm.gather(outcomes, root=0)
if comm.Get_rank() == 0:
    print(json.dumps({"ranks": everyone}))
