"""Where `fast`'s time goes at one n, per dtype and plan option (phases=True, CUDA events).

    PYTHONPATH=src python3 bench/gpu_phases.py --n 16384 --dtype int16 --sweep wide_width=1024,2048,4096

Graph: ``bench.graphs.device_graph`` (25 % of the pairs, weights 1..16, built on the device), one
warm-up solve, then the median of ``--repeats`` solves per setting; prints one line per setting
(milliseconds) and writes them as JSON with ``--out``.
"""
from __future__ import annotations

import argparse
import json
import statistics

import floydwarp as fw
from floydwarp.bench.graphs import device_graph
from floydwarp.cli.bench import parse_sweep


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=16384)
    ap.add_argument("--dtype", default="int16")
    ap.add_argument("--sweep", default=None, help="NAME=V1,V2,...: one plan option, several values")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--predecessors", action="store_true")
    ap.add_argument("--real-weights", action="store_true", help="weights uniform in [1, 16) as reals")
    ap.add_argument("--out")
    args = ap.parse_args()
    g = device_graph(args.n, real=args.real_weights)
    sweep = parse_sweep(args.sweep) if args.sweep else None
    rows = []
    for options in ([{sweep["name"]: v} for v in sweep["values"]] if sweep else [{}]):
        solve = lambda: fw.solve(g, backend="gpu", algorithm="fast", dtype=args.dtype, phases=True,  # noqa: E731
                                 output="device", predecessors=args.predecessors, **options)
        solve()
        results = [solve() for _ in range(args.repeats)]
        runs = [r.timings for r in results]
        ms = {k: round(statistics.median(r[k] for r in runs) * 1e3, 2) for k in runs[0]}
        rows.append({"n": args.n, "dtype": args.dtype, "predecessors": results[0].metadata.get("predecessors"),
                     "real_weights": args.real_weights, "options": options, "ms": ms,
                     "rate": args.n ** 3 / (ms["compute"] / 1e3)})
        print(args.dtype, options, rows[-1]["predecessors"], ms, f"{rows[-1]['rate'] / 1e12:.2f} T relax/s", flush=True)
    if args.out:
        with open(args.out, "w") as fh:
            json.dump(rows, fh, indent=1)


if __name__ == "__main__":
    main()
