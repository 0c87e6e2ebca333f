"""A plain-Python model of Graphormer's preprocessing, written from what its code is
documented to do (the reference of the Graphormer drop-in tests; bench/graphormer_check.py
compares the drop-ins with Graphormer's own compiled code):

* ``floyd_warshall(adj)``: non-zero entries are edges weighing their value, the diagonal
  0, every other pair 510; the textbook loop (k, then i, then j) records ``path[i][j] = k``
  whenever ``k`` makes ``d[i][j]`` strictly smaller; at the end every entry of 510 or more
  becomes 510 in both matrices;
* ``gen_edge_input(max_dist, path, feat)``: (n, n, max_dist, F) of -1; for i != j with
  ``path[i][j] != 510`` the path's vertices ``[i] + inner(i, j) + [j]``, ``inner(i, j) =
  inner(i, k) + [k] + inner(k, j)`` for ``k = path[i][j]`` (none for -1), and the t-th
  edge's ``feat[a, b]`` at ``[i, j, t]``;
* the collator: spatial_pos + 1 and edge_input[..., :multi_hop_max_dist, :] + 1, zero
  padded to the batch's largest graph and depth; attn_bias 0 with -inf where the distance
  reaches spatial_pos_max and on padding columns (padding rows 0 on real columns).
"""
from __future__ import annotations

import numpy as np

UNREACHABLE = 510


def floyd_warshall(adj):
    a = np.asarray(adj).astype(np.int64)
    n = a.shape[0]
    d = [[0 if i == j else (int(a[i, j]) if a[i, j] != 0 else UNREACHABLE) for j in range(n)] for i in range(n)]
    path = [[-1] * n for _ in range(n)]
    for k in range(n):
        for i in range(n):
            dik = d[i][k]
            row, rk = d[i], d[k]
            for j in range(n):
                if dik + rk[j] < row[j]:
                    row[j] = dik + rk[j]
                    path[i][j] = k
    d, path = np.array(d, dtype=np.int64).reshape(n, n), np.array(path, dtype=np.int64).reshape(n, n)
    far = d >= UNREACHABLE
    d[far] = UNREACHABLE
    path[far] = UNREACHABLE
    return d, path


def inner(path, i, j):
    k = int(path[i][j])
    return [] if k == -1 else inner(path, i, k) + [k] + inner(path, k, j)


def gen_edge_input(max_dist, path, feat):
    n = path.shape[0]
    out = np.full((n, n, int(max_dist), feat.shape[-1]), -1, dtype=np.int64)
    for i in range(n):
        for j in range(n):
            if i == j or path[i][j] == UNREACHABLE:
                continue
            verts = [i] + inner(path, i, j) + [j]
            for t in range(len(verts) - 1):
                out[i, j, t] = feat[verts[t], verts[t + 1]]        # IndexError past max_dist
    return out


def single_emb(attr, offset=512):
    attr = np.asarray(attr, dtype=np.int64)
    attr = attr[:, None] if attr.ndim == 1 else attr
    return attr + 1 + offset * np.arange(attr.shape[1])


def item(n, edge_index, edge_attr):
    """preprocess_item's shortest-path fields: (M, path, edge_input)."""
    adj = np.zeros((n, n), dtype=bool)
    feats = single_emb(edge_attr) + 1
    edge_type = np.zeros((n, n, feats.shape[1]), dtype=np.int64)
    for e in range(edge_index.shape[1]):                 # edge by edge: the last one listed stays
        u, v = int(edge_index[0, e]), int(edge_index[1, e])
        adj[u, v] = True
        edge_type[u, v] = feats[e]
    M, path = floyd_warshall(adj)
    return M, path, gen_edge_input(M.max(initial=0), path, edge_type)


def collate(items, multi_hop_max_dist=20, spatial_pos_max=20):
    count = len(items)
    size = max((M.shape[0] for M, _, _ in items), default=0)
    depth = max((min(multi_hop_max_dist, e.shape[2]) for _, _, e in items), default=0)
    feats = items[0][2].shape[3] if items else 0
    spatial = np.zeros((count, size, size), np.int64)
    edge_input = np.zeros((count, size, size, depth, feats), np.int64)
    bias = np.full((count, size + 1, size + 1), -np.inf, np.float32)
    for g, (M, _, e) in enumerate(items):
        n = M.shape[0]
        spatial[g, :n, :n] = M + 1
        cut = e[:, :, :multi_hop_max_dist]
        edge_input[g, :n, :n, :cut.shape[2]] = cut + 1
        bias[g, :n + 1, :n + 1] = 0
        bias[g, 1:n + 1, 1:n + 1][M >= spatial_pos_max] = -np.inf
        bias[g, n + 1:, :n + 1] = 0
    return {"spatial_pos": spatial, "edge_input": edge_input, "attn_bias": bias}


def molecule(rng, n, features=3, split=0.1, rings=0.15):
    """``(edge_index, edge_attr)`` of a random molecule-like graph: a tree (cut in two now
    and then: unreachable pairs), ring closures, both directions, parallel edges possible."""
    pairs = [(v, int(rng.integers(0, v))) for v in range(1, n)]
    if n > 3 and rng.random() < split:
        pairs = [p for p in pairs if p[0] != n // 2]
    for _ in range(int(rng.binomial(max(n, 0), rings))):
        a, b = (int(x) for x in rng.integers(0, n, 2))
        if a != b:
            pairs.append((a, b))
    src = [a for a, b in pairs] + [b for a, b in pairs]
    dst = [b for a, b in pairs] + [a for a, b in pairs]
    edge_index = np.array([src, dst], dtype=np.int64).reshape(2, -1)
    return edge_index, rng.integers(0, 5, size=(edge_index.shape[1], features))


class Data:
    """The fields of a PyG Data that the drop-ins read."""

    def __init__(self, n, edge_index, edge_attr=None):
        self.num_nodes, self.edge_index, self.edge_attr = n, edge_index, edge_attr
