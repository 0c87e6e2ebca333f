"""The one-pass graph checks (graph/edge_kernels.py: edge_scan; graph/kernels.py: dense_scan,
scipy_weights), alone and split over threads (team.py joins their answers), against plain NumPy
references."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.sparse.csgraph import floyd_warshall as scipy_fw

import floydwarp as fw
from floydwarp import FloydwarpError, Graph
from floydwarp import team

pytest.importorskip("numba")


@pytest.fixture(params=[1, 2], ids=["one-thread", "two-threads"])
def threads(request, monkeypatch):
    """Run every pass on one thread, or split into two shares whatever its size."""
    monkeypatch.setattr(team, "GRAIN", 1 if request.param == 2 else 1 << 40)
    monkeypatch.setattr(team, "default_threads", lambda: request.param)
    return request.param


def reference_edges(n, src, dst, w):
    """Graph's rules in plain NumPy: lightest parallel edge, non-negative self-loops dropped."""
    best = {}
    for i, j, x in zip(src.tolist(), dst.tolist(), w.tolist()):
        if i == j and x >= 0:
            continue
        best[(i, j)] = min(x, best.get((i, j), x))
    keys = sorted(best)
    return (np.array([k[0] for k in keys], np.int64), np.array([k[1] for k in keys], np.int64),
            np.array([best[k] for k in keys]))


@pytest.mark.parametrize("order", ["sorted", "shuffled", "halves"])
@pytest.mark.parametrize("kind", ["int", "float", "whole-float"])
def test_edge_list_matches_the_reference(threads, order, kind):
    rng = np.random.default_rng(7)
    n, m = 60, 900
    src, dst = rng.integers(0, n, m), rng.integers(0, n, m)
    w = {"int": rng.integers(-3, 20, m), "float": rng.uniform(-3, 20, m),
         "whole-float": rng.integers(-3, 20, m).astype(float)}[kind]
    if order == "sorted":
        key = np.unique(src * n + dst)                          # distinct, in order: no sort needed
        src, dst, w = key // n, key % n, w[:key.size]
    elif order == "halves":                                     # each half in order, not the whole
        key = np.unique(src * n + dst)
        half = key.size // 2
        key = np.concatenate([key[half:], key[:half]])
        src, dst, w = key // n, key % n, w[:key.size]
    g = Graph.from_edges(src, dst, w, n=n)
    ref = reference_edges(n, src, dst, np.asarray(w))
    got = g.edges()
    assert all(np.array_equal(a, b) for a, b in zip(got, ref))
    stats = g.weight_stats()
    assert (stats.min_weight, stats.max_weight) == (ref[2].min(), ref[2].max())
    assert stats.integral == (kind != "float")
    assert g.num_edges == ref[0].size
    assert np.array_equal(g.to_matrix("float64"), Graph.from_dense(_dense(n, *ref)).to_matrix("float64"))


@pytest.mark.parametrize("ids", [np.int8, np.uint16, np.int32, np.uint64, np.int64, ">i4", np.float32])
@pytest.mark.parametrize("weights", [bool, np.int8, np.uint32, np.float32, np.float64, ">f8"])
def test_edge_list_of_any_number_types_is_read_as_converted(threads, ids, weights):
    """Ids and weights of any number type are converted as they are scanned: the graph is the
    one of the int64 ids and int64 / float64 weights that astype would make."""
    rng = np.random.default_rng(2)
    n, m = 40, 700
    src, dst = rng.integers(0, n, m), rng.integers(0, n, m)
    w = rng.integers(0, 90, m) if weights in (np.uint32, bool) else rng.integers(-3, 90, m)
    w = w.astype(weights)
    g = Graph.from_edges(src.astype(ids), dst.astype(ids), w, n=n)
    kind = np.float64 if np.dtype(weights).kind == "f" else np.int64
    ref = reference_edges(n, src, dst, w.astype(kind))
    got = g.edges()
    assert all(np.array_equal(a, b) for a, b in zip(got, ref))
    assert got[0].dtype == got[1].dtype == np.int64 and got[2].dtype == kind


def test_edge_list_arrays_of_the_caller_are_left_as_they_are(threads):
    """The scan reads the caller's arrays and writes the graph's own: self-loops dropped,
    parallel edges merged and the edges sorted there, not in the input."""
    rng = np.random.default_rng(4)
    n, m = 30, 800
    src, dst, w = rng.integers(0, n, m), rng.integers(0, n, m), rng.integers(-1, 9, m)
    before = [a.copy() for a in (src, dst, w)]
    g = Graph.from_edges(src, dst, w, n=n)
    assert all(np.array_equal(a, b) for a, b in zip((src, dst, w), before))
    assert all(np.array_equal(a, b) for a, b in zip(g.edges(), reference_edges(n, src, dst, w)))
    assert not any(np.shares_memory(a, b) for a in g.edges() for b in (src, dst, w))


@pytest.mark.parametrize("m", [0, 1, 2, 5000])
def test_generated_edges_are_sorted_when_first_needed(threads, m):
    """A graph whose distinct edges come in any order (a generator's) sorts them by (source,
    target) -- two counting sorts split over the threads -- the first time a pass needs it."""
    from floydwarp.numeric import WeightStats

    rng = np.random.default_rng(m)
    n = 100
    key = rng.permutation(rng.choice(n * n, m, replace=False))
    src, dst, w = key // n, key % n, rng.uniform(1, 5, m)
    g = Graph.from_edges(src, dst, w, n=n, stats=WeightStats(n, 1, 5, False))
    order = np.argsort(key)
    assert all(np.array_equal(a, b[order]) for a, b in zip(g._sorted_edges(), (src, dst, w)))


def _dense(n, src, dst, w):
    d = np.full((n, n), np.inf)
    d[src, dst] = w
    return d


@pytest.mark.parametrize("n", [0, 1, 2, 7, 50])
@pytest.mark.parametrize("shape", [(1, 1), (2, 2), (1, 3), (3, 1)])
def test_start_tiles_of_an_edge_list_are_the_padded_matrix(threads, n, shape):
    """Every process's share of the start tiles (2D block-cyclic, tile edges 1..64, the last
    tile padded) with predecessors: the padded start matrix cut into tiles in NumPy."""
    from floydwarp.grid import ProcessGrid
    from floydwarp.predecessors import initial_predecessors
    from floydwarp.tiling import start_tiles

    rng = np.random.default_rng(n)
    m = 3 * n * n // 4
    src, dst, w = rng.integers(0, max(n, 1), m), rng.integers(0, max(n, 1), m), rng.integers(-2, 9, m)
    g = Graph.from_edges(src, dst, w, n=n)
    inf = np.int32(1 << 20)
    for bs in (1, 3, 16, 64):
        nt = -(-n // bs)
        full = np.full((nt * bs, nt * bs), inf, np.int32)
        np.fill_diagonal(full, 0)
        kept = g.edges()
        full[kept[0], kept[1]] = kept[2]                        # a kept self-loop is negative
        pred = initial_predecessors(full, inf)
        for rank in range(shape[0] * shape[1]):
            grid = ProcessGrid(*shape, rank)
            t, p = start_tiles(g, bs, np.int32, inf, with_pred=True, grid=grid)
            rows, cols = grid.tile_rows(nt), grid.tile_cols(nt)
            assert t.shape == p.shape == (len(rows), len(cols), bs, bs)
            for li, I in enumerate(rows):
                for lj, J in enumerate(cols):
                    block = np.s_[I * bs:(I + 1) * bs, J * bs:(J + 1) * bs]
                    assert np.array_equal(t[li, lj], full[block]), (bs, rank, I, J)
                    assert np.array_equal(p[li, lj], pred[block]), (bs, rank, I, J)


@pytest.mark.parametrize("kind", ["edges", "dense", "masked"])
@pytest.mark.parametrize("n", [0, 1, 7, 50])
def test_write_matrix_fills_a_host_array_in_place(threads, kind, n):
    """Graph.write_matrix: the start matrix written into the caller's array (its dtype), in
    bands that need not divide n, equal to to_matrix."""
    rng = np.random.default_rng(n)
    g = Graph.from_edges(rng.integers(0, max(n, 1), 3 * n), rng.integers(0, max(n, 1), 3 * n),
                         rng.integers(-1, 9, 3 * n), n=n)
    if kind != "edges":
        w = g.to_matrix("float64", np.inf)
        g = Graph.from_dense(w) if kind == "dense" else Graph.from_dense(np.ma.masked_array(w, mask=w == np.inf))
    for dtype, inf in (("int16", 999), ("float32", np.inf)):
        out = np.full((n, n), 7, dtype)
        g.write_matrix(out, inf, band_bytes=3 * max(n, 1) * out.itemsize)      # 3-row bands
        assert np.array_equal(out, g.to_matrix(dtype, inf))


@pytest.mark.parametrize("n", [1, 7, 50])
def test_graph_rows_stage_the_start_matrix_chunk_by_chunk(threads, n):
    """gpu/staging.py's GraphRows (no CUDA involved): each staging chunk, at any row offset,
    holds those rows of the start matrix in the run's dtype, as the upload sends them."""
    from floydwarp.gpu.staging import GraphRows

    w = fw.generate.erdos_renyi(n, 20, seed=n).to_matrix("float64", np.inf)
    g = Graph.from_dense(w)
    for dtype, inf in (("int16", 999), ("float64", np.inf)):
        source, full = GraphRows(g, dtype, inf), g.to_matrix(dtype, inf)
        for r0, r1 in ((0, n), (n // 2, n), (n - 1, n)):
            chunk = np.zeros((r1 - r0) * source.row_bytes + 16, np.uint8)[:(r1 - r0) * source.row_bytes]
            source.read(r0 * source.row_bytes, chunk)
            assert np.array_equal(chunk.view(dtype).reshape(r1 - r0, n), full[r0:r1])


@pytest.mark.parametrize("where", [0, 450, 899])
def test_edge_list_errors_name_the_first_bad_edge(threads, where):
    m = 900
    src, dst, w = np.arange(m) % 30, (np.arange(m) * 7) % 30, np.ones(m)
    bad = src.copy(); bad[-1] = 31; bad[where] = 30
    with pytest.raises(FloydwarpError, match=rf"edge {where}: src vertex id 30 is out of range 0..29 "
                                             rf"\({1 if where == m - 1 else 2} edge\(s\) out of range\)"):
        Graph.from_edges(bad, dst, w, n=30)
    bad = dst.copy(); bad[where] = -1
    with pytest.raises(FloydwarpError, match=rf"edge {where}: dst vertex id -1 .*\(1 edge\(s\) out of range\)"):
        Graph.from_edges(src, bad, w, n=30)
    for value in (np.nan, np.inf, -np.inf):
        bad = w.copy(); bad[where] = value
        with pytest.raises(FloydwarpError, match=rf"edge {where} \({src[where]} -> {dst[where]}\) has weight "
                                                 rf"{value}: weights must be finite"):
            Graph.from_edges(src, dst, bad, n=30)


def test_edge_list_only_self_loops_and_empty(threads):
    g = Graph.from_edges([0, 1, 1], [0, 1, 1], [3, 2, -1], n=2)    # only the negative self-loop is kept
    assert g.num_edges == 1 and g.weight_stats().min_weight == -1
    assert Graph.from_edges([0], [0], [5], n=1).weight_stats() == Graph.from_edges([], [], [], n=1).weight_stats()


@pytest.mark.parametrize("fmt", ["csr", "csc", "coo", "lil", "dok", "bsr"])
def test_scipy_formats_are_read_as_stored(fmt):
    rng = np.random.default_rng(3)
    n = 40
    rows, cols = rng.integers(0, n, 300), rng.integers(0, n, 300)
    vals = rng.integers(0, 9, 300).astype(float)                # explicit zeros and duplicates
    a = sp.coo_matrix((vals, (rows, cols)), shape=(n, n)).asformat(fmt)
    g = Graph.from_scipy(a)
    stored = a.tocoo()                                          # the stored entries (coo keeps duplicates)
    ref = Graph.from_edges(stored.row, stored.col, stored.data, n=n)
    assert all(np.array_equal(x, y) for x, y in zip(g.edges(), ref.edges()))
    d = fw.solve(a, dtype="float64").to_dense()
    if fmt != "coo":                                            # SciPy sums duplicates; these formats have none
        assert np.array_equal(d, scipy_fw(a.tocsr(), directed=True))    # explicit zeros are edges for both


def test_scipy_unsorted_indices_and_csr_array():
    a = sp.csr_matrix((np.array([4.0, 1.0, 2.0]), np.array([2, 0, 1]), np.array([0, 3, 3, 3])), shape=(3, 3))
    assert not a.has_sorted_indices
    g = Graph.from_scipy(a)
    assert [x.tolist() for x in g.edges()] == [[0, 0], [1, 2], [2.0, 4.0]]   # the self-loop 0->0 is dropped
    if hasattr(sp, "csr_array"):
        assert [x.tolist() for x in Graph.from_scipy(sp.csr_array(a)).edges()] == [[0, 0], [1, 2], [2.0, 4.0]]


def test_dense_scan_names_the_first_bad_entry(threads):
    n = 80
    w = np.random.default_rng(1).uniform(1, 5, (n, n))
    w[70, 3] = -np.inf
    w[60, 50] = np.nan                                          # the first in row order
    with pytest.raises(FloydwarpError, match=r"matrix entry \[60, 50\] has weight nan"):
        Graph.from_dense(w)
    w[60, 50] = 2
    with pytest.raises(FloydwarpError, match=r"\[70, 3\] has weight -inf"):
        Graph.from_dense(w)
    w[70, 3] = np.inf
    g = Graph.from_dense(w)
    finite = np.isfinite(w)
    assert g.num_edges == finite.sum() - n                      # the diagonal's positive self-loops are dropped
    s = g.weight_stats()
    assert (s.min_weight, s.max_weight, s.integral) == (w[finite].min(), w[finite].max(), False)


@pytest.mark.parametrize("directed", [True, False])
def test_scipy_weights_statistics_are_those_of_the_weights(threads, directed):
    """floyd_warshall's one pass writes the weights and their statistics: as a second scan would."""
    from floydwarp.scipy_compat import _weights

    rng = np.random.default_rng(5)
    n = 70
    w = rng.integers(0, 6, (n, n)).astype(float) - 1             # -1 .. 4, zeros = no edge
    g = Graph.from_scanned(*_weights(w, directed, False, False))
    again = Graph.from_dense(g.dense)
    assert g.weight_stats() == again.weight_stats() and g.num_edges == again.num_edges
    with pytest.raises(FloydwarpError, match=r"\[2, 5\] has weight -inf"):
        bad = sp.csr_matrix(w); bad[2, 5] = -np.inf; bad[9, 1] = -np.inf
        Graph.from_scanned(*_weights(bad, True, False, False))


@pytest.mark.parametrize("fmt", ["csr", "csc"])
def test_compressed_matrices_keep_graph_rules_over_threads(threads, fmt):
    """CSR and CSC entries are read in storage order (self-loops, explicit zeros, duplicates and
    unsorted indices as stored) and the scan compacts the dropped self-loops share by share."""
    rng = np.random.default_rng(11)
    n, m = 50, 1200
    rows, cols = rng.integers(0, n, m), rng.integers(0, n, m)
    rows[::7] = cols[::7]                                       # many self-loops, some negative
    vals = rng.integers(-2, 9, m).astype(float)
    major, minor = (rows, cols) if fmt == "csr" else (cols, rows)
    order = rng.permutation(m)                                  # lines in order, entries within them not
    order = order[np.argsort(major[order], kind="stable")]
    indptr = np.searchsorted(major[order], np.arange(n + 1))
    cls = sp.csr_matrix if fmt == "csr" else sp.csc_matrix
    a = cls((vals[order], minor[order], indptr), shape=(n, n))
    assert not a.has_canonical_format
    g = Graph.from_scipy(a)
    ref = reference_edges(n, rows[order], cols[order], vals[order])
    assert all(np.array_equal(x, y) for x, y in zip(g.edges(), ref))
    assert g.num_edges == ref[0].size


def test_compressed_matrix_with_spare_capacity_and_malformed_offsets():
    a = sp.csr_matrix((np.array([4.0, 1.0, 7.0]), np.array([1, 2, 0]), np.array([0, 1, 2, 2])), shape=(3, 3))
    assert [x.tolist() for x in Graph.from_scipy(a).edges()] == [[0, 1], [1, 2], [4.0, 1.0]]  # indptr[-1] entries
    for indptr in ([0, 5, 1, 2], [1, 1, 2, 2], [0, 2, 1, 2], [0, 1, 2, 4]):
        bad = sp.csr_matrix((3, 3))
        bad.indptr, bad.indices, bad.data = np.array(indptr, np.int32), np.array([1, 2, 0], np.int32), np.ones(3)
        with pytest.raises(FloydwarpError, match="malformed csr matrix"):
            Graph.from_scipy(bad)


@pytest.mark.parametrize("dtype", ["float64", "float32", "int64", "int32", "uint8"])
def test_weight_statistics_scan_matches_numpy(dtype):
    """The vectorized scan of edge weights (graph/kernels.weight_scan, through edge_stats) gives
    NumPy's least and greatest weight and whether all are integers: lengths 1-70 (a vector's
    remainder included), the fraction or the extreme anywhere, the first or the last entry."""
    from floydwarp.graph.edge_arrays import edge_stats

    rng = np.random.default_rng(sum(map(ord, dtype)))
    for _ in range(300):
        m = int(rng.integers(1, 71))
        w = rng.integers(0 if dtype == "uint8" else -50, 50, m).astype(dtype)
        at = int(rng.choice([0, m - 1, int(rng.integers(m))]))
        if dtype.startswith("float") and rng.random() < 0.5:
            w[at] += 0.25
        if rng.random() < 0.3:
            w[at] = np.iinfo(dtype).max if dtype[0] in "iu" else (-1e30 if rng.random() < 0.5 else 1e30)
        stats = edge_stats(7, w)
        integral = bool(np.all(w == np.floor(w)))
        assert (stats.min_weight, stats.max_weight, stats.integral) == (w.min(), w.max(), integral)
        assert type(stats.min_weight) is (int if integral else float)
