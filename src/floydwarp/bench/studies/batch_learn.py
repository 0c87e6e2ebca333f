"""The ``batch`` study's graph-learning section: the drop-ins against what their users run
today, on batches of ``-O collate=B`` molecule-like graphs (default 256, a training batch).

``graphormer collate``
    :func:`floydwarp.learn.graphormer.collate` (spatial_pos, edge_input, attn_bias; 3
    integer bond features) vs Graphormer's own path: its Cython ``algos.floyd_warshall`` and
    ``algos.gen_edge_input`` per graph as ``preprocess_item`` calls them, then the
    collator's padding (NumPy here); with ``-O graphormer=PATH`` only (skipped otherwise).
    Checked equal.  ``multi_hop_max_dist`` and ``spatial_pos_max`` are what Graphormer's
    training data set passes its collator (graphormer/data/dataset.py: 5 and 1024; ``-O
    multi_hop=D -O spatial_pos_max=M``).
``dgl shortest_dist``
    :func:`floydwarp.learn.dgl.shortest_dist_batch` with paths vs the per-graph loop DGL's
    ``shortest_dist(g, return_paths=True)`` runs (SciPy's ``shortest_path`` with
    predecessors, then each path walked back and looked up as edge IDs in Python); DGL
    itself is not needed.  Distances checked equal.
``pyg transform``
    :class:`floydwarp.pyg.ShortestPathDistance` on a ``Batch`` (needs torch_geometric:
    skipped without it) vs the SciPy loop.
"""
from __future__ import annotations

import statistics
import time

import numpy as np

COLLATE = 256
#: what Graphormer's BatchedDataDataset passes its collator
MULTI_HOP, SPATIAL_POS_MAX = 5, 1024


def records(edge_index, ptr, backends, config, graphormer, graphormer_note, emit) -> list:
    """The section's records for the first ``collate`` graphs of a batch."""
    count = min(int(config.options.get("collate", COLLATE)), ptr.size - 1)
    ptr = ptr[:count + 1]
    edge_index = edge_index[:, :int(np.searchsorted(edge_index[0], ptr[-1]))]
    sizes = np.diff(ptr)
    rng = np.random.default_rng(config.seed)
    attr = rng.integers(0, 5, size=(edge_index.shape[1], 3))
    base = {"graphs": count, "n_min": int(sizes.min(initial=0)), "n_max": int(sizes.max(initial=0)),
            "edges": int(edge_index.shape[1]), "relaxations": float((sizes.astype(np.float64) ** 3).sum())}
    out = []
    out += _graphormer(edge_index, ptr, attr, backends, config, graphormer, graphormer_note, base, emit)
    out += _dgl(edge_index, ptr, config, base, emit)
    out += _pyg(edge_index, ptr, backends, config, base, emit)
    return out


def _timed(call, repeats, sync=None):
    call()
    times, result = [], None
    for _ in range(max(1, repeats)):
        result = None
        t0 = time.perf_counter()
        result = call()
        if sync is not None:
            sync()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), result


def _record(base, method, backend, t, **extra):
    return {**base, "method": method, "backend": backend, "input": "pyg", "status": "ok",
            "timed_graphs": base["graphs"],
            "time_s": t, "graphs_per_s": base["graphs"] / t, "us_per_graph": t / base["graphs"] * 1e6,
            "relaxations_per_s": base["relaxations"] / t, **extra}


class _Graphs:
    """The fields of a PyG Batch that the drop-ins read."""

    def __init__(self, edge_index, ptr, edge_attr=None):
        self.edge_index, self.ptr, self.edge_attr = edge_index, ptr, edge_attr


def _sync(backend):
    if backend != "gpu":
        return None
    import cupy

    return cupy.cuda.runtime.deviceSynchronize


def _graphormer(edge_index, ptr, attr, backends, config, algos, note, base, emit):
    from ...learn import graphormer

    hops = int(config.options.get("multi_hop", MULTI_HOP))
    far = int(config.options.get("spatial_pos_max", SPATIAL_POS_MAX))
    out, mine = [], {}
    for backend in backends:
        xp = np
        if backend == "gpu":
            import cupy as xp
        graphs = _Graphs(xp.asarray(edge_index), xp.asarray(ptr), xp.asarray(attr))
        t, got = _timed(lambda: graphormer.collate(graphs, multi_hop_max_dist=hops, spatial_pos_max=far,
                                                   backend=backend), config.repeats, _sync(backend))
        mine[backend] = got
        out.append(emit(_record(base, "graphormer collate", backend, t, library="floydwarp",
                                edge_input_shape=list(got["edge_input"].shape))))
    if algos is None:
        out.append(emit({**base, "method": "graphormer cython collate", "backend": "cpu", "status": "skipped",
                         "note": note or "no Graphormer algos module: -O graphormer=PATH"}))
        return out
    t, theirs = _timed(lambda: _graphormer_cython(algos, edge_index, ptr, attr, hops, far), min(config.repeats, 3))
    ref = next(iter(mine.values()))
    matches = all(np.array_equal(_host(ref[k]), v) for k, v in theirs.items())
    rec = emit(_record(base, "graphormer cython collate", "cpu", t, library="graphormer", matches=matches))
    out.append(rec)
    for r in out[:-1]:
        r["speedup_vs_graphormer"] = rec["time_s"] / r["time_s"]
        r["matches"] = matches
    return out


def _host(a):
    return a.get() if hasattr(a, "get") else np.asarray(a)


def _graphormer_cython(algos, edge_index, ptr, attr, hops, far):
    """Graphormer's preprocess_item (its shortest-path fields) per graph, then its collator's
    padding of them: spatial_pos, edge_input (cut at ``hops``), attn_bias (-inf from ``far``)."""
    from ...learn.graphormer import convert_to_single_emb

    count = ptr.size - 1
    items = []
    for g in range(count):
        lo, hi = int(ptr[g]), int(ptr[g + 1])
        a, b = np.searchsorted(edge_index[0], [lo, hi])
        s, d = edge_index[0, a:b] - lo, edge_index[1, a:b] - lo
        n = hi - lo
        adj = np.zeros((n, n), dtype=bool)
        adj[s, d] = True
        edge_type = np.zeros((n, n, attr.shape[1]), dtype=np.int64)
        edge_type[s, d] = convert_to_single_emb(attr[a:b]) + 1
        M, path = algos.floyd_warshall(adj)
        items.append((M, algos.gen_edge_input(np.amax(M), path, edge_type)[:, :, :hops]))
    size = max(M.shape[0] for M, _ in items)
    depth = max(e.shape[2] for _, e in items)
    spatial = np.zeros((count, size, size), np.int64)
    edge_input = np.zeros((count, size, size, depth, attr.shape[1]), np.int64)
    bias = np.full((count, size + 1, size + 1), -np.inf, np.float32)
    for g, (M, e) in enumerate(items):
        n = M.shape[0]
        spatial[g, :n, :n] = M + 1
        edge_input[g, :n, :n, :e.shape[2]] = e + 1
        bias[g, :, :n + 1] = 0
        bias[g, 1:n + 1, 1:n + 1][M >= far] = -np.inf
    return {"spatial_pos": spatial, "edge_input": edge_input, "attn_bias": bias}


class _DGLGraph:
    """The calls a batched DGL graph answers that the drop-in uses."""

    def __init__(self, edge_index, ptr):
        self.edge_index, self.ptr = edge_index, ptr

    def edges(self):
        return self.edge_index[0], self.edge_index[1]

    def num_nodes(self):
        return int(self.ptr[-1])

    def batch_num_nodes(self):
        return np.diff(self.ptr)


def _dgl(edge_index, ptr, config, base, emit):
    from ...learn.dgl import shortest_dist_batch

    g = _DGLGraph(edge_index, ptr)
    t, (dist, _) = _timed(lambda: shortest_dist_batch(g, return_paths=True), config.repeats)
    mine = emit(_record(base, "dgl shortest_dist", "cpu", t, library="floydwarp"))
    t, theirs = _timed(lambda: _dgl_loop(edge_index, ptr), min(config.repeats, 3))
    matches = all(np.array_equal(dist[k, :d.shape[0], :d.shape[0]], d) for k, d in enumerate(theirs))
    loop = emit(_record(base, "dgl shortest_dist loop", "cpu", t, library="scipy (DGL's method)", matches=matches))
    mine["matches"] = matches
    mine["speedup_vs_loop"] = loop["time_s"] / mine["time_s"]
    return [mine, loop]


def _dgl_loop(edge_index, ptr):
    """What ``dgl.shortest_dist(g, return_paths=True)`` does for each graph: SciPy's
    unweighted shortest_path with predecessors, -1 for unreachable, then every path walked
    back from its target and its edges looked up by their ends."""
    import scipy.sparse as sp
    from scipy.sparse.csgraph import shortest_path

    out = []
    for g in range(ptr.size - 1):
        lo, hi = int(ptr[g]), int(ptr[g + 1])
        a, b = np.searchsorted(edge_index[0], [lo, hi])
        s, d = edge_index[0, a:b] - lo, edge_index[1, a:b] - lo
        n = hi - lo
        m = sp.csr_matrix((np.ones(s.size), (s, d)), shape=(n, n))
        dist, pred = shortest_path(m, return_predecessors=True, unweighted=True, directed=True)
        dist[np.isinf(dist)] = -1
        longest = int(dist.max(initial=0))
        ids = {}
        for e, (u, v) in enumerate(zip(s.tolist(), d.tolist())):
            ids.setdefault((u, v), e)
        paths = np.full((n, n, longest), -1, np.int64)
        for i in range(n):
            for j in range(n):
                if pred[i, j] < 0:
                    continue
                nodes = [j]
                while nodes[-1] != i:
                    nodes.append(pred[i, nodes[-1]])
                for t, (v, u) in enumerate(zip(nodes[:-1], nodes[1:])):
                    paths[i, j, len(nodes) - 2 - t] = ids[(u, v)]
        out.append(dist.astype(np.int64))
    return out


def _pyg(edge_index, ptr, backends, config, base, emit):
    try:
        import torch
        from torch_geometric.data import Data

        from ...pyg import ShortestPathDistance
    except ImportError as exc:
        return [emit({**base, "method": "pyg transform", "backend": "cpu", "status": "skipped",
                      "note": f"needs torch and torch_geometric ({exc})"})]
    out = []
    for backend in backends:
        device = "cuda" if backend == "gpu" else "cpu"
        data = Data(edge_index=torch.as_tensor(edge_index, device=device), num_nodes=int(ptr[-1]))
        data.ptr = torch.as_tensor(ptr, device=device)
        t, _ = _timed(lambda: ShortestPathDistance()(data), config.repeats,
                      torch.cuda.synchronize if device == "cuda" else None)
        out.append(emit(_record(base, "pyg transform", backend, t, library="floydwarp")))
    return out
