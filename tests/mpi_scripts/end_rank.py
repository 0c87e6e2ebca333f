"""Run under mpiexec: each rank ends as a successful ``floydwarp solve --distributed`` rank does
(floydwarp.cli._end_mpi_rank), the ranks at different times, as they do after unequal work."""
import sys
import time

from mpi4py import MPI

from floydwarp.cli import _end_mpi_rank

rank = MPI.COMM_WORLD.Get_rank()
time.sleep(0.15 * rank)
print(f"rank {rank} done", flush=True)
_end_mpi_rank()
print(f"rank {rank} went on after its end", flush=True)
sys.exit(7)
