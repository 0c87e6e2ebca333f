"""Where the time of every NetworkX function on the floydwarp backend goes, stage by stage.

    PYTHONPATH=src python3 bench/networkx_stages.py --n 2000,5000 --graph sparse,dense --out stages.json

For each n, graph and function of ``floydwarp.nx_backend.FUNCTIONS`` on the study's graph
(``floydwarp bench networkx``'s ``make_graph``: connected, unweighted, ``sparse`` m = 10 n or
``dense`` p %): a first call on a fresh graph (it reads the edges) and a second one (NetworkX's
cached conversion, the edges already read), each split by ``floydwarp.nx_backend.stages``
into convert / solve (``solve.compute``: the kernels) / reduce / build, plus ``dispatch``: the
rest of the call (NetworkX's dispatching, the backend's argument checks).  Functions that
return n^2 Python objects are skipped above ``--max-pairs`` (their dicts alone take minutes
and tens of GB).  Prints milliseconds; ``--out`` gets the JSON, rewritten after every function
(a run stopped early keeps what it measured).
"""
from __future__ import annotations

import argparse
import json
import time
import warnings

import networkx as nx

from floydwarp.bench.studies.networkx import make_graph
from floydwarp.nx_backend import FUNCTIONS
from floydwarp.nx_backend.graph import SOLVER_BACKEND
from floydwarp.nx_backend.stages import recording

#: functions whose answer holds n^2 Python objects (distances or paths)
QUADRATIC = ("floyd_warshall", "floyd_warshall_predecessor_and_distance", "johnson",
             "all_pairs_shortest_path_length", "all_pairs_dijkstra_path_length",
             "all_pairs_bellman_ford_path_length")
STAGES = ("convert", "solve", "solve.compute", "reduce", "build")


def _call(name, G):
    value = getattr(nx, name)(G, backend="floydwarp")
    if hasattr(value, "__next__"):          # the all_pairs_* generators: drain them
        for _ in value:
            pass


def _timed(name, G) -> dict:
    with recording() as seconds:
        t0 = time.perf_counter()
        _call(name, G)
        total = time.perf_counter() - t0
    staged = sum(v for k, v in seconds.items() if "." not in k)
    return {"total": total, **seconds, "dispatch": total - staged}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", default="2000", help="sizes, comma-separated")
    ap.add_argument("--graph", default="sparse", help="sparse, dense or both, comma-separated")
    ap.add_argument("--percent", type=float, default=50.0)
    ap.add_argument("--functions", default=",".join(FUNCTIONS))
    ap.add_argument("--max-pairs", type=float, default=4e7, help="skip the n^2-object functions above this n^2")
    ap.add_argument("--out")
    args = ap.parse_args()
    warnings.filterwarnings("ignore", message="Note: conversions to backend graphs")
    _call("closeness_centrality", make_graph("sparse", 64, args.percent, 0))     # kernels compiled off the clock
    records = []
    for n in map(int, args.n.split(",")):
        for kind in args.graph.split(","):
            G = make_graph(kind, n, args.percent, 0)
            for name in args.functions.split(","):
                if name in QUADRATIC and n ** 2 > args.max_pairs:
                    print(f"{name:40s} n={n}: skipped, n^2 = {n ** 2:.2g} Python objects > --max-pairs")
                    continue
                G.__networkx_cache__.clear()        # a fresh conversion: the first call reads the edges
                first = _timed(name, G)
                second = _timed(name, G)
                records.append({"function": name, "n": n, "graph": kind, "edges": G.number_of_edges(),
                                "solver_backend": SOLVER_BACKEND, "first_s": first, "second_s": second})
                for label, t in (("1st", first), ("2nd", second)):
                    cells = "  ".join(f"{k} {t.get(k, 0.0) * 1e3:8.1f}" for k in (*STAGES, "dispatch"))
                    print(f"{name:36s} {kind} n={n} {label} total {t['total'] * 1e3:9.1f} ms | {cells}", flush=True)
                if args.out:
                    with open(args.out, "w") as f:
                        json.dump({"records": records}, f, indent=1)
            del G


if __name__ == "__main__":
    main()
