"""The user's wall time on one GPU or several, end to end (issue #22): medians and ratios to compute.

    PYTHONPATH=src python3 bench/e2e_gpu.py [--sizes 32768] [--dtypes int32] [-p 5] [--repeats R]
                                            [--gpus 1,2] [--order sorted|shuffled] [--input edges|dense]
                                            [--npy DIR] [--out FILE.json]

``--gpus 1`` is ``backend="gpu"``; ``--gpus N`` (N > 1) is ``backend="multigpu", gpus=N``, whose
first call in the process also starts the workers (its "start" stage; later calls reuse them);
``--gpus wN`` is the multigpu backend with N workers, also N = 1 (its worker path measured on one GPU).

For each n and dtype, an Erdos-Renyi graph (``-p`` percent of the pairs, weights 1..16, seed 1)
is made once as host edge arrays (``--order shuffled``: in a random order, as files and data
frames often hold them, where the generator's come sorted by source and target); then, R times,
the user's call from those arrays to a host ``Result``: ``fw.Graph.from_edges`` ("graph") and
``fw.solve(graph, backend="gpu")`` ("whole"), with every stage of ``Result.timings``;
``user_ratio_to_compute`` is the two together over the compute time.  ``--input dense``: the
same graph as a host float64 matrix (``inf``: no edge), ``fw.Graph.from_dense`` being "graph".
With ``--npy DIR`` also the CLI's ``-o out.npy`` path in process: the same solve with the
result kept on the device, then ``write_result`` into DIR (device -> pinned -> file), against
writing the host result.

Works on older trees too (stages they do not report are absent), for before/after tables.
"""
from __future__ import annotations

import argparse
import json
import platform
import statistics
import time
from pathlib import Path

import numpy as np


def median_stages(stages):
    keys = list(dict.fromkeys(k for s in stages for k in s))
    return {k: statistics.median(s.get(k, 0.0) for s in stages) for k in keys}


def solver(spec):
    """The solve() arguments of a ``--gpus`` entry: "1", "N" or "wN" (see the module docstring)."""
    if spec == "1":
        return {"backend": "gpu"}
    return {"backend": "multigpu", "gpus": int(spec.lstrip("w"))}


def case(fw, n, dtype, percent, repeats, npy_dir, gpus="1", order="sorted", source="edges"):
    from floydwarp.io import write_result

    g = fw.generate.erdos_renyi(n, percent, seed=1)
    edges = g.num_edges
    if source == "dense":
        matrix = g.to_matrix("float64", np.inf)

        def build():
            return fw.Graph.from_dense(matrix)
    else:
        src, dst, w = (np.ascontiguousarray(a) for a in g.edges())
        if order == "shuffled":
            shuffle = np.random.default_rng(1).permutation(src.size)
            src, dst, w = src[shuffle], dst[shuffle], w[shuffle]
            del shuffle

        def build():
            return fw.Graph.from_edges(src, dst, w, n=n)
    del g
    how = solver(gpus)
    walls, builds, stages = [], [], []
    for _ in range(repeats):
        t0 = time.perf_counter()
        graph = build()
        t1 = time.perf_counter()
        r = fw.solve(graph, dtype=dtype, **how)
        t2 = time.perf_counter()
        builds.append(t1 - t0)
        walls.append(t2 - t1)
        stages.append(dict(r.timings))
        metadata = {k: v for k, v in r.metadata.items() if isinstance(v, (int, float, str, list))}
        del r, graph
    med = median_stages(stages)
    whole = statistics.median(walls)
    rec = {"n": n, "dtype": dtype, "percent": percent, "edges": int(edges), "input": source, "order": order,
           "repeats": repeats, **how, "graph_s": statistics.median(builds), "whole_s": whole, "all_s": walls,
           "graph_all_s": builds, "stages_s": med, "stages_first_s": stages[0], "metadata": metadata,
           "ratio_to_compute": whole / med["compute"],
           "user_ratio_to_compute": (statistics.median(builds) + whole) / med["compute"],
           "result_bytes": n * n * np.dtype(dtype).itemsize,
           "d2h_GBps": n * n * np.dtype(dtype).itemsize / med["d2h"] / 1e9 if med.get("d2h") else None}
    if npy_dir is not None:
        graph = build()
        out = {}
        for where in ("host", "device"):
            path = Path(npy_dir) / f"e2e-{n}-{where}.npy"
            t0 = time.perf_counter()
            r = fw.solve(graph, dtype=dtype, output=where, **how)
            t1 = time.perf_counter()
            write_result(r, path)
            t2 = time.perf_counter()
            out[where] = {"solve_s": t1 - t0, "write_s": t2 - t1, "total_s": t2 - t0}
            del r
            for f in Path(npy_dir).glob(f"e2e-{n}-{where}*"):
                f.unlink()
        rec["to_npy"] = out
    return rec


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="32768")
    ap.add_argument("--dtypes", default="int32")
    ap.add_argument("-p", "--percent", type=float, default=5.0)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--gpus", default="1", help="GPU counts: 1 = backend gpu, N > 1 or wN = multigpu with N workers")
    ap.add_argument("--order", choices=("sorted", "shuffled"), default="sorted",
                    help="the edge arrays' order: the generator's (by source and target) or a random one")
    ap.add_argument("--input", choices=("edges", "dense"), default="edges",
                    help="the user's graph: host edge arrays, or a host float64 matrix")
    ap.add_argument("--npy")
    ap.add_argument("--out")
    args = ap.parse_args()
    import cupy as cp

    import floydwarp as fw

    records = []
    for gpus in args.gpus.split(","):
        for dtype in args.dtypes.split(","):
            # compile (and, for several GPUs, start the workers) on a small graph first; the first
            # full-size call's record ("all_s"[0]) still holds what a new process pays beyond that
            fw.solve(fw.generate.erdos_renyi(300, 5, seed=1), dtype=dtype, **solver(gpus))
        for n in (int(s) for s in args.sizes.split(",")):
            for dtype in args.dtypes.split(","):
                rec = case(fw, n, dtype, args.percent, args.repeats, args.npy, gpus, args.order, args.input)
                print(json.dumps(rec), flush=True)
                records.append(rec)
    env = {"device": cp.cuda.runtime.getDeviceProperties(0)["name"].decode(), "host": platform.node(),
           "python": platform.python_version(), "cupy": cp.__version__, "numpy": np.__version__}
    if args.out:
        Path(args.out).write_text(json.dumps({"environment": env, "records": records}, indent=1))


if __name__ == "__main__":
    main()
