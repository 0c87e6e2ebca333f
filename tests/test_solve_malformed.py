"""Malformed input to ``solve``, ``Graph`` and the options: a FloydwarpError naming the problem,
never a raw error or a quietly different graph.  Each case is one a fuzzing run found
(bench/results/hunt-s24/solve/)."""
from __future__ import annotations

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp

import floydwarp as fw
from floydwarp.errors import FloydwarpError

M = np.array([[0, 3, np.inf], [np.inf, 0, 1], [2, np.inf, 0]])


@pytest.mark.parametrize("dtype", [np.uint8, np.uint32, np.uint64])
def test_unsigned_ids_give_the_vertex_count(dtype):
    """``initial=-1`` overflowed an unsigned id array: OverflowError."""
    g = fw.Graph.from_edges(np.array([0, 1], dtype), np.array([1, 2], dtype), [1, 2])
    assert g.n == 3 and fw.solve(g).to_dense().tolist() == [[0, 1, 3], [np.inf, 0, 2], [np.inf, np.inf, 0]]
    assert fw.Graph.from_edges(np.array([], dtype), np.array([], dtype)).n == 0


@pytest.mark.parametrize("n", [2.5, "3", True, -1])
def test_vertex_count_must_be_a_whole_number(n):
    with pytest.raises(FloydwarpError, match="n must be a non-negative integer"):
        fw.Graph.from_edges([0], [1], [1], n=n)
    assert fw.Graph.from_edges([0], [1], [1], n=np.int64(4)).n == 4


@pytest.mark.parametrize("missing", ["x", "3", [1], 1 + 0j])
def test_missing_must_be_a_number(missing):
    """"3" was parsed, and the entry 3 became "no edge"."""
    with pytest.raises(FloydwarpError, match="missing must be a real number"):
        fw.Graph.from_dense(np.array([[0, 3], [1, 0]]), missing=missing)
    assert fw.Graph.from_dense(np.array([[0, 3], [1, 0]]), missing=np.int64(3)).num_edges == 1


@pytest.mark.parametrize("threads", ["x", 2.5, True, 0])
def test_threads_must_be_a_positive_whole_number(threads):
    with pytest.raises(FloydwarpError, match="threads"):
        fw.solve(M, backend="cpu", threads=threads)


@pytest.mark.parametrize("value", ["False", -1, 2, np.array([True, False]), None])
def test_predecessors_must_be_true_or_false(value):
    """"False" computed predecessors; an array raised "truth value ... ambiguous"."""
    with pytest.raises(FloydwarpError, match="predecessors must be True or False"):
        fw.solve(M, backend="cpu", predecessors=value)
    with pytest.raises(FloydwarpError, match="predecessors must be True or False"):
        fw.solve_batch([M], predecessors=value)
    assert fw.solve(M, backend="cpu", predecessors=np.bool_(True)).pred is not None


@pytest.mark.parametrize("indptr", [[0, 1, 3], [0, 1, 2, 3, 3]])
def test_sparse_offsets_of_the_wrong_length_are_refused(indptr):
    """Too short: an entry of row 2 was read as row 1's and row 2 lost its edge, without a word."""
    for fmt in ("csr", "csc"):
        a = sp.csr_matrix((3, 3)).asformat(fmt)
        a.indptr, a.indices, a.data = np.array(indptr), np.array([1, 2, 0]), np.array([1.0, 2, 3])
        with pytest.raises(FloydwarpError, match=rf"malformed {fmt} matrix: its indptr has {len(indptr)} entries for "
                                                 r"3 (rows|columns) \(n \+ 1 = 4\)"):
            fw.solve(a)


def test_networkx_weights_that_are_not_numbers_are_named():
    g = nx.DiGraph()
    g.add_edge(0, 1, weight=[1])
    g.add_edge(1, 2, weight=2)
    with pytest.raises(FloydwarpError, match=r"edge 0: weight \[1\] is not a real number"):
        fw.solve(g)
    with pytest.raises(FloydwarpError, match="from_networkx needs a NetworkX graph, got list"):
        fw.Graph.from_networkx([1, 2])


@pytest.mark.parametrize("backend", [["cpu"], {"cpu": 1}])
def test_backend_must_be_a_name(backend):
    with pytest.raises(FloydwarpError, match="unknown backend"):
        fw.solve(M, backend=backend)


@pytest.mark.parametrize("labels, message", [(["a", "a"], "label 'a' names vertices 0 and 1"),
                                             ([["a"], "b"], r"label \['a'\] \(vertex 0\) cannot name a vertex")])
def test_labels_must_name_one_vertex_each(labels, message):
    """A repeated label named only one of its vertices: distance("a", "a") gave 0."""
    with pytest.raises(FloydwarpError, match=message):
        fw.Graph.from_edges([0], [1], [1], labels=labels)


def _labelled(labels):
    return fw.solve(fw.Graph.from_edges([0, 1], [1, 2], [5, 7], n=3, labels=labels))


@pytest.mark.parametrize("vertex", [True, 1.0, np.float64(2.0), [1], np.array(1), np.array([1])])
def test_a_vertex_of_another_kind_names_no_label(vertex):
    """A dict found the label 1 for True and 1.0; a list or an array raised "unhashable"."""
    r = _labelled([1, 2, 3])
    with pytest.raises(FloydwarpError, match="unknown vertex"):
        r.distance(vertex, 3)
    assert r.distance(np.int64(1), 3) == 12 and r.index(2) == 1


@pytest.mark.parametrize("i", [-1, 3, 1.5, "a", True, None])
def test_label_takes_only_an_index(i):
    """-1 read from the end, as a list does; 3 and 1.5 raised raw errors; unlabelled, anything came back."""
    for r in (_labelled(["a", "b", "c"]), fw.solve(M)):
        with pytest.raises(FloydwarpError, match="vertex index .* is out of range 0..2"):
            r.label(i)
    assert _labelled(["a", "b", "c"]).label(np.int64(2)) == "c" and fw.solve(M).label(2) == 2


@pytest.mark.parametrize("word", ["1_0", "\u0661", " 1", "1.0"])
def test_command_line_vertices_are_plain_numbers(word):
    """int() read "1_0" as 10 and Arabic-Indic digits as numbers."""
    for r in (fw.solve(np.zeros((11, 11))), _labelled([1, 10, 3])):
        with pytest.raises(FloydwarpError, match="unknown vertex"):
            r.find_vertex(word)
    assert fw.solve(np.zeros((11, 11))).find_vertex("10") == 10 and _labelled([1, 10, 3]).find_vertex("10") == 10


@pytest.mark.parametrize("value", ["x", None, np.array([1, 0])])
def test_metric_flags_must_be_true_or_false(value):
    r = fw.solve(M)
    with pytest.raises(FloydwarpError, match="wf_improved must be True or False"):
        r.closeness(value)
    with pytest.raises(FloydwarpError, match="directed must be True or False"):
        r.wiener_index(value)


def test_cli_weights_beyond_int64_are_an_option_error():
    """A traceback ("high is out of bounds for int64") where an option error belongs."""
    from click.testing import CliRunner

    from floydwarp.cli.app import app

    out = CliRunner().invoke(app, ["solve", "-g", "3", "-p", "100", "--weights", "0,9223372036854775808"])
    assert out.exit_code == 2 and "weights must lie within +-2**62" in out.output and "Traceback" not in out.output
