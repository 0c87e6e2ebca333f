"""solve_batch from lists of NumPy matrices, padded host arrays and lists of SciPy CSR/CSC
matrices (batch/lists.py, batch/convert.py: read in place, no Graph a member), each against
SciPy graph by graph and against the general path (a Graph a member); what they refuse."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

import floydwarp as fw
from batch_model import KINDS, check, padded_of, random_batch, reference
from floydwarp.batch import GraphBatch
from floydwarp.batch.lists import from_list
from floydwarp.errors import FloydwarpError


def _edges_equal(a, b):
    """Two batches hold the same graphs (edge lists compared as sets of (g, u, v, w))."""
    assert np.array_equal(a.host_sizes, b.host_sizes)
    keys = []
    for batch in (a, b):
        g = np.repeat(np.arange(batch.count), np.diff(batch.eptr))
        w = np.zeros(g.size) if batch.weight is None else batch.weight.astype(np.float64)
        keys.append(sorted(zip(g.tolist(), batch.src.tolist(), batch.dst.tolist(), w.tolist())))
    assert keys[0] == keys[1]


@pytest.mark.parametrize("kind", KINDS)
def test_dense_lists_and_padded_arrays_against_scipy(kind):
    rng = np.random.default_rng(sum(map(ord, kind)) + 5)
    for _ in range(80):
        mats = random_batch(rng, int(rng.integers(1, 9)), 17, kind)
        padded, sizes = padded_of(mats)
        for given, kw in ((mats, {}), (padded, {"sizes": sizes}), ([m.astype(np.float32) for m in mats], {})):
            r = fw.solve_batch(given, **kw)
            check(r, mats)


def test_fast_paths_build_the_general_paths_batch():
    """The same edges as one Graph a member: non-negative self-loops dropped, negative kept,
    zeros are edges, +inf and ``missing`` are not; every numeric dtype, C-order or not."""
    rng = np.random.default_rng(11)
    for _ in range(60):
        mats = random_batch(rng, 6, 12, "neg")
        for m in mats:
            if m.shape[0]:
                m[0, 0] = -1 if rng.random() < 0.3 else 2
        general = GraphBatch(*from_list([fw.Graph.from_dense(m) for m in mats])[:5])
        _edges_equal(GraphBatch.from_graphs(mats), general)
        ints = [np.where(np.isinf(m), 99, m).astype(np.int32) for m in mats]
        _edges_equal(GraphBatch.from_graphs(ints, missing=99),
                     GraphBatch(*from_list([fw.Graph.from_dense(m, missing=99) for m in ints])[:5]))
        fortran = [np.asfortranarray(m) for m in mats]                   # not C-ordered: the general path
        _edges_equal(GraphBatch.from_graphs(fortran), general)


def test_stats_of_the_fast_path_pick_the_saturating_kernel():
    """Unit weights read from float matrices: uint8 additions, int16 storage (dtype auto)."""
    mats = [np.array([[0, 1.0, np.inf], [np.inf, 0, 1], [1, np.inf, 0]]), np.zeros((0, 0))]
    r = fw.solve_batch(mats)
    assert (r.metadata["kernel_dtype"], r.dtype.name) == ("uint8", "int16")
    assert r.dist[0].tolist() == [[0, 1, 2], [2, 0, 1], [1, 2, 0]] and r.sizes.tolist() == [3, 0]
    assert fw.solve_batch([m * 0.5 for m in mats]).dtype == np.float64


def test_boolean_and_uint8_adjacency_with_missing_zero():
    adj = np.zeros((3, 4, 4), bool)
    adj[0, 0, 1] = adj[0, 1, 2] = adj[1, 2, 3] = adj[2, 3, 0] = True
    want = fw.solve_batch(np.where(adj, 1.0, np.inf), unweighted=True).dist
    for a in (adj, adj.astype(np.uint8)):
        b = GraphBatch.from_padded(a, missing=0)
        assert np.array_equal(fw.solve_batch(b, unweighted=True).dist, want)
        assert np.array_equal(fw.solve_batch(GraphBatch.from_graphs(list(a), missing=0), unweighted=True).dist, want)
    # without missing=0, False is a zero-weight edge (the dense convention)
    assert fw.solve_batch(adj).dist[0, 3, 0] == 0


@pytest.mark.parametrize("fmt", ["csr", "csc"])
def test_sparse_lists_against_scipy(fmt):
    rng = np.random.default_rng(len(fmt))
    for _ in range(120):
        mats = random_batch(rng, int(rng.integers(1, 8)), 15, KINDS[int(rng.integers(len(KINDS)))])
        sparse = []
        for m in mats:
            i, j = np.nonzero(~np.isinf(m) & ~np.eye(m.shape[0], dtype=bool))
            sparse.append(sp.coo_matrix((m[i, j], (i, j)), shape=m.shape).asformat(fmt))
        if len(sparse) > 1:
            sparse[0] = sparse[0].asformat("csc" if fmt == "csr" else "csr")      # mixed formats
        check(fw.solve_batch(sparse), mats)


def test_sparse_explicit_zeros_duplicates_and_spare_room():
    """Explicit zeros are edges (Graph.from_scipy's rule), a repeated entry keeps the lightest,
    and a matrix whose arrays are longer than its entries reads only its entries."""
    dup = sp.csr_matrix((np.array([5.0, 2.0, 0.0]), np.array([1, 1, 0]), np.array([0, 2, 3])), shape=(2, 2))
    spare = sp.csr_matrix((np.array([4.0, 7.0, 99.0]), np.array([1, 0, 0]), np.array([0, 1, 2])), shape=(2, 2))
    r = fw.solve_batch([dup, spare])
    assert r.dist[0].tolist() == [[0, 2], [0, 0]] and r.dist[1].tolist() == [[0, 4], [7, 0]]


def test_sparse_lists_give_the_edges_scipy_stores():
    """Each stored entry becomes one edge, in storage order, as SciPy's own ``tocoo`` reads it:
    CSR and CSC, empty rows first, last and between, unsorted and repeated indices, int32 and
    int64 arrays, graphs of 0-2 vertices and graphs with no entry."""
    rng = np.random.default_rng(17)
    for _ in range(200):
        mats = []
        for _ in range(int(rng.integers(1, 9))):
            n = int(rng.integers(0, 3)) if rng.random() < 0.3 else int(rng.integers(3, 12))
            m = int(rng.integers(0, 3 * n + 1)) if n else 0
            rows, cols = rng.integers(0, max(n, 1), (2, m))
            c = sp.coo_matrix((rng.integers(1, 9, m).astype(np.float64), (rows, cols)), shape=(n, n))
            c = c.tocsr() if rng.random() < 0.5 else c.tocsc()
            if m:           # tocsr sums repeated entries: put unsorted, repeated indices back in place
                c.indices = rng.permutation(np.resize(c.indices, c.indices.size))
            if rng.random() < 0.3:
                c.indices, c.indptr = c.indices.astype(np.int64), c.indptr.astype(np.int64)
            mats.append(c)
        sizes, eptr, src, dst, weight, _ = from_list(mats)
        for g, c in enumerate(mats):
            coo = c.tocoo()
            a, b = eptr[g], eptr[g + 1]
            assert sizes[g] == c.shape[0]
            assert np.array_equal(src[a:b], coo.row) and np.array_equal(dst[a:b], coo.col)
            assert np.array_equal(weight[a:b], coo.data)


def test_sparse_offsets_that_fall_anywhere_are_refused():
    """Offsets that fall back between two rows (not only at the ends) name the graph."""
    for indptr in ([0, 2, 1, 3], [0, 3, 1, 3], [1, 1, 2, 3], [0, 2, 3, 1]):
        broken = sp.csr_matrix(np.ones((3, 3)))
        broken.indptr = np.array(indptr, dtype=broken.indptr.dtype)
        with pytest.raises(FloydwarpError, match=r"graph 1: malformed csr matrix"):
            fw.solve_batch([sp.csr_matrix(np.ones((2, 2))), broken])


def test_hop_counts_read_no_weights():
    """With ``unweighted=True`` no form reads its weights: a list's CSR values and Graph weights
    are not joined (the batch has none) and a PyG batch's edge_weight is not looked at, so even
    NaN weights give the hop counts SciPy gives."""
    from scipy.sparse.csgraph import shortest_path

    class Data:                                    # a PyG Batch's attributes
        pass

    rng = np.random.default_rng(11)
    for _ in range(30):
        mats = random_batch(rng, int(rng.integers(1, 7)), 14, KINDS[int(rng.integers(len(KINDS)))])
        adjacency = [(~np.isinf(m) & ~np.eye(m.shape[0], dtype=bool)).astype(np.int64) for m in mats]
        hops = [shortest_path(a, unweighted=True) for a in adjacency]
        sparse, graphs = [], []
        for m, a in zip(mats, adjacency):
            i, j = np.nonzero(a)
            # NaN values, and spare room after the entries (a value and an index past indptr[-1])
            sparse.append(sp.csr_matrix((np.append(np.full(i.size, np.nan), 5.0), np.append(j, 0),
                                         np.searchsorted(i, np.arange(m.shape[0] + 1))), shape=m.shape))
            graphs.append(fw.Graph.from_edges(i, j, m[i, j], n=m.shape[0]))
        data = Data()
        data.ptr = np.concatenate([[0], np.cumsum([m.shape[0] for m in mats])])
        data.edge_index = np.concatenate([np.stack(np.nonzero(a)) + data.ptr[g] for g, a in enumerate(adjacency)],
                                         axis=1)
        data.edge_weight = np.full(data.edge_index.shape[1], np.nan)
        for given in (sparse, graphs, data):
            if given is not data:
                assert from_list(given, weighted=False)[4] is None
            r = fw.solve_batch(given, unweighted=True)
            for g, want in enumerate(hops):
                assert np.array_equal(r[g].to_dense(), want)


@pytest.mark.parametrize("chunk", [1, 3, 7])
def test_lists_read_in_chunks(monkeypatch, chunk):
    """A list is read ``READ_CHUNK`` members at a time: chunks whose arrays differ in dtype (int32
    or int64 ids, integer, boolean or real values, CSR or CSC) join as one, labels kept from the
    chunk that has them, and an error names its graph in the whole list."""
    from floydwarp.batch import lists

    monkeypatch.setattr(lists, "READ_CHUNK", chunk)
    rng = np.random.default_rng(chunk)
    mats = random_batch(rng, 23, 9, "pos")
    sparse = []
    for g, m in enumerate(mats):
        c = sp.csr_matrix(np.where(np.isinf(m), 0, m)).asformat("csc" if g % 4 == 1 else "csr")
        if g >= 12:
            c.indices, c.indptr = c.indices.astype(np.int64), c.indptr.astype(np.int64)
        c.data = c.data.astype(np.int16 if g < 8 else np.float32 if g < 16 else np.float64)
        sparse.append(c)
    want = [np.where(m == 0, np.inf, m) for m in mats]
    check(fw.solve_batch(sparse), want)
    hops = fw.solve_batch(sparse, unweighted=True)
    graphs = [fw.Graph.from_dense(w, labels=[f"v{i}" for i in range(w.shape[0])] if g == 20 else None)
              for g, w in enumerate(want)]
    check(fw.solve_batch(graphs), want)
    r = fw.solve_batch(graphs, unweighted=True)
    assert np.array_equal(r.dist, hops.dist) and r.labels[20] == [f"v{i}" for i in range(want[20].shape[0])]
    assert r.labels[:20] == [None] * 20
    bad = sp.csr_matrix(np.ones((2, 2)))
    bad.indices[1] = 5
    with pytest.raises(FloydwarpError, match=r"graph 19: stored entry 1 has index 5, out of range 0..1"):
        fw.solve_batch(sparse[:19] + [bad] + sparse[19:])
    with pytest.raises(FloydwarpError, match=r"graph 17: a sparse graph must be square"):
        fw.solve_batch(sparse[:17] + [sp.csr_matrix(np.ones((2, 3)))])


def test_graph_lists_and_mixed_lists():
    rng = np.random.default_rng(3)
    mats = random_batch(rng, 30, 12, "pos")
    graphs = [fw.Graph.from_dense(m) if g % 2 else fw.Graph.from_edges(*_edges(m), n=m.shape[0])
              for g, m in enumerate(mats)]
    check(fw.solve_batch(graphs), mats)
    mixed = [m if g % 3 == 0 else sp.csr_matrix(np.where(np.isinf(m), 0, m)) if g % 3 == 1 else graphs[g]
             for g, m in enumerate(mats)]
    r = fw.solve_batch(mixed)
    for g in range(1, len(mats), 3):               # a CSR of the dense matrix with 0 for "no edge"
        mats[g] = np.where(mats[g] == 0, np.inf, mats[g])
    check(r, mats)


def _edges(m):
    i, j = np.nonzero(~np.isinf(m))
    return i, j, m[i, j]


def test_errors_name_the_graph():
    with pytest.raises(FloydwarpError, match=r"graph 2: matrix entry \[1, 0\] has weight -inf"):
        fw.solve_batch([np.zeros((2, 2)), np.zeros((1, 1)), np.array([[0, 1], [-np.inf, 0]])])
    with pytest.raises(FloydwarpError, match=r"graph 1: a weight matrix must be square"):
        fw.solve_batch([np.zeros((2, 2)), np.zeros((3, 2))])
    with pytest.raises(FloydwarpError, match=r"graph 1: entry \[0, 2\] has weight nan"):
        padded = np.full((2, 3, 3), np.inf)
        padded[1, 0, 2] = np.nan
        padded[0, 2, 2] = np.nan                     # outside graph 0's 2 x 2 square: ignored
        fw.solve_batch(padded, sizes=[2, 3])
    bad = sp.csr_matrix(np.ones((2, 2)))
    bad.indices[1] = 5
    with pytest.raises(FloydwarpError, match=r"graph 1: stored entry 1 has index 5, out of range 0..1"):
        fw.solve_batch([sp.csr_matrix(np.ones((1, 1))), bad])
    broken = sp.csr_matrix(np.ones((2, 2)))
    broken.indptr[1] = 5                            # past the 4 entries
    with pytest.raises(FloydwarpError, match=r"graph 0: malformed csr matrix"):
        fw.solve_batch([broken])
    with pytest.raises(FloydwarpError, match=r"graph 0: a sparse graph must be square"):
        fw.solve_batch([sp.csr_matrix(np.ones((2, 3)))])
    with pytest.raises(FloydwarpError, match=r"graph 0: edge 0 -> 1 has weight inf"):
        fw.solve_batch([sp.csr_matrix((np.array([np.inf]), np.array([1]), np.array([0, 1, 1])), shape=(2, 2))])
    with pytest.raises(FloydwarpError, match=r"graph 1: .*non-numeric dtype"):
        fw.solve_batch([np.zeros((1, 1)), np.array([["a"]])])


def test_padded_read_in_place_matches_reference():
    """A strided view and a non-native byte order are read right (copied first)."""
    rng = np.random.default_rng(9)
    mats = random_batch(rng, 5, 9, "pos")
    padded, sizes = padded_of(mats)
    big = np.full((5, 2 * padded.shape[1], 2 * padded.shape[2]), np.inf)
    big[:, ::2, ::2] = padded
    check(fw.solve_batch(big[:, ::2, ::2], sizes=sizes), mats)
    check(fw.solve_batch(padded.astype(">f8"), sizes=sizes), mats)
    assert [reference(m).shape for m in mats] == [m.shape for m in mats]


def test_batch_files_refuse_unknown_arrays(tmp_path):
    path = tmp_path / "b.npz"
    np.savez(path, edge_index=np.array([[0], [1]]), ptr=np.array([0, 2]), edge_weights=np.array([5.0]))
    with pytest.raises(FloydwarpError, match=r"unknown array\(s\) edge_weights in a batch file"):
        GraphBatch.load(path)
    np.savez(path, edge_index=np.array([[0], [1]]), ptr=np.array([0, 2]), batch=np.array([0, 1]))
    with pytest.raises(FloydwarpError, match="batch and ptr disagree"):
        GraphBatch.load(path)
