"""The out-of-core GPU run's start (issue #22): the host matrix allocated, written and page-locked.

    PYTHONPATH=src python3 bench/ooc_start_probe.py [--n 49152] [--cap 2e9] [--repeats 2] [--out FILE.json]

checked_run.py's random graph (8 n edges, weights 1..100, int32), solved out of core on one GPU
under ``max_gpu_memory=--cap``, R times after a small warm-up: the wall time of each call and its
stages (``setup`` is the host matrix: allocated, the start matrix written, page-locked).
Works on older trees too, for before/after tables.
"""
from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from checked_run import random_graph


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=49152)
    ap.add_argument("--cap", type=float, default=2e9)
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--out")
    args = ap.parse_args()
    import floydwarp as fw

    fw.solve(random_graph(4096), backend="gpu", dtype="int32", max_gpu_memory=2e8)      # compile off the clock
    g = random_graph(args.n)
    records = []
    for _ in range(args.repeats):
        t0 = time.perf_counter()
        r = fw.solve(g, backend="gpu", dtype="int32", max_gpu_memory=args.cap)
        rec = {"n": args.n, "cap": args.cap, "wall_s": time.perf_counter() - t0, "stages_s": dict(r.timings),
               "out_of_core": r.metadata.get("out_of_core"), "host_memory": r.metadata.get("host_memory")}
        print(json.dumps(rec), flush=True)
        records.append(rec)
        del r
    if args.out:
        Path(args.out).write_text(json.dumps({"records": records}, indent=1))


if __name__ == "__main__":
    main()
