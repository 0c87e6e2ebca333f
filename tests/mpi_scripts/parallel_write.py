"""Run under mpiexec: results written rank by rank into one .npy result (mpi backend).

    parallel_write.py FOLDER compare   every case bit-identical to single-process files
    parallel_write.py FOLDER refuse    a result "too large" for rank 0: refused without a path, written with one
    parallel_write.py FOLDER fail      rank 1 fails while writing: every rank raises, nothing is left behind

Rank 0 prints one JSON line.
"""
import json
import sys
from pathlib import Path

import numpy as np
from mpi4py import MPI

import floydwarp as fw
from floydwarp.mpi import output
from floydwarp.errors import FloydwarpError
from floydwarp.io import read_result, write_result

folder, mode = Path(sys.argv[1]), sys.argv[2]
comm = MPI.COMM_WORLD
rank = comm.Get_rank()


def same_bytes(a, b):
    return Path(a).read_bytes() == Path(b).read_bytes()


def zero_cycles():
    """Zero-weight cycles: blocked orders can leave predecessor loops (solve() then redoes in k order)."""
    rng = np.random.default_rng(7)
    src, dst = rng.integers(0, 40, (2, 300))
    return fw.Graph.from_edges(src, dst, rng.integers(0, 2, 300), n=40)


def compare():
    graphs = [
        ("odd-n", fw.generate.erdos_renyi(61, 15, seed=1)),
        ("negative-weights", fw.generate.erdos_renyi(53, 20, seed=2, potential=12)),
        ("negative-cycle", fw.generate.erdos_renyi(40, 10, seed=3, weights=(-4, 10))),
        ("zero-cycles", zero_cycles()),
        ("float", fw.Graph.from_edges(*np.random.default_rng(5).integers(0, 31, (2, 200)),
                                      np.random.default_rng(6).uniform(-1, 9, 200), n=31)),
    ]
    failures, cases, fallbacks = [], 0, []
    for name, g in graphs:
        for algorithm in ("blocked-2d", "rows"):
            for pred in (False, True):
                cases += 1
                label = f"{name} {algorithm} pred={pred}"
                out = folder / f"{name}-{algorithm}-{pred}.npy"
                kw = dict(backend="mpi", algorithm=algorithm, predecessors=pred, block_size=7)
                r = fw.solve(g, output_file=out, parallel_write=True, **kw)
                gathered = fw.solve(g, **kw)        # the same schedule, gathered to rank 0
                if rank != 0:
                    if r is not None:
                        failures.append(f"{label}: rank {rank} got a result")
                    continue
                single = fw.solve(g, backend="cpu", predecessors=pred, dtype=r.dtype.name)
                write_result(single, folder / "single.npy")
                write_result(gathered, folder / "gathered.npy")
                # integers: exact whatever the order; floats round by the schedule (same as the gathered run)
                expected = folder / ("single.npy" if r.dtype.kind == "i" else "gathered.npy")
                if not same_bytes(out, expected):
                    failures.append(f"{label}: distances differ from {expected.name}")
                if pred and not same_bytes(folder / f"{out.stem}.pred.npy", folder / "gathered.pred.npy"):
                    failures.append(f"{label}: predecessors differ from the gathered run's file")
                if not isinstance(r.dist, np.memmap) or r.dist.flags.writeable:
                    failures.append(f"{label}: Result.dist is not a read-only memmap")
                if r.metadata.get("output_file") != str(out):
                    failures.append(f"{label}: metadata does not name the file")
                if sorted(r.negative_cycle_vertices) != sorted(single.negative_cycle_vertices):
                    failures.append(f"{label}: negative cycle vertices differ")
                if "pred_fallback" in r.metadata:
                    fallbacks.append(label)
                back = read_result(out)
                # zero-weight cycles may send blocked-2d with predecessors to its k-order fallback, rows
                # through a negative cycle float distances depend on the order: compare reachability there
                close = (np.array_equal(np.isfinite(back.to_dense()), np.isfinite(single.to_dense()))
                         if single.has_negative_cycle else np.allclose(back.to_dense(), single.to_dense()))
                if not (close and back.n == g.n and back.algorithm in (algorithm, "rows")
                        and (back.pred is not None) == pred):
                    failures.append(f"{label}: read_result does not give the result back")
                if pred and not single.has_negative_cycle:
                    for j in range(g.n):
                        if r.reachable(0, j) and r.path(0, j)[-1] != j:
                            failures.append(f"{label}: bad route 0 -> {j}")
                            break
    leftovers = sorted(p.name for p in folder.iterdir() if p.name.startswith("."))
    return {"cases": cases, "failures": failures, "leftovers": leftovers, "fallbacks": fallbacks}


def refuse():
    output.available_memory = lambda: 10_000          # "rank 0 has 10 kB": nothing gathers
    g = fw.generate.erdos_renyi(80, 10, seed=1)
    try:
        fw.solve(g, backend="mpi", block_size=8)
        message = None
    except FloydwarpError as exc:
        message = str(exc)
    messages = comm.gather(message, root=0)
    out = folder / "big.npy"
    results = {}
    for algorithm in ("blocked-2d", "rows"):
        r = fw.solve(g, backend="mpi", algorithm=algorithm, block_size=8, output_file=out)
        if rank == 0:
            results[algorithm] = bool(r.metadata.get("output_file") == str(out)
                                      and np.array_equal(read_result(out).dist, fw.solve(g, backend="cpu").dist))
    chain = fw.Graph.from_edges(np.arange(39), np.arange(1, 40), np.full(39, 1000), n=40)   # paths up to 39,000
    try:
        fw.solve(chain, backend="mpi", dtype="int16", output_file=folder / "narrow.npy", parallel_write=True)
        narrow = None
    except FloydwarpError as exc:
        narrow = str(exc)
    return {"messages": messages, "written": results, "narrow": comm.gather(narrow, root=0),
            "narrow_written": (folder / "narrow.npy").exists()}


def fail():
    real = output._write_own_parts

    def broken(temps, parts):
        if rank == 1:
            raise OSError(28, "No space left on device")
        return real(temps, parts)

    output._write_own_parts = broken
    g = fw.generate.erdos_renyi(70, 10, seed=1)
    out = folder / "failed.npy"
    message = None
    try:
        fw.solve(g, backend="mpi", predecessors=True, block_size=8, output_file=out, parallel_write=True)
    except FloydwarpError as exc:
        message = str(exc)
    messages = comm.gather(message, root=0)
    comm.Barrier()
    return {"messages": messages, "files": sorted(p.name for p in folder.iterdir())}


summary = {"compare": compare, "refuse": refuse, "fail": fail}[mode]()
if rank == 0:
    print(json.dumps({"size": comm.Get_size(), **summary}))
    sys.stdout.flush()
