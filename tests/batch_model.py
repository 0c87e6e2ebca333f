"""Random batches of small graphs and an independent per-graph reference (SciPy) for the
batch tests (CPU and GPU)."""
from __future__ import annotations

import numpy as np
from scipy.sparse.csgraph import floyd_warshall

KINDS = ("pos", "neg", "undirected", "real", "zero")


def random_graph(rng, n, kind):
    """A dense weight matrix (inf = no edge): ``neg`` has negative weights and no negative
    cycle (weights shifted by a potential), ``undirected`` is symmetric, ``real`` has
    fractional weights, ``zero`` has zero weights; self-loops and empty rows happen."""
    density = rng.uniform(0.05, 0.6)
    w = rng.integers(0 if kind == "zero" else 1, 10, size=(n, n)).astype(np.float64)
    if kind == "real":
        w = rng.uniform(0.5, 10, size=(n, n))
    w[rng.random((n, n)) >= density] = np.inf
    if kind == "undirected":
        w = np.minimum(w, w.T)
    if kind == "neg":
        h = rng.integers(0, 8, size=n)
        w = w + h[:, None] - h[None, :]
        np.fill_diagonal(w, np.where(np.isinf(np.diag(w)), np.inf, np.abs(np.diag(w))))
    return w


def random_batch(rng, count, max_n, kind=None):
    """``count`` graphs of 0..max_n vertices (n = 0 and 1 included often)."""
    kinds = [kind or KINDS[rng.integers(len(KINDS))] for _ in range(count)]
    if kind is None:
        kinds = [kinds[0]] * count        # one kind a batch: one dtype rule a batch
    sizes = rng.integers(0, max_n + 1, size=count)
    return [random_graph(rng, int(n), k) for n, k in zip(sizes, kinds)]


def reference(w):
    """float64 distances of one graph without negative cycles (inf unreachable): SciPy's
    Floyd-Warshall on its edges (explicit zeros in a sparse matrix are edges)."""
    import scipy.sparse as sp

    if w.shape[0] == 0:
        return np.zeros((0, 0))
    mask = ~np.isinf(w)
    np.fill_diagonal(mask, False)
    i, j = np.nonzero(mask)
    return floyd_warshall(sp.csr_matrix((w[i, j], (i, j)), shape=w.shape), directed=True)


def as_float(dist, inf):
    """Stored distances as float64 with inf."""
    d = np.asarray(dist).astype(np.float64)
    if np.dtype(dist.dtype).kind in "iu":
        d[np.asarray(dist) >= inf] = np.inf
    return d


def pyg_of(mats):
    """The PyG layout of a list of dense matrices: (edge_index, edge_weight, ptr)."""
    src, dst, w, ptr = [], [], [], [0]
    for m in mats:
        i, j = np.nonzero(~np.isinf(m))
        src.append(i + ptr[-1]); dst.append(j + ptr[-1]); w.append(m[i, j])
        ptr.append(ptr[-1] + m.shape[0])
    cat = lambda xs, dt: np.concatenate(xs).astype(dt) if xs else np.zeros(0, dt)  # noqa: E731
    return np.stack([cat(src, np.int64), cat(dst, np.int64)]), cat(w, np.float64), np.array(ptr, np.int64)


def padded_of(mats):
    size = max((m.shape[0] for m in mats), default=0)
    out = np.full((len(mats), size, size), np.inf)
    for g, m in enumerate(mats):
        out[g, :m.shape[0], :m.shape[0]] = m
    return out, np.array([m.shape[0] for m in mats])


def check(result, mats, refs=None):
    """Every graph of ``result`` equals its reference (floats within rounding), padding at INF."""
    dist = np.asarray(result.to_host().dist)
    size = max((m.shape[0] for m in mats), default=0)
    for g, m in enumerate(mats):
        n = m.shape[0]
        ref = reference(m) if refs is None else refs[g]
        got = as_float(dist[g, :n, :n], result.inf)
        if dist.dtype.kind == "f" and not np.all(m[~np.isinf(m)] == np.round(m[~np.isinf(m)])):
            np.testing.assert_allclose(got, ref, rtol=1e-5 if dist.dtype == np.float32 else 1e-12, atol=1e-4)
        else:
            np.testing.assert_array_equal(got, ref, err_msg=f"graph {g} (n = {n})")
        pad = dist[g].copy()
        pad[:n, :n] = result.inf
        assert np.all(as_float(pad, result.inf) == np.inf), f"graph {g}: padding not at inf"
    assert dist.shape == (len(mats), size, size)
