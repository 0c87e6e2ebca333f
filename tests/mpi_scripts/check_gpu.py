"""Run under mpiexec with one GPU per rank: mpi/gpu-2d and mpi/gpu-rows against the cpu backend.

Rank 0 prints one JSON line: {"cases": N, "failures": [...]}.
"""
import json
import sys

import numpy as np
from mpi4py import MPI

import floydwarp as fw

rank = MPI.COMM_WORLD.Get_rank()
failures, cases = [], 0
graphs = [
    ("odd n", fw.generate.erdos_renyi(301, 6, seed=1)),
    ("negative weights", fw.generate.erdos_renyi(233, 8, seed=2, potential=12)),
    ("negative cycle", fw.generate.erdos_renyi(140, 10, seed=3, weights=(-4, 10))),
    ("one vertex", fw.Graph.from_edges([], [], [], n=1)),
]
for name, g in graphs:
    ref = fw.solve(g, backend="cpu", dtype="float64") if rank == 0 else None
    for algorithm, bs in (("gpu-2d", 64), ("gpu-2d", 128), ("gpu-rows", None)):
        for dtype in ("int32", "float32"):
            cases += 1
            r = fw.solve(g, backend="mpi", algorithm=algorithm, dtype=dtype, block_size=bs)
            if rank != 0:
                continue
            label = f"{name} {algorithm} bs={bs} {dtype}"
            if set(r.negative_cycle_vertices) != set(ref.negative_cycle_vertices):
                failures.append(f"{label}: negative cycle vertices differ")
                continue
            got, want = r.to_dense().astype(np.float64), ref.to_dense()
            if ref.has_negative_cycle:
                nc = ref.negative_cycles
                keep = ~((nc.reach_to.T.astype(np.int64) @ nc.reach_from.astype(np.int64)) > 0)
                got, want = got[keep], want[keep]
            if not np.allclose(got, want, rtol=1e-5, atol=0):
                failures.append(f"{label}: distances differ")
if rank == 0:
    print(json.dumps({"cases": cases, "failures": failures, "size": MPI.COMM_WORLD.Get_size()}))
    sys.stdout.flush()
