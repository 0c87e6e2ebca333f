"""How long ``floydwarp.generate.erdos_renyi`` takes, per size and density (before/after tables).

    PYTHONPATH=src python3 bench/generate_speed.py --label after --out bench/results/generate-2core.json \
        [--cases 8192:1,5,25,50,100 32768:5,25] [--repeats 3]

Run it under the exclusive lock of the box (``flock -x /tmp/fw-cpu.lock ...``).  Each case is
the median wall time of ``repeats`` graphs (seeds 0, 1, ...) after one unmeasured graph of the
case: a fresh process pays the VM's first touch of its pages once, not per graph.  Works on
older trees too (``PYTHONPATH`` of another checkout).  ``--out`` keeps the file's other
labels: one file holds the before and the after.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import time
from pathlib import Path


def parse_case(text):
    n, _, percents = text.partition(":")
    return int(n), [float(p) for p in percents.split(",")]


def measure(n, percent, repeats):
    from floydwarp.generate import erdos_renyi

    erdos_renyi(n, percent, seed=repeats)                # warm: pages, imports
    walls, edges = [], None
    for seed in range(repeats):
        t0 = time.perf_counter()
        g = erdos_renyi(n, percent, seed=seed)
        walls.append(time.perf_counter() - t0)
        edges = g.num_edges
        del g
    wall = statistics.median(walls)
    return {"n": n, "percent": percent, "edges": edges, "wall_s": wall, "walls_s": walls,
            "ns_per_edge": wall / edges * 1e9 if edges else None, "ns_per_pair": wall / (n * (n - 1)) * 1e9}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cases", nargs="+", default=["8192:1,5,25,50,100", "32768:5,25"],
                        help="N:P1,P2,...: the sizes and, for each, the percentages")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--label", required=True, help="a name for the tree measured (before/after)")
    parser.add_argument("--note", default="", help="how it was measured (the lock, the box)")
    parser.add_argument("--out", default=None)
    args = parser.parse_args(argv)
    import numpy as np

    import floydwarp as fw

    run = {"note": args.note, "machine": platform.processor() or platform.machine(), "cpus": os.cpu_count(),
           "python": platform.python_version(), "numpy": np.__version__, "floydwarp": fw.__file__,
           "repeats": args.repeats, "cases": []}
    for text in args.cases:
        n, percents = parse_case(text)
        for percent in percents:
            case = measure(n, percent, args.repeats)
            run["cases"].append(case)
            per = f"{case['ns_per_edge']:.1f} ns an edge" if case["ns_per_edge"] else "no edges"
            print(f"{args.label}: n = {n:,}, {percent:g} %: {case['edges']:,} edges in {case['wall_s']:.3f} s ({per})",
                  flush=True)
    if args.out:
        path = Path(args.out)
        data = json.loads(path.read_text()) if path.exists() else {}
        data[args.label] = run
        path.write_text(json.dumps(data, indent=1) + "\n")


if __name__ == "__main__":
    main()
