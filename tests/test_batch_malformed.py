"""Malformed and unusual input to ``solve_batch`` and ``GraphBatch``: a clear FloydwarpError
naming the problem (and the graph), or the right answer, never a raw error or a silently
wrong one.  Each case is one a fuzzing run found (bench/results/hunt-s24/)."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

import floydwarp as fw
from floydwarp.batch import GraphBatch
from floydwarp.errors import BackendUnavailableError, FloydwarpError

PATH = np.array([[0, 1.0, 0], [0, 0, 2], [0, 0, 0]])        # 0 -> 1 -> 2 as a sparse matrix (0: no entry)
PATH_DIST = [[0, 1, 3], [np.inf, 0, 2], [np.inf, np.inf, 0]]


def _csr(fmt="csr"):
    return sp.csr_matrix(PATH).asformat(fmt)


@pytest.mark.parametrize("fmt", ["csr", "csc"])
@pytest.mark.parametrize("part, dtype", [("data", ">f8"), ("data", ">i8"), ("indices", ">i4"), ("indptr", ">i8"),
                                         ("data", "float16")])
def test_sparse_arrays_of_another_byte_order_read_right(fmt, part, dtype):
    """Their bytes were read as this machine's: values like 3e-319, or valid indices refused."""
    m = _csr(fmt)
    setattr(m, part, getattr(m, part).astype(dtype))
    for members in ([m], [m, _csr(fmt)], [_csr("csc" if fmt == "csr" else "csr"), m]):
        r = fw.solve_batch(members)
        for g in range(len(members)):
            assert r[g].to_dense().tolist() == PATH_DIST
    assert fw.solve(m).to_dense().tolist() == PATH_DIST


@pytest.mark.parametrize("length", [1, 3])
def test_sparse_values_that_do_not_match_the_indices_are_refused(length):
    """A shorter ``data`` gave a graph the next one's weights, and read past the array's end."""
    bad = _csr()
    bad.data = np.arange(1.0, length + 1)
    with pytest.raises(FloydwarpError, match=rf"graph 1: malformed csr matrix: {length} values for its 2 stored "
                                             "indices"):
        fw.solve_batch([_csr(), bad, _csr()])
    hops = [[0, 1, 2], [np.inf, 0, 1], [np.inf, np.inf, 0]]
    assert fw.solve_batch([_csr(), bad], unweighted=True)[1].to_dense().tolist() == hops   # no value read


@pytest.mark.parametrize("part, dtype, rule", [("indices", np.float64, "integers"), ("indptr", np.float64, "integers"),
                                               ("data", object, "real numbers"), ("data", np.complex128,
                                                                                  "real numbers")])
def test_sparse_arrays_of_the_wrong_kind_are_refused(part, dtype, rule):
    """Float indices were truncated (1.5 read as 1), float offsets and object values raised raw errors."""
    bad = _csr()
    setattr(bad, part, getattr(bad, part).astype(dtype) + (0.5 if part == "indices" else 0))
    with pytest.raises(FloydwarpError, match=rf"graph 2: its csr matrix's {part} has dtype .*; it must hold {rule}"):
        fw.solve_batch([_csr(), _csr(), bad])
    if part != "data":
        with pytest.raises(FloydwarpError, match=rf"malformed csr matrix: its {part} has dtype float64"):
            fw.solve(bad)


def test_sparse_indices_with_no_integer_type_in_common_are_refused():
    """uint64 beside int64 joins as NumPy's float64 (ids above 2**53 rounded): no graph alone is wrong."""
    unsigned = _csr()
    unsigned.indices = unsigned.indices.astype(np.uint64)
    signed = _csr()
    signed.indices = signed.indices.astype(np.int64)
    with pytest.raises(FloydwarpError, match="graph 1: its csr matrix's indices has dtype uint64, which has no "
                                             "integer type in common with graph 0's int64"):
        fw.solve_batch([signed, unsigned])
    assert fw.solve_batch([unsigned, unsigned])[1].to_dense().tolist() == PATH_DIST


def test_sparse_text_beside_numbers_is_refused():
    bad = _csr()
    bad.data = np.array(["a", "b"])
    with pytest.raises(FloydwarpError, match=r"graph 1: its csr matrix's data has dtype <U1"):
        fw.solve_batch([_csr(), bad])


@pytest.mark.parametrize("weight", [np.array([1.0, 2.0], np.float16), np.array([1.0, 2.0], ">f8"),
                                    np.array([1, 2], ">i4")])
def test_pyg_weights_of_any_real_dtype(weight, tmp_path):
    ei, ptr = np.array([[0, 1], [1, 2]]), np.array([0, 3])
    want = [[0, 1, 3], [np.inf, 0, 2], [np.inf, np.inf, 0]]
    assert fw.solve_batch(GraphBatch.from_pyg(ei, weight, ptr=ptr)).to_dense()[0].tolist() == want
    np.savez(tmp_path / "b.npz", edge_index=ei, ptr=ptr, edge_weight=weight)
    assert fw.solve_batch(GraphBatch.load(tmp_path / "b.npz")).to_dense()[0].tolist() == want


class _DGL:
    """A batched DGL graph's three calls."""

    def __init__(self, edges, sizes, edata=None):
        self._edges, self._sizes, self.edata = edges, sizes, edata or {}

    def edges(self):
        return self._edges

    def batch_num_nodes(self):
        return self._sizes


@pytest.mark.parametrize("graph, kw, message", [
    (_DGL((np.array([0, 1]), np.array([1])), np.array([2])), {}, r"sources of shape \(2,\) and targets of shape "
                                                                  r"\(1,\)"),
    (_DGL((np.array([0]), np.array([1])), np.array([2]), {"w": np.array([3.0])}), {"edge_weight": "weight"},
     r"edge_weight='weight': the graph has no such edata field \(it has 'w'\)"),
    (_DGL((np.array([0]), np.array([1]), np.array([2])), np.array([2])), {}, r"edges\(\) must give \(sources, "
                                                                             r"targets\); got tuple"),
    (_DGL(None, np.array([2])), {}, r"edges\(\) must give \(sources, targets\); got NoneType"),
    (_DGL((np.array([0]), np.array([1])), np.array([2.5])), {}, "batch_num_nodes must hold integers"),
])
def test_malformed_dgl_graphs(graph, kw, message):
    with pytest.raises(FloydwarpError, match=message):
        fw.solve_batch(graph, **kw)


def test_a_dgl_edata_field_by_name():
    g = _DGL((np.array([0, 1]), np.array([1, 2])), np.array([3]), {"w": np.array([4.0, 5.0])})
    assert fw.solve_batch(g, edge_weight="w").to_dense()[0].tolist() == [[0, 4, 9], [np.inf, 0, 5],
                                                                         [np.inf, np.inf, 0]]


@pytest.mark.parametrize("max_n", ["x", float("nan"), float("inf"), [3], -1, 2.7, True])
def test_max_n_must_be_a_whole_number(max_n):
    for graphs in ([np.zeros((2, 2))], []):
        with pytest.raises(FloydwarpError, match="max_n must be a non-negative integer"):
            fw.solve_batch(graphs, max_n=max_n)
    assert fw.solve_batch([np.zeros((2, 2))], max_n=np.int32(3)).dist.shape == (1, 3, 3)


@pytest.mark.parametrize("num_graphs", ["x", 1.5, -1, None])
def test_num_graphs_must_be_a_whole_number(num_graphs):
    ei = np.array([[0], [1]])
    for where in ({"ptr": np.array([0, 2])}, {"batch": np.array([0, 0])}):
        if num_graphs is None:
            assert GraphBatch.from_pyg(ei, num_graphs=np.array(1), **where).count == 1
            continue
        with pytest.raises(FloydwarpError, match="num_graphs must be a non-negative integer"):
            GraphBatch.from_pyg(ei, num_graphs=num_graphs, **where)


def test_output_is_checked_before_the_solve(monkeypatch):
    from floydwarp.batch import solve

    solved = []                 # the engines asked for: the output's GPU, never the batch's engine

    def no_gpu(name, on_device):
        solved.append(name)
        raise BackendUnavailableError("no GPU here")

    monkeypatch.setattr(solve, "resolve", no_gpu)
    with pytest.raises(BackendUnavailableError, match="output='device' needs the GPU: no GPU here"):
        fw.solve_batch([np.zeros((2, 2))], output="device")
    assert solved == ["gpu"]
    with pytest.raises(FloydwarpError, match="output must be 'host' or 'device', got 'gpu'"):
        fw.solve_batch([np.zeros((2, 2))], output="gpu")


def test_a_ragged_nested_list_names_the_graph():
    with pytest.raises(FloydwarpError, match=r"graph 1: a weight matrix must be an n x n array of numbers"):
        fw.solve_batch([[[0, 1], [1, 0]], [[0, 1], [1]]])
    with pytest.raises(FloydwarpError, match=r"a weight matrix must be an n x n array of numbers"):
        fw.solve([[0, 1], [1]])


def test_batch_files_that_are_not_one_batch(tmp_path):
    np.save(tmp_path / "a.npy", np.zeros(3))
    with pytest.raises(FloydwarpError, match=r"a\.npy: not a \.npz file \(a single ndarray\)"):
        GraphBatch.load(tmp_path / "a.npy")
    np.savez(tmp_path / "b.npz", edge_index=np.array([[0], [1]]), ptr=np.array([0, 2]), graphs=np.zeros((3, 4, 4)))
    with pytest.raises(FloydwarpError, match="holds PyG arrays or a padded array, not both; this one holds "
                                             "edge_index, ptr and graphs"):
        GraphBatch.load(tmp_path / "b.npz")
    np.savez(tmp_path / "c.npz", graphs=np.ones((1, 2, 2)), edge_weight=np.array([9.0]))
    with pytest.raises(FloydwarpError, match="this one holds edge_weight and graphs"):
        GraphBatch.load(tmp_path / "c.npz")


class _PyG:
    edge_index, ptr = np.array([[0], [1]]), np.array([0, 2])


@pytest.mark.parametrize("graphs", [[np.zeros((2, 2))], _PyG(), GraphBatch.from_pyg(_PyG.edge_index, ptr=_PyG.ptr)])
def test_sizes_only_for_a_padded_array(graphs):
    """It was dropped without a word: the batch's own sizes were used."""
    with pytest.raises(FloydwarpError, match="sizes= is for a padded"):
        fw.solve_batch(graphs, sizes=[1])


@pytest.mark.parametrize("graphs", [[np.zeros((2, 2))], np.zeros((1, 2, 2)),
                                    GraphBatch.from_pyg(_PyG.edge_index, ptr=_PyG.ptr)])
def test_edge_weight_only_for_pyg_and_dgl(graphs):
    for unweighted in (False, True):
        with pytest.raises(FloydwarpError, match="edge_weight= is for a PyG or DGL batch"):
            fw.solve_batch(graphs, edge_weight=np.array([7.0]), unweighted=unweighted)


def test_negative_cycle_beside_a_clip_beyond_the_dtype():
    """The float64 rerun of a negative cycle clipped in the kernels' dtype: 2**40 overflowed int16."""
    cycle, path = np.array([[0, -2.0], [1, 0]]), np.array([[0, 3.0], [np.inf, 0]])
    r = fw.solve_batch([cycle, path], max_distance=2 ** 40)
    assert r.negative_cycle.tolist() == [True, False] and r[1].to_dense().tolist() == [[0, 3], [np.inf, 0]]
    assert fw.solve_batch([cycle], max_distance=1)[0].to_dense().max() <= 1
