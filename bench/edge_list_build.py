"""The graph a user's edge arrays make: ``fw.Graph.from_edges`` on millions of edges (issue #22).

    PYTHONPATH=src python3 bench/edge_list_build.py [--n 32768] [-p 1] [--repeats R] [--out FILE.json]

An Erdos-Renyi graph (``-p`` percent of the pairs, weights 1..16, seed 1) as host edge arrays,
in the generator's order (sorted by source and target) and in a random one (as files and data
frames often hold them, so the graph must sort them), with int64 and with int32 ids and
weights: the median and best of R calls, and the edges a second.  Then the shuffled edges as
a text edge list (``source target weight`` lines, written once to a temporary folder) read by
``floydwarp.io.read_graph``: the CLI's ``floydwarp solve FILE`` input stage; once with the
integer weights, once with real ones (the weights over 3, to 4 decimals).  Works on older trees
too, for before/after tables (run it under ``flock -x /tmp/fw-cpu.lock`` on the dev box).
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=32768)
    ap.add_argument("-p", "--percent", type=float, default=1.0)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--out")
    args = ap.parse_args()
    import floydwarp as fw
    from floydwarp.io import read_graph

    src, dst, w = (np.ascontiguousarray(a) for a in fw.generate.erdos_renyi(args.n, args.percent, seed=1).edges())
    shuffle = np.random.default_rng(1).permutation(src.size)
    records = []
    for order in ("sorted", "shuffled"):
        arrays = (src, dst, w) if order == "sorted" else (src[shuffle], dst[shuffle], w[shuffle])
        for types in ("int64", "int32"):
            s, d, x = (a.astype(types) for a in arrays)
            fw.Graph.from_edges(s[:1000], d[:1000], x[:1000], n=args.n)        # compile or load the passes
            times = []
            for _ in range(args.repeats):
                t0 = time.perf_counter()
                graph = fw.Graph.from_edges(s, d, x, n=args.n)
                times.append(time.perf_counter() - t0)
                del graph
            rec = {"order": order, "types": types, "edges": int(src.size), "median_s": statistics.median(times),
                   "best_s": min(times), "all_s": times,
                   "edges_per_s": src.size / statistics.median(times)}
            print(json.dumps(rec), flush=True)
            records.append(rec)
    s, d, x = src[shuffle], dst[shuffle], w[shuffle]
    for types, weights, fmt in (("text file", x, "%d"), ("text file, real weights", np.round(x / 3, 4), "%.4f")):
        with tempfile.TemporaryDirectory() as folder:
            path = Path(folder) / "edges.txt"
            np.savetxt(path, np.stack([s, d, weights], axis=1), fmt=["%d", "%d", fmt])
            read_graph(path)                                                  # compile or load the passes
            times = []
            for _ in range(args.repeats):
                t0 = time.perf_counter()
                graph = read_graph(path)
                times.append(time.perf_counter() - t0)
                del graph
            rec = {"order": "shuffled", "types": types, "edges": int(src.size), "bytes": path.stat().st_size,
                   "median_s": statistics.median(times), "best_s": min(times), "all_s": times,
                   "edges_per_s": src.size / statistics.median(times),
                   "MB_per_s": path.stat().st_size / statistics.median(times) / 1e6}
            print(json.dumps(rec), flush=True)
            records.append(rec)
    env = {"host": platform.node(), "cpus": os.cpu_count(), "python": platform.python_version(),
           "numpy": np.__version__, "floydwarp": fw.__file__, "n": args.n, "percent": args.percent}
    if args.out:
        Path(args.out).write_text(json.dumps({"environment": env, "records": records}, indent=1))


if __name__ == "__main__":
    main()
