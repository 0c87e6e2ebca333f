"""Run under mpiexec with one GPU per rank: mpi/gpu-2d and mpi/gpu-rows against the cpu backend.

Rank 0 prints one JSON line: {"cases": N, "failures": [...]}.
"""
import json
import sys
from pathlib import Path

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
folder = Path(sys.argv[1]) if len(sys.argv) > 1 else None      # where results are written rank by rank
for gi, (name, g) in enumerate(graphs):
    ref = fw.solve(g, backend="cpu", dtype="float64") if rank == 0 else None
    runs = [(a, bs, dt, {}) for a, bs in (("gpu-2d", 64), ("gpu-2d", 128), ("gpu-rows", None))
            for dt in ("int32", "float32")]
    # the result on rank 0's GPU, every rank's rows copied in through CUDA IPC
    runs += [("gpu-2d", 64, "int32", {"output": "device"}), ("gpu-rows", None, "float32", {"output": "device"})]
    # the panels through NCCL, as across nodes (on one node "auto" takes CUDA IPC copies)
    runs += [("gpu-2d", 64, "int32", {"links": "nccl"}), ("gpu-rows", None, "float32", {"links": "nccl"}),
             ("gpu-2d", 128, "float32", {"links": "ipc", "output": "device"})]
    if folder is not None:      # every rank writes its part of one .npy result
        runs += [("gpu-2d", 64, "int32", {"output_file": folder / f"g{gi}.npy", "parallel_write": True}),
                 ("gpu-rows", None, "float32", {"output_file": folder / f"r{gi}.npy", "parallel_write": True})]
    for algorithm, bs, dtype, extra in runs:
        cases += 1
        r = fw.solve(g, backend="mpi", algorithm=algorithm, dtype=dtype, block_size=bs, **extra)
        if rank != 0:
            continue
        label = f"{name} {algorithm} bs={bs} {dtype} {extra}"
        if "output_file" in extra and r.metadata.get("written_by_ranks") != MPI.COMM_WORLD.Get_size():
            failures.append(f"{label}: not written rank by rank")
        want_links = "NCCL" if extra.get("links") == "nccl" else "CUDA IPC"
        if not r.metadata.get("links", "").startswith(want_links):
            failures.append(f"{label}: the panels moved by {r.metadata.get('links')}, not {want_links}")
        on_gpu = hasattr(r.dist, "__cuda_array_interface__")
        if "output" in extra and (r.metadata.get("result") != "GPU 0 of rank 0" or not on_gpu):
            failures.append(f"{label}: the result is not on rank 0's GPU ({r.metadata.get('result')})")
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
