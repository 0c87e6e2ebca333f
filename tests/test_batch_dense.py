"""Batches of NumPy matrices solved where they lie (batch/dense.py, kernels.solve_dense): hop
counts and weights from lists and padded arrays against SciPy and against the edge path
(a Graph a member), NaN refused as the solve reads it, and the edges made only when asked."""
from __future__ import annotations

import numpy as np
import pytest
from scipy.sparse.csgraph import floyd_warshall

import floydwarp as fw
from batch_model import check, padded_of, random_batch, random_graph
from floydwarp.batch import GraphBatch, cpu
from floydwarp.batch.dense import DenseSource
from floydwarp.errors import FloydwarpError


def _hops(mats):
    """SciPy's hop counts of each matrix (every present off-diagonal entry one hop)."""
    return [floyd_warshall(np.where(np.isinf(m), 0, 1) * (1 - np.eye(m.shape[0])), unweighted=True)
            if m.shape[0] else np.zeros((0, 0)) for m in mats]


def _general(mats, **kw):
    """The same batch through the edge path: a Graph a member."""
    return fw.solve_batch([fw.Graph.from_dense(m) for m in mats], **kw)


def test_hops_and_weights_from_lists_and_padded_arrays():
    """Sizes 0, 1, 2 and around whole vectors (31-33, 63-65 entries: a row's last vector is
    read past its end), negative weights and self-loops, unreachable pairs, padding."""
    rng = np.random.default_rng(36)
    for kind, sizes in (("neg", [0, 1, 2, 3]), ("pos", [31, 32, 33, 1]), ("real", [2, 63, 64, 65, 0])):
        mats = [random_graph(rng, n, kind) for n in sizes]
        for m in mats:
            if m.shape[0] > 1:
                m[1, 1] = 3                                      # a non-negative self-loop changes nothing
        padded, given = padded_of(mats)
        for form, kw in ((mats, {}), (padded, {"sizes": given})):
            check(fw.solve_batch(form, **kw), mats)
            check(fw.solve_batch(form, unweighted=True, **kw), mats, refs=_hops(mats))
            for unweighted in (False, True):
                want = _general(mats, unweighted=unweighted)
                got = fw.solve_batch(form, unweighted=unweighted, **kw)
                assert got.dtype == want.dtype and np.array_equal(got.dist, want.dist)


def test_negative_self_loops_and_missing_values_on_the_diagonal():
    m = np.array([[-1.0, 2, np.inf], [np.inf, 0, 1], [4, np.inf, 5]])
    r = fw.solve_batch([m, np.zeros((1, 1))])
    assert r.negative_cycle.tolist() == [True, False] and r[0].has_negative_cycle
    assert fw.solve_batch([m], unweighted=True).dist[0].tolist() == [[0, 1, 2], [2, 0, 1], [1, 2, 0]]
    # an integer matrix whose "no edge" is -1: a -1 on the diagonal is no self-loop
    ints = np.array([[-1, 3, -1], [-1, -1, 2], [7, -1, -2]], dtype=np.int32)
    r = fw.solve_batch(GraphBatch.from_graphs([ints], missing=-1))
    want = fw.solve(fw.Graph.from_dense(ints, missing=-1))
    assert r.negative_cycle.tolist() == [True] and want.has_negative_cycle
    adj = np.array([[[0, 1], [0, 0]], [[1, 1], [1, 1]]], dtype=bool)
    for form in (GraphBatch.from_padded(adj, missing=0), GraphBatch.from_graphs(list(adj), missing=0)):
        assert fw.solve_batch(form, unweighted=True).dist.tolist() == [[[0, 1], [255, 0]], [[0, 1], [1, 0]]]


@pytest.mark.parametrize("dtype", ["int16", "uint8", "float32", "int64", "uint64"])
def test_matrix_dtypes_and_arithmetic_dtypes(dtype):
    rng = np.random.default_rng(7)
    mats = [np.where(np.isinf(m), 99, m).astype(dtype) for m in random_batch(rng, 6, 40, "pos")]
    floats = [np.where(m == 99, np.inf, m).astype(np.float64) for m in mats]
    for kw in ({}, {"dtype": "float64"}, {"dtype": "int32"}, {"unweighted": True}):
        got = fw.solve_batch(GraphBatch.from_graphs(mats, missing=99), **kw)
        want = _general(floats, **kw)
        assert got.dtype == want.dtype and np.array_equal(got.dist, want.dist), kw


@pytest.mark.parametrize("dtype", ["bool", "int8", "uint8", "int16", "uint16", "int32", "uint32"])
def test_a_scan_holds_each_integer_dtypes_extremes(dtype):
    """The scan reads integer matrices in a type twice their width (the dtype's largest value
    marks no edge there): weights at the dtype's least and greatest values, next to missing."""
    rng = np.random.default_rng(11)
    info = np.iinfo(np.uint8) if dtype == "bool" else np.iinfo(dtype)
    lo, hi = (0, 1) if dtype == "bool" else (int(info.min), int(info.max))
    missing = 0 if dtype == "bool" else (lo + hi) // 2
    mats = []
    for n in (1, 2, 17, 40, 3):
        m = rng.choice([lo, hi, missing, missing], size=(n, n)).astype(dtype)
        mats.append(m)
    sizes = np.array([m.shape[0] for m in mats])
    padded = np.full((len(mats), sizes.max(), sizes.max()), missing, dtype=dtype)
    for g, m in enumerate(mats):
        padded[g, :m.shape[0], :m.shape[0]] = m
    for form in (GraphBatch.from_graphs(mats, missing=missing), GraphBatch.from_padded(padded, sizes, missing=missing)):
        stats = form.weight_stats()
        kept = np.concatenate([m[(m != missing) & ~(np.eye(m.shape[0], dtype=bool) & (m >= 0))]
                               for m in mats]).astype(np.int64)
        assert (stats.min_weight, stats.max_weight) == (int(kept.min()), int(kept.max()))
        assert form.num_edges == kept.size
        for kw in ({"dtype": "float64"}, {"unweighted": True}):
            got = fw.solve_batch(form, **kw)
            want = fw.solve_batch([fw.Graph.from_dense(m, missing=missing) for m in mats], **kw)
            assert got.dtype == want.dtype and np.array_equal(got.dist, want.dist), kw


def test_integer_matrices_are_scanned_only_when_their_weights_are_asked_for(monkeypatch):
    """An integer matrix holds no bad entry: its constructor reads none of it, and a hop-count
    solve needs no statistics (the float constructor's check: test_nan_refused_...)."""
    rng = np.random.default_rng(3)
    adj = (rng.random((5, 9, 9)) < 0.3).astype(np.uint8)
    scans = []
    scan = DenseSource.scan
    monkeypatch.setattr(DenseSource, "scan", lambda self: scans.append(self) or scan(self))
    for batch in (GraphBatch.from_padded(adj, missing=0), GraphBatch.from_graphs(list(adj), missing=0)):
        hops = fw.solve_batch(batch, unweighted=True)
        assert scans == []
        weights = fw.solve_batch(batch)
        assert len(scans) >= 1
        scans.clear()
        for got, kw in ((hops, {"unweighted": True}), (weights, {})):
            want = fw.solve_batch([fw.Graph.from_dense(m, missing=0) for m in adj], **kw)
            assert got.dtype == want.dtype and np.array_equal(got.dist, want.dist)


def test_nan_refused_as_the_solve_reads_it(monkeypatch):
    """Hop counts read no entry before the solve: the kernel flags NaN and -inf, the error
    names the first bad graph across slices; NaN in the padding (read with a row's last
    vector) is ignored."""
    monkeypatch.setattr(cpu, "SLICE", 3)
    mats = [np.full((n, n), np.inf) for n in (3, 40, 5, 2, 33, 4)]
    mats[4][32, 1] = np.nan
    mats[5][0, 3] = -np.inf
    with pytest.raises(FloydwarpError, match=r"graph 4: matrix entry \[32, 1\] has weight nan"):
        fw.solve_batch(mats, unweighted=True)
    padded, sizes = padded_of(mats)
    with pytest.raises(FloydwarpError, match=r"graph 4: entry \[32, 1\] has weight nan"):
        fw.solve_batch(padded, sizes=sizes, unweighted=True)
    with pytest.raises(FloydwarpError, match=r"graph 4: entry \[32, 1\]"):
        GraphBatch.from_padded(padded, sizes)                  # the constructor still checks at once
    lazy = GraphBatch.of(padded, sizes=sizes)
    with pytest.raises(FloydwarpError, match=r"graph 4: entry \[32, 1\]"):
        lazy.src                                               # noqa: B018 -- the edges check as they are made
    clean, sizes = padded_of([np.zeros((n, n)) for n in (2, 31, 1)])
    clean[0, :, 2:] = np.nan                                   # outside graph 0's 2 x 2 square
    clean[2, 0, 1:] = np.nan
    for unweighted, hop in ((True, 1), (False, 0)):                # zeros are edges
        r = fw.solve_batch(clean, sizes=sizes, unweighted=unweighted)
        assert r.dist[0, :2, :2].tolist() == [[0, hop], [hop, 0]]


def test_edges_are_made_only_when_asked_and_match_the_general_path(monkeypatch):
    rng = np.random.default_rng(5)
    mats = random_batch(rng, 7, 20, "neg")
    general = GraphBatch.from_graphs([fw.Graph.from_dense(m) for m in mats])
    with monkeypatch.context() as patch:
        patch.setattr(DenseSource, "edges", None)                # solved from the matrices: never called
        for unweighted in (True, False):
            got = fw.solve_batch(mats, unweighted=unweighted)
            assert np.array_equal(got.dist, fw.solve_batch(general, unweighted=unweighted).dist)
    batch = GraphBatch.of(mats)
    assert batch.num_edges == general.num_edges
    assert batch.weight_stats().__dict__ == general.weight_stats().__dict__
    assert np.array_equal(batch.eptr, general.eptr) and np.array_equal(batch.src, general.src)
    assert np.array_equal(batch.weight, general.weight)
    r = fw.solve_batch(batch, predecessors=True)               # predecessors come from the edges
    assert np.array_equal(r.pred, fw.solve_batch(general, predecessors=True).pred)


def test_hop_count_dtype_of_large_graphs_without_edges():
    """Whether any edge exists picks the dtype of hop counts past 255 vertices: found by a
    read that stops at the first edge, the same answer as the edges give."""
    empty = [np.full((300, 300), np.inf), np.zeros((0, 0))]
    one = [np.full((300, 300), np.inf), np.array([[np.inf, 1.0], [np.inf, np.inf]])]
    for mats in (empty, one):
        got, want = fw.solve_batch(mats, unweighted=True), _general(mats, unweighted=True)
        assert got.dtype == want.dtype and np.array_equal(got.dist, want.dist)
    assert fw.solve_batch(empty, unweighted=True).dtype == np.uint8
