"""floydwarp.io: every graph and result format, both ways, and every malformed file we refuse."""
from __future__ import annotations

import gzip
import json
import os
import struct

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import floydwarp as fw
import floydwarp.io as fio
from floydwarp.dlpack import from_dlpack, is_foreign_tensor, maybe_from_dlpack

INF_HW = 2 ** 30 - 1


def random_graph(seed, n=12, m=40, low=-3, high=20, floats=False):
    rng = np.random.default_rng(seed)
    src = rng.integers(0, n, m)
    dst = rng.integers(0, n, m)
    w = rng.uniform(low, high, m).round(3) if floats else rng.integers(low, high + 1, m)
    return fw.Graph.from_edges(src, dst, w, n=n)


def same_graph(g, h):
    assert g.n == h.n
    assert np.array_equal(g.to_matrix("float64"), h.to_matrix("float64"))


def listing(folder):
    return sorted(os.listdir(folder))


def error_of(fn, *args, **kwargs) -> str:
    with pytest.raises(fw.FloydwarpError) as info:
        fn(*args, **kwargs)
    return str(info.value)


def write_bytes(path, data: bytes):
    path.write_bytes(data)
    return path


# ---------------------------------------------------------------------- registry
def test_format_chosen_by_extension_and_by_name(tmp_path):
    assert fio.graph_format("g.in").name == "nthu"
    assert fio.graph_format("g.gr").name == "dimacs"
    assert fio.graph_format("g.gr.gz").name == "dimacs"
    assert fio.graph_format("g.mtx").name == "mtx"
    assert {fio.graph_format(f"g.{ext}").name for ext in ("csv", "tsv", "txt")} == {"edgelist"}
    assert fio.graph_format("g.npy").name == "npy"
    assert fio.result_format("r.npz").name == "npz"
    assert fio.result_format("r.npy").name == "npy"
    assert fio.result_format("r.out").name == "nthu"
    assert fio.graph_format("whatever.dat", format="dimacs").name == "dimacs"
    assert fio.graph_format("whatever.dat", format=".csv").name == "edgelist"
    assert fio.graph_format("whatever.dat", format="homework").name == "nthu"
    assert "unknown graph format" in error_of(fio.graph_format, "g.in", format="xml")
    msg = error_of(fio.read_graph, tmp_path / "g.unknown")
    assert "g.unknown" in msg and "extension" in msg
    assert "no such file" in error_of(fio.read_graph, tmp_path / "missing.gr")
    assert isinstance(fio.GRAPH_FORMATS, dict) and isinstance(fio.RESULT_FORMATS, dict)
    assert fio.atomic_path is not None


# ---------------------------------------------------------------------- round trips
@pytest.mark.parametrize("ext", ["in", "gr", "mtx", "csv", "tsv", "txt", "edges", "npy", "txt.gz", "gr.gz", "mtx.gz"])
@pytest.mark.parametrize("seed", [0, 1])
def test_graph_round_trip(tmp_path, ext, seed):
    g = random_graph(seed)
    path = tmp_path / f"g.{ext}"
    fio.write_graph(g, path)
    h = fio.read_graph(path)
    same_graph(g, h)
    assert listing(tmp_path) == [path.name]           # no temporary files left


@pytest.mark.parametrize("ext", ["gr", "mtx", "csv", "txt", "npy"])
def test_float_weights_round_trip_exactly(tmp_path, ext):
    g = random_graph(3, floats=True)
    fio.write_graph(g, tmp_path / f"g.{ext}")
    same_graph(g, fio.read_graph(tmp_path / f"g.{ext}"))


def test_round_trip_keeps_isolated_vertices_and_labels(tmp_path):
    g = fw.Graph.from_edges([0, 1], [1, 2], [3, 4], n=6)
    for name in ("g.txt", "g.csv", "g.tsv"):
        fio.write_graph(g, tmp_path / name)
        same_graph(g, fio.read_graph(tmp_path / name))
    # a CSV has no room for n: the last vertex, which no edge names, is a row of its own that
    # any CSV reader takes, a self-loop of weight 0 (Graph drops it as an edge)
    assert (tmp_path / "g.csv").read_text().splitlines() == ["source,target,weight", "0,1,3", "1,2,4", "5,5,0"]
    empty = fw.Graph.from_edges([], [], [], n=3)
    fio.write_graph(empty, tmp_path / "empty.csv")
    same_graph(empty, fio.read_graph(tmp_path / "empty.csv"))
    lonely = fw.Graph.from_edges([0], [1], [2.5], n=4, labels=["a", "b", "c", "d"])
    for name in ("lonely.csv", "lonely.txt"):
        fio.write_graph(lonely, tmp_path / name)
        back = fio.read_graph(tmp_path / name)
        assert back.labels == ["a", "b", "c", "d"] and back.num_edges == 1
        same_graph(lonely, back)
    lab = fw.Graph.from_edges([0, 1, 2], [1, 2, 0], [1, 2, 3], labels=["a", "b c", 'd"e'])
    fio.write_graph(lab, tmp_path / "lab.csv")
    back = fio.read_graph(tmp_path / "lab.csv")
    assert back.labels == ["a", "b c", 'd"e']
    same_graph(lab, back)
    ints = fw.Graph.from_edges([0, 1], [1, 2], [5, 6], labels=[10, 20, 30])
    fio.write_graph(ints, tmp_path / "ints.txt")
    back = fio.read_graph(tmp_path / "ints.txt")
    assert back.labels == [10, 20, 30]
    same_graph(ints, back)


@pytest.mark.parametrize("ext", ["gr", "mtx", "csv", "txt"])
def test_weights_beyond_int64_are_written_as_they_are(tmp_path, ext):
    """A whole float at or above 2**63 was cast to int64 and written -9223372036854775808 (a huge
    weight read back as a huge negative one); uint64 weights wrapped the same way."""
    for w in (np.array([1e20, 3.0]), np.array([-1e19, 2.0]), np.array([2.0 ** 63, 1.5])):
        g = fw.Graph.from_edges([0, 1], [1, 2], w, n=3)
        fio.write_graph(g, tmp_path / f"g.{ext}")
        same_graph(g, fio.read_graph(tmp_path / f"g.{ext}"))
    from floydwarp.io._text import format_rows

    assert b"".join(format_rows([np.array([2 ** 64 - 1, 7], dtype=np.uint64)])) == b"18446744073709551615\n7\n"


def test_labelled_edge_lists_read_integer_weights_exactly(tmp_path):
    """Integer weights of a labelled edge list were read as float64: 2**53 + 1 became 2**53."""
    g = fw.Graph.from_edges([0, 1], [1, 2], [2 ** 53 + 1, -(2 ** 62) - 3], labels=["a", "b", "c"])
    for name in ("g.csv", "g.txt"):
        fio.write_graph(g, tmp_path / name)
        back = fio.read_graph(tmp_path / name)
        assert back.edges()[2].tolist() == [2 ** 53 + 1, -(2 ** 62) - 3]


def test_a_npy_graph_refuses_integer_weights_float64_rounds(tmp_path):
    """A .npy graph is a float64 matrix: an int64 weight it would round is refused, not written."""
    with pytest.raises(fw.FloydwarpError, match=r"round integer weight 9007199254740993 \(beyond 2\*\*53\)"):
        fio.write_graph(fw.Graph.from_edges([0, 1], [1, 2], [2 ** 60, 2 ** 53 + 1]), tmp_path / "g.npy")
    assert not (tmp_path / "g.npy").exists()
    g = fw.Graph.from_edges([0, 1], [1, 2], [2 ** 60, -(2 ** 53)])      # both held exactly by float64
    fio.write_graph(g, tmp_path / "g.npy")
    same_graph(g, fio.read_graph(tmp_path / "g.npy"))


@pytest.mark.parametrize("labels", [["a;b", "c", "d"], ["a,b", "c;", "d"], [" a", "a", "a "], ['"q"', "q", 'q""']])
@pytest.mark.parametrize("name, header", [("g.csv", None), ("g.csv", False), ("g.tsv", None), ("g.txt", True)])
def test_labels_that_look_like_separators_or_spaces_round_trip(tmp_path, labels, name, header):
    """Labels holding a separator the reader could detect, quotes or spaces around them: read back
    as written, or refused where the file cannot say them.  Before, "a;b" in a .txt file read
    back as labels "a" and "b c 5"; quoted " a" and "a" were stripped into one vertex."""
    g = fw.Graph.from_edges([0, 1, 2], [1, 2, 0], [5, 6, 7], labels=labels)
    unsayable = any(ch.isspace() or ch == '"' for lab in labels for ch in lab) and not name.endswith(".csv")
    if unsayable:
        with pytest.raises(fw.FloydwarpError, match="cannot be written to a whitespace-separated edge list"):
            fio.write_graph(g, tmp_path / name, header=header)
        return
    fio.write_graph(g, tmp_path / name, header=header)
    back = fio.read_graph(tmp_path / name)
    assert back.labels == labels
    same_graph(g, back)


@pytest.mark.parametrize("name", ["g.csv", "g.tsv", "g.txt"])
def test_labels_naming_one_integer_twice_are_refused(tmp_path, name):
    """A CSV of labels "01", "1", "2" read back as indices: "01" and "1" became one vertex."""
    g = fw.Graph.from_edges([0, 1], [1, 2], [1, 2], labels=["01", "1", "2"])
    with pytest.raises(fw.FloydwarpError, match="labels '01' and '1' name the same integer"):
        fio.write_graph(g, tmp_path / name)
    assert listing(tmp_path) == []
    g = fw.Graph.from_edges([0, 1], [1, 2], [1, 2], labels=["01", "x", "1"])     # names, not integers
    fio.write_graph(g, tmp_path / name)
    assert fio.read_graph(tmp_path / name).labels == ["01", "x", "1"]


def test_a_whitespace_edge_list_refuses_labels_its_reader_would_split(tmp_path):
    g = fw.Graph.from_edges([0], [1], [5], labels=["a;b", "c"])
    with pytest.raises(fw.FloydwarpError, match="'a;b' cannot be written"):
        fio.write_graph(g, tmp_path / "g.txt")
    fio.write_graph(g, tmp_path / "g.tsv", header=True)      # its header line sets the separator
    assert fio.read_graph(tmp_path / "g.tsv").labels == ["a;b", "c"]


@pytest.mark.parametrize("cut", [-1, 1], ids=["a line lost", "a line more"])
def test_an_edge_list_whose_edge_count_differs_from_its_first_line_is_refused(tmp_path, cut):
    g = fw.Graph.from_edges([0, 1, 2], [1, 2, 3], [5, 6, 7], n=4)
    fio.write_graph(g, tmp_path / "g.txt")
    lines = (tmp_path / "g.txt").read_text().splitlines()
    assert lines[0] == "# floydwarp edgelist n=4 m=3"
    lines = lines[:cut] if cut < 0 else [*lines, "3 0 1"]
    (tmp_path / "g.txt").write_text("\n".join(lines) + "\n")
    with pytest.raises(fw.FloydwarpError, match="line 1 declares m=3 edges, the file holds"):
        fio.read_graph(tmp_path / "g.txt")


@pytest.mark.parametrize("text", ["a,b,1\nb,c,1_000\n", 'a,"b",1\nb,c,1_000\n', "a b 1\nb c １２\n",
                                  'a,"b",1\nb,c,١٢\n'])
def test_weights_python_would_take_are_refused_as_the_number_readers_do(tmp_path, text):
    """int() and float() take 1_000 and other scripts' digits; the vectorized readers refuse them,
    and so do the labelled and quoted paths now, naming the line."""
    (tmp_path / "g.csv").write_text(text, encoding="utf-8")
    with pytest.raises(fw.FloydwarpError, match="line 2: weight .* is not a number"):
        fio.read_graph(tmp_path / "g.csv")


def test_quoted_fields_keep_their_spaces_and_a_stray_quote_is_refused(tmp_path):
    (tmp_path / "g.csv").write_text('" a",b,1\n"a" , b , 9\n c,"b ",2\n')
    g = fio.read_graph(tmp_path / "g.csv")
    assert g.labels == [" a", "b", "a", "c", "b "] and g.edges()[2].tolist() == [1, 9, 2]
    (tmp_path / "long.csv").write_text('"a","b",3\n"' + "x" * 200_000 + '",c,4\n')   # beyond csv's field limit
    assert fio.read_graph(tmp_path / "long.csv").labels == ["a", "b", "x" * 200_000, "c"]
    (tmp_path / "bad.csv").write_text('a,b,1\nc"d,e,2\n')
    with pytest.raises(fw.FloydwarpError, match="line 2: a quote inside an unquoted field"):
        fio.read_graph(tmp_path / "bad.csv")


def test_write_graph_accepts_arrays_and_networkx(tmp_path):
    w = np.array([[0, 2, np.inf], [np.inf, 0, 1], [4, np.inf, 0]])
    fio.write_graph(w, tmp_path / "w.gr")
    assert np.array_equal(fio.read_graph(tmp_path / "w.gr").to_matrix("float64"), w)


@settings(max_examples=40, deadline=None)
@given(n=st.integers(0, 12), seed=st.integers(0, 2**32 - 1), floats=st.booleans(), named=st.booleans(),
       ext=st.sampled_from(["csv", "tsv", "txt", "gr", "mtx", "npy", "in"]))
def test_round_trip_property(tmp_path_factory, n, seed, floats, named, ext):
    rng = np.random.default_rng(seed)
    m = int(rng.integers(0, 3 * n + 1)) if n else 0
    src, dst = rng.integers(0, max(n, 1), m), rng.integers(0, max(n, 1), m)
    w = rng.uniform(-5, 50, m).round(2) if floats and ext != "in" else rng.integers(-5, 50, m)
    labels = [f"city-{i}" for i in rng.permutation(n)] if named and ext in ("csv", "tsv", "txt") else None
    g = fw.Graph.from_edges(src, dst, w, n=n, labels=labels)
    folder = tmp_path_factory.mktemp("rt")
    path = folder / f"g.{ext}"
    fio.write_graph(g, path)
    h = fio.read_graph(path)
    if labels is None:
        same_graph(g, h)
    else:                     # every named vertex comes back, isolated ones too, in reading order
        assert sorted(h.labels or []) == sorted(labels) and h.num_edges == g.num_edges
        order = [g.labels.index(lab) for lab in h.labels or []]
        assert np.array_equal(h.to_matrix("float64"), g.to_matrix("float64")[np.ix_(order, order)])


# ---------------------------------------------------------------------- NTHU homework
def homework_in(path, v, edges):
    data = struct.pack("<ii", v, len(edges)) + b"".join(struct.pack("<iii", *e) for e in edges)
    return write_bytes(path, data)


def test_nthu_in_reads_the_homework_layout(tmp_path):
    path = homework_in(tmp_path / "c.in", 4, [(0, 1, 3), (1, 2, 4), (0, 2, 9), (3, 0, 1)])
    g = fio.read_graph(path)
    assert g.n == 4 and g.num_edges == 4
    assert g.to_matrix("int32")[0].tolist() == [0, 3, 9, INF_HW]


def test_nthu_out_is_exactly_the_homework_bytes(tmp_path):
    path = homework_in(tmp_path / "c.in", 4, [(0, 1, 3), (1, 2, 4), (0, 2, 9), (3, 0, 1)])
    r = fw.solve(fio.read_graph(path), backend="reference", dtype="int64")
    out = tmp_path / "c.out"
    fio.write_result(r, out, inputs=(path,))
    expected = [[0, 3, 7, INF_HW], [INF_HW, 0, 4, INF_HW], [INF_HW, INF_HW, 0, INF_HW], [1, 4, 8, 0]]
    assert out.read_bytes() == b"".join(struct.pack("<i", x) for row in expected for x in row)
    assert out.stat().st_size == 4 * 4 * 4
    back = fio.read_result(out)
    assert back.dist.tolist() == expected and back.distance(0, 3) == np.inf and back.distance(3, 2) == 8


def test_nthu_out_from_float_results(tmp_path):
    r = fw.solve(np.array([[0, 2.0, np.inf], [np.inf, 0, 3.0], [np.inf, np.inf, 0]]), dtype="float64",
                 backend="reference")
    fio.write_result(r, tmp_path / "f.out")
    assert np.frombuffer((tmp_path / "f.out").read_bytes(), "<i4").tolist() == [
        0, 2, 5, INF_HW, 0, 3, INF_HW, INF_HW, 0]


@pytest.mark.parametrize("data, fragments", [
    (b"\x01\x00\x00", ["truncated", "3 bytes"]),
    (struct.pack("<ii", 3, 2) + struct.pack("<iii", 0, 1, 5), ["truncated", "E = 2", "1 whole edge"]),
    (struct.pack("<ii", 3, 1) + struct.pack("<iii", 0, 1, 5) + b"\x00" * 5, ["E = 1", "disagrees with the file size"]),
    (struct.pack("<ii", 3, 1) + struct.pack("<iii", 0, 1, 5)[:-2], ["truncated", "10 stray byte"]),
    (struct.pack("<ii", 3, 2) + struct.pack("<iii", 0, 1, 5) + struct.pack("<iii", 1, 7, 5),
     ["byte 24", "edge 1", "7", "out of range 0..2"]),
    (struct.pack("<ii", 3, 1) + struct.pack("<iii", -1, 1, 5), ["byte 8", "source vertex -1"]),
    (struct.pack("<ii", -3, 0), ["byte 0", "V = -3"]),
    (struct.pack("<ii", 3, -1), ["byte 4", "E = -1"]),
])
def test_nthu_in_refuses_bad_binaries(tmp_path, data, fragments):
    path = write_bytes(tmp_path / "bad.in", data)
    msg = error_of(fio.read_graph, path)
    assert str(path) in msg
    for fragment in fragments:
        assert fragment in msg


def test_nthu_out_refuses_what_the_format_cannot_say(tmp_path):
    cyc = fw.solve(np.array([[0, 1, np.inf], [np.inf, 0, 1], [-5, np.inf, 0]]), backend="reference")
    assert "negative cycle" in error_of(fio.write_result, cyc, tmp_path / "c.out")
    big = fw.solve(np.array([[0, 2.0 ** 31], [np.inf, 0]]), backend="reference")
    assert "does not fit" in error_of(fio.write_result, big, tmp_path / "b.out")
    frac = fw.solve(np.array([[0, 0.5], [np.inf, 0]]), backend="reference")
    assert "not an integer" in error_of(fio.write_result, frac, tmp_path / "f.out")
    assert "integer weights only" in error_of(fio.write_graph, fw.Graph.from_edges([0], [1], [0.5]), tmp_path / "f.in")
    assert listing(tmp_path) == []                      # nothing half-written


@pytest.mark.parametrize("size, fragment", [(10, "whole number of int32"), (12, "not V*V*4")])
def test_nthu_out_reader_refuses_truncated_files(tmp_path, size, fragment):
    path = write_bytes(tmp_path / "t.out", b"\x00" * size)
    assert fragment in error_of(fio.read_result, path)


# ---------------------------------------------------------------------- DIMACS
def test_dimacs_keeps_ids_as_labels(tmp_path):
    path = write_bytes(tmp_path / "g.gr", b"c a comment\nc another\np sp 4 3\nc mid\na 1 2 7\n\na 2 4 1\na 4 3 2\n")
    g = fio.read_graph(path)
    assert g.n == 4 and g.labels == [1, 2, 3, 4]
    r = fw.solve(g, predecessors=True, backend="reference")
    assert r.distance(1, 3) == 10 and r.path(1, 3) == [1, 2, 4, 3]


@pytest.mark.parametrize("text, fragments", [
    (b"p sp 3 3\na 1 2 1\na 2 3 1\n", ["line 1", "m = 3", "has 2"]),
    (b"c x\np sp 3 1\na 1 4 1\n", ["line 3", "vertex id 4", "1..3"]),
    (b"p sp 3 1\na 0 2 1\n", ["line 2", "vertex id 0"]),
    (b"c only comments\n", ["no problem line"]),
    (b"a 1 2 3\np sp 3 1\n", ["line 1", "problem line"]),
    (b"p sp 3 1\na 1 2 x\n", ["line 2", "'x'", "not a number"]),
    (b"p sp 3 1\na 1 2 nan\n", ["line 2", "nan", "finite"]),
    (b"p sp 3 1\na 1 2 inf\n", ["line 2", "inf", "finite"]),
    (b"p sp 3 2\na 1 2 1\nx 2 3 1\n", ["line 3", "'x'"]),
    (b"p sp 3 2\na 1 2 1\na 2 3\n", ["line 3", "'a u v w'"]),
    (b"p sp 3 2\na 1 2 1\np sp 3 2\n", ["line 3", "second problem line"]),
    (b"p max 3 1\na 1 2 1\n", ["line 1", "malformed problem line"]),
    (b"p sp 3 1\na 1.5 2 1\n", ["line 2", "integers"]),
])
def test_dimacs_refuses_bad_files(tmp_path, text, fragments):
    path = write_bytes(tmp_path / "bad.gr", text)
    msg = error_of(fio.read_graph, path)
    assert str(path) in msg
    for fragment in fragments:
        assert fragment in msg, msg


# ---------------------------------------------------------------------- Matrix Market
def test_mtx_symmetric_pattern_and_skew(tmp_path):
    sym = write_bytes(tmp_path / "s.mtx",
                      b"%%MatrixMarket matrix coordinate integer symmetric\n% c\n3 3 2\n2 1 5\n3 3 -1\n")
    m = fio.read_graph(sym).to_matrix("float64")
    assert m[1, 0] == m[0, 1] == 5 and m[2, 2] == -1
    pat = write_bytes(tmp_path / "p.mtx", b"%%MatrixMarket matrix coordinate pattern general\n2 2 1\n1 2\n")
    assert fio.read_graph(pat).to_matrix("float64")[0, 1] == 1
    skew = write_bytes(tmp_path / "k.mtx", b"%%MatrixMarket matrix coordinate real skew-symmetric\n2 2 1\n2 1 2.5\n")
    m = fio.read_graph(skew).to_matrix("float64")
    assert m[1, 0] == 2.5 and m[0, 1] == -2.5


def test_mtx_matches_scipy(tmp_path):
    import scipy.io
    import scipy.sparse as sp

    a = sp.random(15, 15, density=0.3, random_state=4, format="coo")
    scipy.io.mmwrite(str(tmp_path / "a.mtx"), a)
    g = fio.read_graph(tmp_path / "a.mtx")
    same_graph(g, fw.Graph.from_scipy(a))


@pytest.mark.parametrize("text, fragments", [
    (b"%%MatrixMarket matrix coordinate real general\n3 3 2\n1 2 1\n", ["line 2", "says 2 entries", "has 1"]),
    (b"%%MatrixMarket matrix coordinate real general\n3 4 1\n1 2 1\n", ["line 2", "3 x 4", "square"]),
    (b"%%MatrixMarket matrix coordinate real general\n3 3 1\n1 5 1\n", ["line 3", "(1, 5)", "outside"]),
    (b"%%MatrixMarket matrix coordinate real general\n% c\n3 3 2\n1 2 1\n2 x 1\n", ["line 5", "column", "'x'"]),
    (b"%%MatrixMarket matrix coordinate real general\n3 3 1\n1 2 nan\n", ["line 3", "nan"]),
    (b"%%MatrixMarket matrix coordinate real general\n3 3 2\n1 2 1\n2 3\n", ["line 4", "expected 3 fields"]),
    (b"%%MatrixMarket matrix array real general\n2 2\n1\n2\n3\n4\n", ["line 1", "array"]),
    (b"%%MatrixMarket matrix coordinate complex general\n1 1 0\n", ["line 1", "complex"]),
    (b"%%MatrixMarket matrix coordinate integer general\n2 2 1\n1 2 1.5\n", ["line 3", "not an integer"]),
    (b"not a banner\n", ["line 1", "banner"]),
    (b"%%MatrixMarket matrix coordinate real general\n3 3\n", ["line 2", "size line"]),
])
def test_mtx_refuses_bad_files(tmp_path, text, fragments):
    path = write_bytes(tmp_path / "bad.mtx", text)
    msg = error_of(fio.read_graph, path)
    assert str(path) in msg
    for fragment in fragments:
        assert fragment in msg, msg


# ---------------------------------------------------------------------- issue 25: sizes and stray bytes
def _npy_header(shape):
    import io

    buf = io.BytesIO()
    np.lib.format.write_array_header_1_0(buf, {"descr": "<i2", "fortran_order": False, "shape": shape})
    return buf.getvalue() + bytes(64)


@pytest.mark.parametrize("name, data, fragments", [
    ("huge.gr", b"c big\np sp 1000000000000 1\na 1 2 3\n", ["line 2", "p sp 1000000000000 1", "at most 2147483647"]),
    ("huge.mtx", b"%%MatrixMarket matrix coordinate integer general\n1000000000000 1000000000000 1\n1 2 3\n",
     ["line 2", "1000000000000 x 1000000000000", "at most 2147483647"]),
    ("huge.txt", b"# floydwarp edgelist n=1000000000000 m=1\n0 1 3\n", ["line 1", "n=1000000000000", "at most"]),
    ("id.csv", b"0,1,3\n5,1000000000000,2\n", ["line 2", "vertex id 1000000000000", "at most"]),
    ("id64.csv", b"0,1,3\n5,100000000000000000000000,2\n", ["line 2", "vertex id 100000000000000000000000"]),
    ("quoted.csv", b'"0","1",3\n5,100000000000000000000000,2\n', ["line 2", "vertex id 100000000000000000000000"]),
    ("id64.mtx", b"%%MatrixMarket matrix coordinate integer general\n3 3 1\n1 100000000000000000000000 3\n",
     ["line 3", "out of range", "at most 2147483647"]),
    ("huge.npy", _npy_header((10 ** 12, 10 ** 12)), ["not a readable .npy matrix"]),
    ("big.npy", _npy_header((3 * 10 ** 9, 3 * 10 ** 9)), ["not a readable .npy matrix"]),
])
def test_impossible_sizes_refused_before_allocating(tmp_path, name, data, fragments):
    """A size no all-pairs result can have is bad input, named with its line, refused before any
    memory is taken (it was a MemoryError: "out of memory", exit 1)."""
    import tracemalloc

    path = write_bytes(tmp_path / name, data)
    tracemalloc.start()
    try:
        msg = error_of(fio.read_graph, path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 16 << 20, peak
    assert msg.startswith(str(path)) and "\n" not in msg
    for fragment in fragments:
        assert fragment in msg, msg


def test_graph_refuses_more_vertices_than_a_result_can_hold():
    assert "at most 2147483647" in error_of(fw.Graph.from_edges, [0], [1], [1], n=10 ** 12)
    assert "1000000000001 vertices" in error_of(fw.Graph.from_edges, [0], [10 ** 12], [1])
    assert "at most" in error_of(fw.generate.erdos_renyi, 10 ** 12, 0)


@pytest.mark.parametrize("name, data, fragments", [
    ("field.mtx", b"%%MatrixMarket matrix coordinate inte\xd6er general\n2 2 1\n1 2 3\n",
     ["line 1", "field 'inte\\xd6er' is not supported"]),
    ("layout.mtx", b"%%MatrixMarket matrix co\xffrdinate integer general\n2 2 1\n1 2 3\n",
     ["line 1", "co\\xffrdinate"]),
    ("banner.mtx", b"%%Matrix\xd6Market matrix coordinate integer general\n", ["line 1", "banner"]),
    ("p.gr", b"p s\xd6 2 1\na 1 2 3\n", ["line 1", "malformed problem line"]),
    ("n.gr", b"p sp 2\xd6 1\na 1 2 3\n", ["line 1", "must be integers"]),
    ("w.gr", b"p sp 2 1\na 1 2 3\xd6\n", ["line 2", "not a number"]),
    ("w.csv", b"0,1,3\n1,2,3\xd6\n", ["line 2", "byte 0xd6 is not UTF-8"]),
    ("w.txt", b"0 1 5\n1 2 \xd66\n", ["line 2", "not a number"]),
    ("names.csv", b"a,b,3\nb,c\xd6,3\n", ["line 2", "byte 0xd6 is not UTF-8"]),
    ("quoted.csv", b'"a","b",3\n\n"b","c\xd6",3\n', ["line 3", "byte 0xd6 is not UTF-8"]),
])
def test_stray_bytes_are_one_line_errors(tmp_path, name, data, fragments):
    """Non-UTF-8 bytes in any text format: the file, the line, the problem -- never a decode error."""
    path = write_bytes(tmp_path / name, data)
    msg = error_of(fio.read_graph, path)
    assert msg.startswith(str(path)) and "\n" not in msg
    for fragment in fragments:
        assert fragment in msg, msg


# ---------------------------------------------------------------------- edge lists
def test_edge_list_names_become_labels_in_order_of_first_appearance(tmp_path):
    path = write_bytes(tmp_path / "e.csv",
                       b"source,target,weight\nparis,lyon,4\nlyon,nice,3\nparis,nice,9\nbrest,paris,6\n")
    g = fio.read_graph(path)
    assert g.labels == ["paris", "lyon", "nice", "brest"]
    r = fw.solve(g, predecessors=True, backend="reference")
    assert r.distance("paris", "nice") == 7 and r.path("brest", "nice") == ["brest", "paris", "lyon", "nice"]


@pytest.mark.parametrize("text", [
    b"0 1 5\n1 2 6\n",
    b"# comment\n% other\n0\t1\t5\n\n1\t2\t6\n",
    b"src dst weight\n0 1 5\n1 2 6\n",
    b"0,1,5\r\n1,2,6\r\n",
    b"0; 1; 5\n1; 2; 6\n",
    b'"0","1","5"\n"1","2","6"\n',
    b"  0   1   5.0\n1 2 6e0\n",
])
def test_edge_list_dialects(tmp_path, text):
    g = fio.read_graph(write_bytes(tmp_path / "e.txt", text))
    assert g.n == 3 and g.labels is None
    m = g.to_matrix("float64")
    assert m[0, 1] == 5 and m[1, 2] == 6 and np.isinf(m[0, 2]) and g.num_edges == 2


def test_edge_list_options(tmp_path):
    two = write_bytes(tmp_path / "u.txt", b"a b\nb c\n")
    g = fio.read_graph(two, undirected=True)
    assert g.labels == ["a", "b", "c"] and g.num_edges == 4
    sparse_ids = write_bytes(tmp_path / "s.txt", b"1000000 5 1\n5 77 2\n")
    g = fio.read_graph(sparse_ids, labels=True)
    assert g.n == 3 and g.labels == [1000000, 5, 77]
    assert fio.read_graph(sparse_ids).n == 1000001
    mixed = write_bytes(tmp_path / "m.txt", b"1 2 1\n2 x 1\n")
    assert fio.read_graph(mixed).labels == ["1", "2", "x"]
    assert "not a number" in error_of(fio.read_graph, mixed, labels=False)
    spaced = write_bytes(tmp_path / "sp.tsv", b"from\tto\tcost\nNew York\tBoston\t5\nBoston\tSan Jose\t9\n")
    g = fio.read_graph(spaced)
    assert g.labels == ["New York", "Boston", "San Jose"] and g.num_edges == 2
    assert "line 2: expected 3 fields" in error_of(fio.read_graph, write_bytes(tmp_path / "sp2.csv", b"a b,c,1\nc,d\n"))
    headerless_words = write_bytes(tmp_path / "h.txt", b"from to\n0 1\n")
    assert fio.read_graph(headerless_words).n == 2
    assert fio.read_graph(write_bytes(tmp_path / "empty.txt", b"# nothing\n")).n == 0


@pytest.mark.parametrize("text, fragments", [
    (b"0 1 5\n1 2 x\n", ["line 2", "weight 'x'", "not a number"]),
    (b"0 1 5\n1 2 nan\n", ["line 2", "nan", "finite"]),
    (b"0 1 5\n\n1 2 -inf\n", ["line 3", "inf", "finite"]),
    (b"0 1 5\n1 2\n", ["line 2", "expected 3 fields", "found 2"]),
    (b"0 1 5\n1 2 3 4\n", ["line 2", "found 4"]),
    (b"0 1 5 7\n", ["line 1", "found 4 fields"]),
    (b"0 1 5\n-1 2 3\n", ["line 2", "negative"]),
    (b"a,b,1\nb,c,zz\n", ["line 2", "weight 'zz'"]),
    (b"a b 1\nb c nan\n", ["line 2", "nan"]),
    (b"# floydwarp edgelist n=2\n0 1 1\n1 5 1\n", ["line 3", "out of range"]),
])
def test_edge_list_refuses_bad_files(tmp_path, text, fragments):
    path = write_bytes(tmp_path / "bad.txt", text)
    msg = error_of(fio.read_graph, path)
    assert str(path) in msg
    for fragment in fragments:
        assert fragment in msg, msg


def test_edge_list_error_line_numbers_deep_in_a_big_file(tmp_path):
    rows = np.arange(300_000)
    text = b"".join(f"{i} {i + 1} 1\n".encode() for i in rows[:200_000]) + b"7 8 oops\n" + b"1 2 3\n"
    msg = error_of(fio.read_graph, write_bytes(tmp_path / "big.txt", text))
    assert "line 200001" in msg and "'oops'" in msg


def test_big_edge_list_is_parsed_vectorized(tmp_path):
    rng = np.random.default_rng(0)
    m = 300_000
    edges = np.stack([rng.integers(0, 5000, m), rng.integers(0, 5000, m), rng.integers(-5, 100, m)], 1)
    path = tmp_path / "big.txt"
    fio.write_graph(fw.Graph.from_edges(edges[:, 0], edges[:, 1], edges[:, 2], n=5000), path)
    import time
    t = time.perf_counter()
    g = fio.read_graph(path)
    assert time.perf_counter() - t < 10
    same_graph(g, fw.Graph.from_edges(edges[:, 0], edges[:, 1], edges[:, 2], n=5000))


def test_gzip_text(tmp_path):
    path = tmp_path / "g.gr.gz"
    with gzip.open(path, "wb") as fh:
        fh.write(b"p sp 2 1\na 1 2 3\n")
    assert fio.read_graph(path).labels == [1, 2]


# ---------------------------------------------------------------------- dense .npy
def test_npy_graph_is_memory_mapped_and_validated(tmp_path):
    w = np.array([[0, 1, np.inf], [np.inf, 0, 2], [3, np.inf, 0]])
    np.save(tmp_path / "w.npy", w)
    g = fio.read_graph(tmp_path / "w.npy")
    assert np.array_equal(g.to_matrix("float64"), w)
    np.save(tmp_path / "rect.npy", np.zeros((2, 3)))
    assert "square" in error_of(fio.read_graph, tmp_path / "rect.npy")
    np.save(tmp_path / "nan.npy", np.array([[0, np.nan], [1, 0]]))
    msg = error_of(fio.read_graph, tmp_path / "nan.npy")
    assert "nan.npy" in msg and "[0, 1]" in msg
    write_bytes(tmp_path / "junk.npy", b"not numpy")
    assert "junk.npy" in error_of(fio.read_graph, tmp_path / "junk.npy")


# ---------------------------------------------------------------------- results
def solved(seed=0, n=9, pred=True, labels=None):
    rng = np.random.default_rng(seed)
    w = np.where(rng.random((n, n)) < 0.3, rng.integers(0, 9, (n, n)), np.inf)
    g = fw.Graph.from_dense(w, labels=labels)
    return fw.solve(g, predecessors=pred, backend="reference")


@pytest.mark.parametrize("member, cut", [("dist", (slice(None), slice(0, 2))), ("pred", (slice(0, 2),))])
def test_a_npz_result_whose_matrices_are_not_n_by_n_is_refused(tmp_path, member, cut):
    r = fw.solve(np.array([[0, 1, np.inf], [np.inf, 0, 2], [3, np.inf, 0]]), predecessors=True)
    r.save(tmp_path / "r.npz")
    arrays = dict(np.load(tmp_path / "r.npz"))
    arrays[member] = arrays[member][cut]
    np.savez(tmp_path / "bad.npz", **arrays)
    with pytest.raises(fw.FloydwarpError, match="a result's matrices are n x n, one shape"):
        fw.Result.load(tmp_path / "bad.npz")


@pytest.mark.parametrize("ext", ["npz", "npy"])
@pytest.mark.parametrize("pred", [True, False])
def test_result_round_trip(tmp_path, ext, pred):
    r = solved(pred=pred, labels=[f"v{i}" for i in range(9)])
    written = fio.write_result(r, tmp_path / f"r.{ext}")
    back = fio.read_result(written)
    assert np.array_equal(back.dist, r.dist) and back.dtype == r.dtype and back.inf == r.inf
    assert back.labels == r.labels
    assert (back.pred is None) == (not pred)
    if pred:
        assert np.array_equal(back.pred, r.pred)
        assert back.path("v0", "v5") == r.path("v0", "v5") if r.reachable("v0", "v5") else True
    expected = {"npz": ["r.npz"], "npy": ["r.json", "r.npy"] + (["r.pred.npy"] if pred else [])}[ext]
    assert listing(tmp_path) == expected


def test_npy_result_layout_is_memory_mapped_and_plain(tmp_path):
    r = solved(n=20)
    fio.write_result(r, tmp_path / "big.npy")
    plain = np.load(tmp_path / "big.npy", mmap_mode="r")
    assert isinstance(plain, np.memmap) and plain.dtype == r.dtype and np.array_equal(plain, r.dist)
    meta = json.loads((tmp_path / "big.json").read_text())
    assert meta["n"] == 20 and meta["pred"] == "big.pred.npy" and meta["dtype"] == r.dtype.name
    back = fio.read_result(tmp_path / "big.json")
    assert isinstance(back.dist, np.memmap) and isinstance(back.pred, np.memmap)
    # a result without predecessors replaces a stale .pred.npy
    fio.write_result(solved(n=20, pred=False), tmp_path / "big.npy")
    assert listing(tmp_path) == ["big.json", "big.npy"]
    (tmp_path / "big.json").unlink()
    assert "sidecar" in error_of(fio.read_result, tmp_path / "big.npy")


def test_results_with_negative_cycles_keep_them_through_files(tmp_path):
    w = np.array([[0, 1, np.inf, np.inf], [np.inf, 0, -3, np.inf], [1, np.inf, 0, 1], [np.inf] * 3 + [0]])
    r = fw.solve(w, predecessors=True, backend="reference")
    assert r.has_negative_cycle
    for ext in ("npz", "npy"):
        back = fio.read_result(fio.write_result(r, tmp_path / f"c.{ext}"))
        assert back.has_negative_cycle and sorted(back.negative_cycle_vertices.tolist()) == [0, 1, 2]
        assert back.distance(0, 3) == -np.inf and back.distance(3, 0) == np.inf


def test_writes_refuse_to_overwrite_their_input_and_leave_nothing_behind(tmp_path):
    src = tmp_path / "g.gr"
    fio.write_graph(random_graph(0), src)
    before = src.read_bytes()
    r = fw.solve(fio.read_graph(src), backend="reference")
    with pytest.raises(fw.FloydwarpError, match="input"):
        fio.write_graph(fio.read_graph(src), src, inputs=(src,))
    assert src.read_bytes() == before and listing(tmp_path) == ["g.gr"]
    with pytest.raises(fw.FloydwarpError):
        fio.write_result(r, tmp_path / "nofolder" / "r.npz")
    assert listing(tmp_path) == ["g.gr"]


def test_failed_write_midway_leaves_no_partial_file(tmp_path, monkeypatch):
    from floydwarp.io import _text

    def boom(*args, **kwargs):
        yield b"0 1 2\n"
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(_text, "format_rows", boom)
    with pytest.raises(RuntimeError):
        fio.write_graph(random_graph(0), tmp_path / "g.txt")
    assert listing(tmp_path) == []


def test_failed_npy_layout_write_leaves_none_of_its_files(tmp_path, monkeypatch):
    r = solved()
    calls = []
    real_save = np.save

    def flaky_save(fh, arr, **kwargs):
        calls.append(arr.shape)
        if len(calls) == 2:                             # the predecessor matrix
            raise OSError("disk full")
        return real_save(fh, arr, **kwargs)

    monkeypatch.setattr(np, "save", flaky_save)
    with pytest.raises(OSError):
        fio.write_result(r, tmp_path / "r.npy")
    assert listing(tmp_path) == []


def test_unwritable_labels_are_refused_cleanly(tmp_path):
    r = solved(labels=[frozenset({i}) for i in range(9)])
    with pytest.raises(fw.FloydwarpError):
        fio.write_result(r, tmp_path / "r.npz")
    assert listing(tmp_path) == []


# ---------------------------------------------------------------------- DLPack
class DLPackOnly:
    """A foreign tensor: speaks DLPack, is not a NumPy array, has no __array__."""

    __module__ = "faketorch"

    def __init__(self, array):
        self._a = array

    def __dlpack__(self, **kwargs):
        return self._a.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self._a.__dlpack_device__()


def test_dlpack_host_tensors_become_numpy_views():
    w = np.array([[0, 3, np.inf], [np.inf, 0, 1], [2, np.inf, 0]])
    t = DLPackOnly(w)
    assert is_foreign_tensor(t) and not is_foreign_tensor(w)
    a = from_dlpack(t)
    assert isinstance(a, np.ndarray) and np.shares_memory(a, w)
    assert maybe_from_dlpack(w) is w
    r = fw.solve(maybe_from_dlpack(t), backend="reference")
    assert r.dist.tolist() == [[0, 3, 4], [3, 0, 1], [2, 5, 0]]


def test_dlpack_unknown_device_is_refused():
    class OnMetal(DLPackOnly):
        def __dlpack_device__(self):
            return (8, 0)

    assert "Metal" in error_of(from_dlpack, OnMetal(np.zeros((2, 2))))


def test_solve_takes_dlpack_tensors():
    import floydwarp.inputs as inputs_module
    import inspect

    if "dlpack" not in inspect.getsource(inputs_module):
        pytest.skip("inputs.as_graph has no DLPack hook yet (lead: call floydwarp.dlpack.maybe_from_dlpack)")
    t = DLPackOnly(np.array([[0, 1.0], [np.inf, 0]]))
    r = fw.solve(t, backend="reference")
    assert r.distance(0, 1) == 1 and r.distance(1, 0) == np.inf


def test_torch_and_jax_tensors():
    torch = pytest.importorskip("torch")
    w = torch.tensor([[0.0, 2.0], [float("inf"), 0.0]], requires_grad=True)
    assert from_dlpack(w).tolist() == [[0.0, 2.0], [np.inf, 0.0]]


def test_jax_arrays():
    jnp = pytest.importorskip("jax.numpy")
    a = jnp.array([[0.0, 2.0], [jnp.inf, 0.0]])
    assert from_dlpack(a).tolist() == [[0.0, 2.0], [np.inf, 0.0]]


@pytest.mark.parametrize("n", [100_000_000, 1_000_000_000])
def test_dimacs_header_n_costs_nothing_before_the_run_refuses_it(tmp_path, n):
    """Issue 35, item 6: ``p sp 100000000 0`` built a list of 10^8 labels (4.1 GB, 8.5 s) and
    ``p sp 1000000000 0`` ran out of memory; the same n in .mtx was refused at once (exit 2)."""
    import tracemalloc

    (tmp_path / "warm.gr").write_text("p sp 2 1\na 1 2 3\n")
    fio.read_graph(tmp_path / "warm.gr")                      # Numba's passes loaded before measuring
    (tmp_path / "huge.gr").write_text(f"p sp {n} 0\n")
    tracemalloc.start()
    try:
        g = fio.read_graph(tmp_path / "huge.gr")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 1 << 20, peak
    assert g.n == n and g.num_edges == 0
    with pytest.raises(fw.FloydwarpError, match="bytes of memory"):
        fw.solve(g, backend="cpu")
