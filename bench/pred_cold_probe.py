"""First GPU solves with predecessors: time spent compiling CuPy's own kernels (NVRTC), by size.

Run twice with the same CUPY_CACHE_DIR: the first process starts from an empty cache, the second
shows what a later process still compiles for sizes it has not met.
``CUPY_CACHE_DIR=$(mktemp -d) PYTHONPATH=src python3 bench/pred_cold_probe.py 300,517,2500 NAME [dense]``
writes ``$OUT/pred-cold-NAME.json``; ``dense``: the graphs go in as dense float64 matrices (inf: no
edge) instead of edge lists.
"""
import json
import os
import sys
import time

import floydwarp as fw
from floydwarp.generate import erdos_renyi

import nvrtc_clock

compiles = nvrtc_clock.install()
rows = []
for n in [int(x) for x in sys.argv[1].split(",")]:
    g = erdos_renyi(n, 5, seed=1)
    if sys.argv[3:] == ["dense"]:
        g = g.to_matrix("float64", float("inf"))
    for pred in (False, True):
        before = len(compiles), sum(compiles)
        t = time.perf_counter()
        r = fw.solve(g, backend="gpu", predecessors=pred)
        wall = time.perf_counter() - t
        rows.append({"n": n, "pred": pred, "wall_s": wall, "nvrtc_calls": len(compiles) - before[0],
                     "nvrtc_s": sum(compiles) - before[1], "kernels": nvrtc_clock.NAMES[before[0]:],
                     "timings": r.timings})
        print(json.dumps(rows[-1]), flush=True)
json.dump(rows, open(os.path.join(os.environ.get("OUT", "."), f"pred-cold-{sys.argv[2]}.json"), "w"), indent=1)
