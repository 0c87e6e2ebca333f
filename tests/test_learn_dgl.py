"""floydwarp.learn.dgl against a plain reference of dgl.shortest_dist (DGL not needed):
breadth-first hop counts, -1 unreachable, and paths as edge IDs rebuilt from SciPy's
floyd_warshall predecessors (the tie-break documented), every path checked to be a walk of
the graph's edges of the right length."""
from __future__ import annotations

from collections import deque

import numpy as np
import pytest
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import floyd_warshall

from floydwarp.errors import FloydwarpError
from floydwarp.learn.dgl import shortest_dist, shortest_dist_batch


class Graph:
    """What DGL's graph answers: edges() (IDs are positions), num_nodes(), batch_num_nodes()."""

    def __init__(self, src, dst, n, counts=None):
        self.src, self.dst, self.n, self.counts = src, dst, n, counts

    def edges(self):
        return self.src, self.dst

    def num_nodes(self):
        return self.n

    def batch_num_nodes(self):
        return self.counts


def bfs(n, src, dst):
    adj = [[] for _ in range(n)]
    for u, v in zip(src.tolist(), dst.tolist()):
        adj[u].append(v)
    dist = np.full((n, n), -1, np.int64)
    for s in range(n):
        dist[s, s] = 0
        queue = deque([s])
        while queue:
            u = queue.popleft()
            for v in adj[u]:
                if dist[s, v] < 0:
                    dist[s, v] = dist[s, u] + 1
                    queue.append(v)
    return dist


def reference_paths(n, src, dst, dist):
    """DGL's paths format from SciPy's floyd_warshall predecessors; of parallel edges the smallest ID."""
    longest = int(dist.max(initial=0))
    paths = np.full((n, n, longest), -1, np.int64)
    if not n:
        return paths
    ids = {}
    for e, (u, v) in enumerate(zip(src.tolist(), dst.tolist())):
        ids.setdefault((u, v), e)
    m = csr_matrix((np.ones(len(src)), (src, dst)), shape=(n, n))
    _, pred = floyd_warshall(m, unweighted=True, return_predecessors=True)
    for i in range(n):
        for j in range(n):
            if i == j or pred[i, j] < 0:
                continue
            nodes = [j]
            while nodes[-1] != i:
                nodes.append(pred[i, nodes[-1]])
            nodes.reverse()
            for t in range(len(nodes) - 1):
                paths[i, j, t] = ids[(nodes[t], nodes[t + 1])]
    return paths


def random_graph(rng, n):
    m = int(rng.integers(0, 3 * n + 1))
    return rng.integers(0, max(n, 1), m), rng.integers(0, max(n, 1), m)


def test_random_graphs_against_the_reference():
    rng = np.random.default_rng(0)
    for _ in range(300):
        n = int(rng.integers(1, 14))
        src, dst = random_graph(rng, n)
        g = Graph(src, dst, n)
        want = bfs(n, src, dst)
        assert np.array_equal(shortest_dist(g), want)
        dist, paths = shortest_dist(g, return_paths=True)
        assert np.array_equal(dist, want) and np.array_equal(paths, reference_paths(n, src, dst, want))
        for i in range(n):
            for j in range(n):
                walk = [e for e in paths[i, j] if e >= 0]
                assert len(walk) == max(want[i, j], 0)
                at = i
                for e in walk:
                    assert src[e] == at
                    at = dst[e]
                assert not walk or at == j
        root = int(rng.integers(0, n))
        d_root, p_root = shortest_dist(g, root=root, return_paths=True)
        assert np.array_equal(d_root, want[root])
        assert np.array_equal(p_root, paths[root, :, :int(want[root].max())])


def test_dgl_docstring_example():
    g = Graph(np.array([0, 1, 1, 2]), np.array([2, 0, 3, 3]), 4)
    assert shortest_dist(g, root=0).tolist() == [0, -1, 1, 2]
    dist, paths = shortest_dist(g, return_paths=True)
    assert dist.tolist() == [[0, -1, 1, 2], [1, 0, 2, 1], [-1, -1, 0, 1], [-1, -1, -1, 0]]
    assert paths.tolist() == [[[-1, -1], [-1, -1], [0, -1], [0, 3]], [[1, -1], [-1, -1], [1, 0], [2, -1]],
                              [[-1, -1], [-1, -1], [-1, -1], [3, -1]], [[-1, -1], [-1, -1], [-1, -1], [-1, -1]]]


def test_edge_cases():
    none = shortest_dist(Graph(np.zeros(0, np.int64), np.zeros(0, np.int64), 3), return_paths=True)
    assert none[0].tolist() == [[0, -1, -1], [-1, 0, -1], [-1, -1, 0]] and none[1].shape == (3, 3, 0)
    loops = Graph(np.array([0, 0, 1, 0]), np.array([0, 1, 1, 1]), 2)           # self-loops, a parallel edge
    d, p = shortest_dist(loops, return_paths=True)
    assert d.tolist() == [[0, 1], [-1, 0]] and p[0, 1].tolist() == [1]
    with pytest.raises(FloydwarpError, match="root must be a node ID 0..1"):
        shortest_dist(loops, root=2)
    with pytest.raises(FloydwarpError, match="out of range"):
        shortest_dist(Graph(np.array([0]), np.array([5]), 2))


def test_batched_graph():
    rng = np.random.default_rng(1)
    sizes = [int(x) for x in rng.integers(0, 9, 25)]
    parts, offset = [], 0
    src_all, dst_all = [], []
    for n in sizes:
        src, dst = random_graph(rng, n)
        parts.append((n, src, dst))
        src_all.append(src + offset)
        dst_all.append(dst + offset)
        offset += n
    g = Graph(np.concatenate(src_all), np.concatenate(dst_all), offset, np.array(sizes))
    dist, paths = shortest_dist_batch(g, return_paths=True)
    size = max(sizes)
    assert dist.shape == (len(sizes), size, size)
    for k, (n, src, dst) in enumerate(parts):
        want = bfs(n, src, dst)
        assert np.array_equal(dist[k, :n, :n], want)
        assert (dist[k, n:] == -1).all() and (dist[k, :, n:] == -1).all()
        ref = reference_paths(n, src, dst, want)
        assert np.array_equal(paths[k, :n, :n, :ref.shape[2]], ref) and (paths[k, :n, :n, ref.shape[2]:] == -1).all()
    assert np.array_equal(shortest_dist_batch(g), dist)


def test_torch_tensors_in_and_out():
    torch = pytest.importorskip("torch")
    g = Graph(torch.tensor([0, 1, 1, 2]), torch.tensor([2, 0, 3, 3]), 4)
    dist, paths = shortest_dist(g, return_paths=True)
    assert isinstance(dist, torch.Tensor) and dist.dtype == torch.int64 and paths.dtype == torch.int64
    assert dist.tolist()[1] == [1, 0, 2, 1]


_EDGES = np.array([0, 2]), np.array([1, 3])


@pytest.mark.parametrize("n", ["x", None, 2.5, -1, True, np.array([4])])
def test_num_nodes_must_be_a_count(n):
    with pytest.raises(FloydwarpError, match=r"num_nodes\(\) must be a non-negative integer"):
        shortest_dist(Graph(*_EDGES, n))


def test_num_nodes_of_numpy_kinds_and_a_bool_root():
    for n in (np.int64(4), np.array(4)):
        assert shortest_dist(Graph(*_EDGES, n)).shape == (4, 4)
    with pytest.raises(FloydwarpError, match="root must be a node ID"):
        shortest_dist(Graph(*_EDGES, 4), root=True)                   # not read as node 1


@pytest.mark.parametrize("counts, message", [
    (np.array([2.5, 2.0]), "must be a 1-D array of integers"),                 # not truncated to [2, 2]
    (np.array([[2, 2]]), "must be a 1-D array of integers"),                    # not flattened
    (np.array(["2", "2"]), "must be a 1-D array of integers"),                  # not parsed
    (np.array([True, True]), "must be a 1-D array of integers"),
    (None, "must be a 1-D array of integers"),
    (np.array([2, -2, 4]), "must be non-negative; graph 1 has -2"),
])
def test_batch_num_nodes_must_be_counts(counts, message):
    with pytest.raises(FloydwarpError, match=rf"batch_num_nodes\(\) {message}"):
        shortest_dist_batch(Graph(*_EDGES, 4, counts))


def test_batch_num_nodes_of_no_graph():
    assert shortest_dist_batch(Graph(np.zeros(0, np.int64), np.zeros(0, np.int64), 0, np.zeros(0))).shape == (0, 0, 0)
