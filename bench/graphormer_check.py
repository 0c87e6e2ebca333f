"""floydwarp.learn.graphormer against Graphormer's own Cython ``algos`` on random molecules.

Graphormer's ``graphormer/data/algos.pyx`` is built outside this repository (its code is not
ours to ship), e.g.::

    mkdir /tmp/graphormer_build && cd /tmp/graphormer_build
    git show HEAD:graphormer/data/algos.pyx > algos.pyx      # in a clone of microsoft/Graphormer
    cythonize -i -3 --directive language_level=2 algos.pyx      # or a setup.py with numpy's include dir
    python bench/graphormer_check.py --algos /tmp/graphormer_build --graphs 5000

Checked, every array bit for bit (and dtype): ``floyd_warshall`` of each graph's boolean
adjacency (and, for one graph in four, an integer adjacency of weights 1..600), then
``gen_edge_input`` on Graphormer's own path matrix, the batched ``shortest_paths``, and
``collate`` against preprocess_item + collator as Graphormer defines them (spatial_pos + 1,
edge_input cut at multi_hop_max_dist, + 1, zero padding; attn_bias).  Then the time of a
collate of ``--collate`` molecules: Graphormer's per-graph Cython + padding, vs floydwarp.
"""
from __future__ import annotations

import argparse
import importlib
import json
import sys
import time

import numpy as np


def molecules(rng, count, lo, hi):
    """(n, edge_index, edge_attr) of random molecule-like graphs: a tree plus ring closures,
    both directions, 3 integer bond features; one in ten split in two parts (unreachable
    pairs), parallel edges now and then."""
    out = []
    for _ in range(count):
        n = int(rng.integers(lo, hi + 1))
        parent = [int(rng.integers(0, v)) for v in range(1, n)]
        pairs = [(v, p) for v, p in zip(range(1, n), parent)]
        if n > 3 and rng.random() < 0.1:
            pairs = [e for e in pairs if not (e[0] == n // 2)]          # cut: two components
        for _ in range(int(rng.binomial(n, 0.15))):
            a, b = (int(x) for x in rng.integers(0, n, 2))
            if a != b:
                pairs.append((a, b))
        src = [a for a, b in pairs] + [b for a, b in pairs]
        dst = [b for a, b in pairs] + [a for a, b in pairs]
        ei = np.array([src, dst], dtype=np.int64).reshape(2, -1)
        attr = rng.integers(0, 5, size=(ei.shape[1], 3))
        out.append((n, ei, attr))
    return out


def single_emb(x, offset=512):
    return x + (1 + np.arange(x.shape[1]) * offset)


def graphormer_item(algos, n, ei, attr):
    """What Graphormer's preprocess_item computes for the shortest-path fields."""
    adj = np.zeros((n, n), dtype=bool)
    adj[ei[0], ei[1]] = True
    edge_type = np.zeros((n, n, attr.shape[1]), dtype=np.int64)
    edge_type[ei[0], ei[1]] = single_emb(attr) + 1     # of repeated pairs the last one listed stays
    M, path = algos.floyd_warshall(adj)
    edge_input = algos.gen_edge_input(np.amax(M), path, edge_type)
    return M, path, edge_input, edge_type


def graphormer_collate(items, multi_hop, spatial_max):
    """The collator's spatial_pos, edge_input and attn_bias from per-graph results."""
    size = max(M.shape[0] for M, _ in items)
    depth = max(min(multi_hop, e.shape[2]) for _, e in items)
    feats = items[0][1].shape[3]
    spatial = np.zeros((len(items), size, size), np.int64)
    edge_input = np.zeros((len(items), size, size, depth, feats), np.int64)
    bias = np.full((len(items), size + 1, size + 1), -np.inf, np.float32)
    for g, (M, e) in enumerate(items):
        n = M.shape[0]
        spatial[g, :n, :n] = M + 1
        cut = e[:, :, :multi_hop]
        edge_input[g, :n, :n, :cut.shape[2]] = cut + 1
        own = np.zeros((n + 1, n + 1), np.float32)
        own[1:, 1:][M >= spatial_max] = -np.inf
        bias[g, :n + 1, :n + 1] = own
        bias[g, n + 1:, :n + 1] = 0
    return spatial, edge_input, bias


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--algos", required=True, help="folder holding Graphormer's compiled algos module")
    ap.add_argument("--graphs", type=int, default=5000)
    ap.add_argument("--collate", type=int, default=256)
    ap.add_argument("--sizes", default="1,60")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--backend", default="cpu")
    ap.add_argument("--multi-hop", type=int, default=5, help="the timed collate's multi_hop_max_dist (Graphormer's "
                    "data set passes 5)")
    ap.add_argument("--spatial-max", type=int, default=1024, help="its spatial_pos_max (the data set's: 1024)")
    ap.add_argument("--json", help="write the result here")
    args = ap.parse_args(argv)
    sys.path.insert(0, args.algos)
    algos = importlib.import_module("algos")
    from floydwarp.learn import graphormer as fwg

    lo, hi = (int(x) for x in args.sizes.split(","))
    rng = np.random.default_rng(args.seed)
    graphs = molecules(rng, args.graphs, lo, hi)
    checked = {"floyd_warshall": 0, "weighted floyd_warshall": 0, "gen_edge_input": 0}
    for g, (n, ei, attr) in enumerate(graphs):
        M, path, edge_input, edge_type = graphormer_item(algos, n, ei, attr)
        mine = fwg.floyd_warshall(np.asarray(np.bincount(ei[0] * n + ei[1], minlength=n * n) > 0).reshape(n, n))
        assert mine[0].dtype == M.dtype and np.array_equal(mine[0], M), f"graph {g}: distances differ"
        assert np.array_equal(mine[1], path), f"graph {g}: path matrices differ"
        checked["floyd_warshall"] += 1
        got = fwg.gen_edge_input(np.amax(M), path, edge_type)
        assert got.shape == edge_input.shape and np.array_equal(got, edge_input), f"graph {g}: edge inputs differ"
        checked["gen_edge_input"] += 1
        if g % 4 == 0:
            w = np.zeros((n, n), np.int64)
            w[ei[0], ei[1]] = rng.integers(1, 600, ei.shape[1])
            ref = algos.floyd_warshall(w)
            mine = fwg.floyd_warshall(w)
            assert np.array_equal(mine[0], ref[0]) and np.array_equal(mine[1], ref[1]), f"graph {g}: weighted differ"
            checked["weighted floyd_warshall"] += 1
    # batched, from PyG-style arrays: a list of Data-like objects
    data = [_Data(n, ei, attr) for n, ei, attr in graphs]
    items = [graphormer_item(algos, n, ei, attr) for n, ei, attr in graphs]
    M_all, path_all, sizes = fwg.shortest_paths(data, backend=args.backend)
    for g, (M, path, _, _) in enumerate(items):
        n = M.shape[0]
        assert np.array_equal(_host(M_all)[g, :n, :n], M) and np.array_equal(_host(path_all)[g, :n, :n], path)
    checked["shortest_paths (batched)"] = len(items)
    for start in range(0, len(data), args.collate):
        part = slice(start, start + args.collate)
        want = graphormer_collate([(M, e) for M, _, e, _ in items[part]], 20, 20)
        got = fwg.collate(data[part], backend=args.backend)
        for name, w in zip(("spatial_pos", "edge_input", "attn_bias"), want):
            assert np.array_equal(_host(got[name]), w), f"collate of graphs {start}..: {name} differs"
    checked["collate (batched)"] = len(items)
    timing = time_collate(algos, fwg, graphs[:args.collate], args)
    result = {"graphs": args.graphs, "sizes": [lo, hi], "seed": args.seed, "checked": checked, "equal": True,
              **timing}
    print(json.dumps(result, indent=1))
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(result, fh, indent=1)


class _Data:
    """The fields of a PyG Data that collate reads."""

    def __init__(self, n, ei, attr):
        self.num_nodes, self.edge_index, self.edge_attr = n, ei, attr


def _host(a):
    return a.get() if hasattr(a, "get") else np.asarray(a)


def time_collate(algos, fwg, graphs, args):
    """Seconds of one collate of these graphs: Graphormer (preprocess_item's Cython calls per
    graph, then the collator's padding) and floydwarp (one call), medians of ``repeats``."""
    data = [_Data(n, ei, attr) for n, ei, attr in graphs]

    def theirs():
        items = [graphormer_item(algos, n, ei, attr) for n, ei, attr in graphs]
        return graphormer_collate([(M, e) for M, _, e, _ in items], args.multi_hop, args.spatial_max)

    def ours():
        out = fwg.collate(data, multi_hop_max_dist=args.multi_hop, spatial_pos_max=args.spatial_max,
                          backend=args.backend)
        if args.backend == "gpu":
            import cupy

            cupy.cuda.runtime.deviceSynchronize()
        return out

    times = {}
    for name, call in (("graphormer_s", theirs), ("floydwarp_s", ours)):
        call()
        runs = []
        for _ in range(args.repeats):
            t0 = time.perf_counter()
            call()
            runs.append(time.perf_counter() - t0)
        times[name] = float(np.median(runs))
    times["collate_graphs"] = len(graphs)
    times["multi_hop_max_dist"], times["spatial_pos_max"] = args.multi_hop, args.spatial_max
    times["speedup"] = times["graphormer_s"] / times["floydwarp_s"]
    return times


if __name__ == "__main__":
    main()
