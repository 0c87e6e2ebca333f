"""Solve one large random graph and check the result by methods that share nothing with Floyd-Warshall.

    PYTHONPATH=src python3 bench/checked_run.py --n N [--backend gpu|multigpu|cpu] [--gpus G]
        [--cap BYTES] [--incore] [--dijkstra ROWS] [--checksum] [--out FILE.json]

A random graph of N vertices (8 N edges, weights 1..100, int32) solved by ``--backend``
(``gpu``: ``fast``, out of core under ``--cap`` = ``max_gpu_memory``; ``multigpu``: ``gpu-2d``
on ``--gpus`` GPUs).  With ``--incore`` the same graph is also solved in core on one GPU
and the results compared bit for bit.  The result is checked by Bellman's equations over
every entry (floydwarp.certify; on the GPU when there is one) and, with ``--dijkstra R``,
R random rows against SciPy's Dijkstra; ``--checksum`` adds its Fletcher-16 checksum.
``--backend cpu --n 600`` is a dry run of the whole script on a machine without a GPU.
"""
from __future__ import annotations

import argparse
import json
import time

import numpy as np

def random_graph(n, degree=8, seed=0):
    import floydwarp as fw

    rng = np.random.default_rng(seed)
    m = degree * n
    return fw.Graph.from_edges(rng.integers(0, n, m), rng.integers(0, n, m), rng.integers(1, 101, m), n=n)


def solve_case(g, backend="gpu", **options):
    import floydwarp as fw

    t0 = time.perf_counter()

    def progress(done, total):
        print(f"  round {done}/{total} at {time.perf_counter() - t0:.1f} s", flush=True)

    r = fw.solve(g, backend=backend, dtype="int32", progress=progress, **options)
    wall = time.perf_counter() - t0
    n = g.n
    rec = {"n": n, "backend": f"{r.backend}/{r.algorithm}", "options": dict(options), "wall_s": wall,
           "compute_s": r.timings["compute"],
           "rate": n ** 3 / r.timings["compute"], "timings": r.timings,
           "metadata": {k: v for k, v in r.metadata.items() if isinstance(v, (int, float, str, bool))}}
    print(f"n={n} {options}: compute {rec['compute_s']:.2f} s = {rec['rate'] / 1e12:.2f} T relax/s "
          f"(wall {wall:.1f} s) {rec['metadata']}", flush=True)
    return r, rec


def checked_run(args):
    import scipy.sparse
    from scipy.sparse.csgraph import dijkstra

    from floydwarp.certify import certify
    from floydwarp.checksum import checksum, format_checksum

    t0 = time.perf_counter()
    g = random_graph(args.n)
    report = {"graph": {"n": g.n, "edges": g.num_edges, "weights": "1..100", "seconds": time.perf_counter() - t0}}
    incore = None
    if args.incore:
        incore, report["in_core"] = solve_case(g)
    options = {"gpus": args.gpus} if args.backend == "multigpu" else {}
    if args.cap:
        options["max_gpu_memory"] = args.cap
    r, report["run"] = solve_case(g, args.backend, **options)
    if incore is not None:
        same = bool(np.array_equal(incore.dist, r.dist))
        report["bit_identical_to_in_core"] = same
        report["fraction_of_in_core_rate"] = report["run"]["rate"] / report["in_core"]["rate"]
        print(f"bit-identical to in-core: {same}; rate {report['fraction_of_in_core_rate']:.3f} of in-core")
        del incore
    t1 = time.perf_counter()
    cert = certify(g, r.dist, inf=r.inf, on_gpu=args.backend != "cpu")
    report["certificate"] = {"ok": cert.ok, "mismatches": cert.mismatches, "unique": cert.unique,
                             "seconds": time.perf_counter() - t1}
    print(f"Bellman certificate: {report['certificate']}", flush=True)
    if args.checksum:
        t1 = time.perf_counter()
        report["fletcher16"] = format_checksum(checksum(r.dist, inf=r.inf))
        print(f"checksum {report['fletcher16']} ({time.perf_counter() - t1:.1f} s)", flush=True)
    if args.dijkstra:
        rows = np.random.default_rng(1).choice(g.n, args.dijkstra, replace=False)
        t1 = time.perf_counter()
        src, dst, w = g.edges()
        weights = scipy.sparse.csr_matrix((w.astype(np.float64), (src, dst)), shape=(g.n, g.n))
        ref = dijkstra(weights, indices=rows)
        got = r.dist[rows].astype(np.float64)
        got[r.dist[rows] >= r.inf] = np.inf
        report["dijkstra_rows"] = {"rows": int(len(rows)), "equal": bool(np.array_equal(got, ref)),
                                   "seconds": time.perf_counter() - t1}
        print(f"Dijkstra rows: {report['dijkstra_rows']}", flush=True)
    return report


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, required=True)
    ap.add_argument("--backend", default="gpu", choices=("gpu", "multigpu", "cpu"))
    ap.add_argument("--gpus", type=int, default=1)
    ap.add_argument("--cap", type=float, help="max_gpu_memory in bytes (gpu: out of core beyond it)")
    ap.add_argument("--incore", action="store_true", help="also solve in core on one GPU and compare")
    ap.add_argument("--dijkstra", type=int, default=0)
    ap.add_argument("--checksum", action="store_true", help="also the Fletcher-16 checksum (CPU: ~1.5 s per GB)")
    ap.add_argument("--out")
    args = ap.parse_args()
    report = checked_run(args)
    if args.out:
        with open(args.out, "w") as fh:
            json.dump(report, fh, indent=1, default=str)


if __name__ == "__main__":
    main()
