"""Rates of the panel product (gpu/panel.py), the PCIe link, and out-of-core runs.

    PYTHONPATH=src python3 bench/gpu_panel.py [--out FILE.json] [--size M] [--k K]
    PYTHONPATH=src python3 bench/gpu_panel.py --ooc N --cap BYTES [--incore] [--dijkstra ROWS] --out FILE.json

Without ``--ooc``: for each dtype, ``panel.minplus`` on an M x M block with K-wide panels
(median of 5, after a warm-up) as relaxations per second, and the pinned host <-> device
copy rates; the out-of-core engine chooses its panel width from these two numbers.

With ``--ooc N``: a random graph of N vertices (8 N edges, weights 1..100, int32) solved by
``fast`` under ``max_gpu_memory=BYTES`` (out of core), and with ``--incore`` also in core on
the same graph (results compared bit for bit).  The out-of-core result is checked by a
second method -- Bellman's equations over every entry (floydwarp.certify, on the GPU) --
and, with ``--dijkstra R``, R random rows against SciPy's Dijkstra; with ``--checksum`` its
Fletcher-16 checksum is recorded.
"""
from __future__ import annotations

import argparse
import json
import statistics
import time

import cupy as cp
import numpy as np

from floydwarp.gpu import ooc, panel
from floydwarp.gpu.engine import device_info
from floydwarp.numeric import inf_of


def time_minplus(dtype, m, k, repeats=5):
    rng = np.random.default_rng(0)
    c = cp.asarray(rng.integers(0, 1000, size=(m, m)).astype(dtype))
    a = cp.asarray(rng.integers(0, 1000, size=(m, k)).astype(dtype))
    b = cp.asarray(rng.integers(0, 1000, size=(k, m)).astype(dtype))
    at = panel.to_words(a)
    ninf = -inf_of(dtype) if np.dtype(dtype).kind == "i" else -np.inf
    panel.minplus(c, at, b, clamp=False, ninf=ninf)
    cp.cuda.Device().synchronize()
    times = []
    for _ in range(repeats):
        start, end = cp.cuda.Event(), cp.cuda.Event()
        start.record()
        panel.minplus(c, at, b, clamp=False, ninf=ninf)
        end.record()
        end.synchronize()
        times.append(cp.cuda.get_elapsed_time(start, end) / 1000.0)
    t = statistics.median(times)
    return {"dtype": np.dtype(dtype).name, "m": m, "k": k, "seconds": t, "rate": m * m * k / t}


def random_graph(n, degree=8, seed=0):
    import floydwarp as fw

    rng = np.random.default_rng(seed)
    m = degree * n
    return fw.Graph.from_edges(rng.integers(0, n, m), rng.integers(0, n, m), rng.integers(1, 101, m), n=n)


def solve_case(g, **options):
    import floydwarp as fw

    t0 = time.perf_counter()

    def progress(done, total):
        print(f"  round {done}/{total} at {time.perf_counter() - t0:.1f} s", flush=True)

    r = fw.solve(g, backend="gpu", dtype="int32", progress=progress if "max_gpu_memory" in options else None,
                 **options)
    wall = time.perf_counter() - t0
    n = g.n
    rec = {"n": n, "options": {k: v for k, v in options.items()}, "wall_s": wall, "compute_s": r.timings["compute"],
           "rate": n ** 3 / r.timings["compute"], "timings": r.timings,
           "metadata": {k: v for k, v in r.metadata.items() if isinstance(v, (int, float, str, bool))}}
    print(f"n={n} {options}: compute {rec['compute_s']:.2f} s = {rec['rate'] / 1e12:.2f} T relax/s "
          f"(wall {wall:.1f} s) {rec['metadata']}", flush=True)
    return r, rec


def out_of_core(args):
    import scipy.sparse
    from scipy.sparse.csgraph import dijkstra

    from floydwarp.certify import certify
    from floydwarp.checksum import checksum, format_checksum

    t0 = time.perf_counter()
    g = random_graph(args.ooc)
    report = {"graph": {"n": g.n, "edges": g.num_edges, "weights": "1..100", "seconds": time.perf_counter() - t0}}
    incore = None
    if args.incore:
        incore, report["in_core"] = solve_case(g)
    r, report["out_of_core"] = solve_case(g, max_gpu_memory=args.cap)
    if incore is not None:
        same = bool(np.array_equal(incore.dist, r.dist))
        report["bit_identical_to_in_core"] = same
        report["fraction_of_in_core_rate"] = report["out_of_core"]["rate"] / report["in_core"]["rate"]
        print(f"bit-identical to in-core: {same}; rate {report['fraction_of_in_core_rate']:.3f} of in-core")
        del incore
    t1 = time.perf_counter()
    cert = certify(g, r.dist, inf=r.inf, on_gpu=True)
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
    ap = argparse.ArgumentParser()
    ap.add_argument("--out")
    ap.add_argument("--size", type=int, default=16384)
    ap.add_argument("--k", type=int, default=4096)
    ap.add_argument("--ooc", type=int)
    ap.add_argument("--cap", type=float)
    ap.add_argument("--incore", action="store_true")
    ap.add_argument("--dijkstra", type=int, default=0)
    ap.add_argument("--checksum", action="store_true", help="also the Fletcher-16 checksum (CPU: ~1.5 s per GB)")
    args = ap.parse_args()
    dev = device_info(cp.cuda.Device().id)
    if args.ooc:
        report = {"device": dev["name"], **out_of_core(args)}
        if args.out:
            with open(args.out, "w") as fh:
                json.dump(report, fh, indent=1, default=str)
        return
    rows = [time_minplus(dt, args.size, args.k) for dt in ("int16", "int32", "float32", "int64", "float64")]
    t0 = time.perf_counter()
    pcie = ooc.pcie_bandwidth(cp.cuda.Device().id)
    for r in rows:
        print(f"minplus {r['dtype']:8s} M={r['m']} K={r['k']}: {r['seconds'] * 1e3:8.2f} ms "
              f"{r['rate'] / 1e12:6.2f} T relax/s")
    print(f"pinned PCIe: h2d {pcie['h2d'] / 1e9:.1f} GB/s, d2h {pcie['d2h'] / 1e9:.1f} GB/s "
          f"(probe {time.perf_counter() - t0:.2f} s)")
    if args.out:
        with open(args.out, "w") as fh:
            json.dump({"device": dev["name"], "minplus": rows, "pcie": pcie}, fh, indent=1)


if __name__ == "__main__":
    main()
