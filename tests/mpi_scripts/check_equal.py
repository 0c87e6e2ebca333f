"""Run under mpiexec: every mpi algorithm against the single-process reference on random graphs.

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
    ("odd n", fw.generate.erdos_renyi(61, 15, seed=1)),
    ("negative weights", fw.generate.erdos_renyi(53, 20, seed=2, potential=12)),
    ("negative cycle", fw.generate.erdos_renyi(40, 10, seed=3, weights=(-4, 10))),
    ("unreachable", fw.generate.erdos_renyi(45, 2, seed=4)),
    ("tiny", fw.Graph.from_edges([0], [1], [3], n=2)),
    ("one vertex", fw.Graph.from_edges([], [], [], n=1)),
    ("float", fw.Graph.from_edges(*np.random.default_rng(5).integers(0, 30, (2, 200)),
                                  np.random.default_rng(6).uniform(-1, 9, 200), n=30)),
]
for name, g in graphs:
    ref = fw.solve(g, backend="reference", predecessors=True) if rank == 0 else None
    for algorithm in ("blocked-2d", "rows"):
        for pred in (False, True):
            for dtype in ("auto", "float64"):
                for bs in (7, 16):
                    if algorithm == "rows" and bs == 16:
                        continue
                    cases += 1
                    r = fw.solve(g, backend="mpi", algorithm=algorithm, predecessors=pred, dtype=dtype,
                                 block_size=bs)
                    if rank != 0:
                        if r is not None:
                            failures.append(f"{name}: rank {rank} got a result")
                        continue
                    label = f"{name} {algorithm} pred={pred} dtype={dtype} bs={bs}"
                    if set(r.negative_cycle_vertices) != set(ref.negative_cycle_vertices):
                        failures.append(f"{label}: negative cycle vertices differ")
                        continue
                    if ref.has_negative_cycle:
                        continue
                    if not np.allclose(r.to_dense(), ref.to_dense(), rtol=1e-12, atol=0):
                        failures.append(f"{label}: distances differ")
                    if pred:
                        for j in range(g.n):
                            if r.reachable(0, j) and j != 0:
                                p = r.path(0, j)
                                if p[0] != 0 or p[-1] != j:
                                    failures.append(f"{label}: bad path 0->{j}: {p}")
                                    break
if rank == 0:
    print(json.dumps({"cases": cases, "failures": failures, "size": MPI.COMM_WORLD.Get_size()}))
    sys.stdout.flush()
