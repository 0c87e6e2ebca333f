"""Every output, byte for byte, in every result dtype (issue 20).

Each writer and converter of distances -- the homework ``.out``, the ``.npy`` result layout,
``.npz``, ``Result.to_dense``, the Fletcher-16 checksum, ``floydwarp query --json``, the SciPy and
NetworkX adapters, ``floydwarp solve -o`` -- is run on int16, int32, int64, float32 and float64
results of graphs with all pairs reachable, unreachable pairs, negative weights, no vertex and one
vertex, and compared with what this file builds from a plain Python loop (not from floydwarp).
A property test then checks ``write -> read`` on random graphs.  The suite runs under the oldest
and the newest NumPy that pyproject.toml allows (.ci/run): the two promote types differently.
"""
from __future__ import annotations

import functools
import io
import json
import math
import os
import struct
import sys
import tempfile
import zipfile

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings, strategies as st

import floydwarp as fw
import floydwarp.io as fio
from floydwarp import nx_backend
from floydwarp.checksum import checksum
from floydwarp.cli.app import app
from cli_runner import cli_runner
from plain_outputs import (CASES, DTYPES, HOMEWORK_INF, INF, cells, checksum_bytes, dense_bytes, edge_arrays,
                           fletcher16, homework_bytes, npy_bytes, plain_distances, query_json)

runner = cli_runner()


# ---------------------------------------------------------------------- floydwarp's answers
def graph_of(case):
    return fw.Graph.from_edges(*edge_arrays(case), n=CASES[case][0])


@functools.lru_cache(maxsize=None)
def host_result(case, dtype):
    return fw.solve(graph_of(case), dtype=dtype, backend="reference")


def homework_in(path, case):
    n, edges = CASES[case]
    path.write_bytes(struct.pack("<ii", n, len(edges)) + b"".join(struct.pack("<iii", *e) for e in edges))
    return path


# ---------------------------------------------------------------------- one check per output
def check_out(r, folder, case, dtype):
    dist = plain_distances(*CASES[case])
    path = fio.write_result(r, folder / "r.out")
    assert path.read_bytes() == homework_bytes(dist)


def check_npy(r, folder, case, dtype):
    n, _ = CASES[case]
    dist = plain_distances(*CASES[case])
    fio.write_result(r, folder / "r.npy")
    assert (folder / "r.npy").read_bytes() == npy_bytes(cells(dist, dtype), dtype, n)
    meta = json.loads((folder / "r.json").read_text())
    assert (meta["dtype"], meta["n"], meta["inf"], meta["pred"]) == (dtype, n, INF.get(dtype), None)
    assert sorted(os.listdir(folder)) == ["r.json", "r.npy"]


def check_npz(r, folder, case, dtype):
    n, _ = CASES[case]
    dist = plain_distances(*CASES[case])
    fio.write_result(r, folder / "r.npz")
    with zipfile.ZipFile(folder / "r.npz") as z:
        assert z.read("dist.npy") == npy_bytes(cells(dist, dtype), dtype, n)
        meta = json.loads(np.load(io.BytesIO(z.read("meta.npy"))).tobytes())
    assert meta["dtype"] == dtype and meta["inf"] == INF.get(dtype, math.inf)


def check_dense(r, folder, case, dtype):
    dense = r.to_host().to_dense()
    assert dense.dtype == np.float64 and dense.flags.c_contiguous
    assert dense.tobytes() == dense_bytes(plain_distances(*CASES[case]))


def check_checksum(r, folder, case, dtype):
    assert checksum(r) == fletcher16(checksum_bytes(plain_distances(*CASES[case])))


def check_query(r, folder, case, dtype):
    n, _ = CASES[case]
    dist = plain_distances(*CASES[case])
    for ext in ("npz", "npy", "out"):
        path = fio.write_result(r, folder / f"q.{ext}")
        for source in range(n):
            out = runner.invoke(app, ["query", str(path), "--all-from", str(source), "--json"])
            assert out.exit_code == 0, out.output
            # the homework file holds int32, whatever the result's dtype was
            assert out.stdout.strip() == query_json(dist, "int32" if ext == "out" else dtype, source)


def check_scipy(r, folder, case, dtype):
    n, edges = CASES[case]
    u, v, w = ([e[k] for e in edges] for k in range(3))
    graph = sp.csr_matrix((np.array(w, dtype=np.float64), (u, v)), shape=(n, n))
    got = fw.floyd_warshall(graph, dtype=dtype, backend="reference")
    assert got.dtype == np.float64 and got.tobytes() == dense_bytes(plain_distances(n, edges))


def check_networkx(r, folder, case, dtype):
    nx = pytest.importorskip("networkx")
    n, edges = CASES[case]
    G = nx.DiGraph()
    G.add_nodes_from(range(n))
    G.add_weighted_edges_from(edges)
    solve = functools.partial(fw.solve, dtype=dtype)
    with pytest.MonkeyPatch.context() as mp:     # the adapter takes no dtype: make its solve() use this one
        mp.setattr(sys.modules["floydwarp.solver"], "solve", solve)
        arr = nx_backend.floyd_warshall_numpy(G)
        dist = nx_backend.floyd_warshall(G)
    plain = plain_distances(n, edges)
    assert arr.dtype == np.float64 and arr.tobytes() == dense_bytes(plain)
    for i in range(n):
        for j in range(n):
            got = dist[i][j]
            if plain[i][j] is None:
                assert got == math.inf
            else:                                # NetworkX's own 0 on the diagonal is an int
                kind = int if dtype in INF or i == j else float
                assert got == plain[i][j] and type(got) is kind, (i, j, got)


def check_cli_out(r, folder, case, dtype):
    """The issue's reproduction: floydwarp solve case.in -o case.out (and the other result files)."""
    n, _ = CASES[case]
    dist = plain_distances(*CASES[case])
    src = homework_in(folder / "case.in", case)
    out = runner.invoke(app, ["solve", str(src), "--dtype", dtype, "-o", str(folder / "case.out")])
    assert out.exit_code == 0, out.output
    assert (folder / "case.out").read_bytes() == homework_bytes(dist)
    out = runner.invoke(app, ["solve", str(src), "--dtype", dtype, "-o", str(folder / "case.npy")])
    assert out.exit_code == 0, out.output
    assert (folder / "case.npy").read_bytes() == npy_bytes(cells(dist, dtype), dtype, n)


CHECKS = {"out": check_out, "npy": check_npy, "npz": check_npz, "to_dense": check_dense, "checksum": check_checksum,
          "query": check_query, "scipy": check_scipy, "networkx": check_networkx, "cli": check_cli_out}
#: checks that take a Result (the others run their own solve, on the host)
RESULT_CHECKS = ("out", "npy", "npz", "to_dense", "checksum", "query")


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("output", CHECKS)
def test_every_output_is_exact(tmp_path, output, dtype, case):
    r = host_result(case, dtype)
    assert r.dtype == np.dtype(dtype)
    CHECKS[output](r, tmp_path, case, dtype)


@pytest.mark.gpu
@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("output", RESULT_CHECKS)
def test_every_output_of_a_device_result_is_exact(tmp_path, output, dtype, case):
    """Results that live on the GPU convert there (casts.cast_distances on CuPy) before the copy."""
    cupy = pytest.importorskip("cupy")
    r = fw.solve(graph_of(case), dtype=dtype, backend="gpu", output="device")
    assert isinstance(r.dist, cupy.ndarray) and r.dtype == np.dtype(dtype)
    CHECKS[output](r, tmp_path, case, dtype)
    assert cupy.asnumpy(r.to_dense()).tobytes() == dense_bytes(plain_distances(*CASES[case]))


def test_conversion_refuses_a_sentinel_the_target_cannot_hold():
    from floydwarp.casts import cast_distances

    d = np.array([[0, 16383]], dtype=np.int16)
    with pytest.raises(fw.FloydwarpError, match="int16"):
        cast_distances(d, np.int16(16383), np.int16, HOMEWORK_INF)
    with pytest.raises(fw.FloydwarpError, match="float32"):
        cast_distances(d, np.int16(16383), np.float32, HOMEWORK_INF)      # float32 rounds it to 2**30
    assert cast_distances(d, np.int16(16383), np.int32, HOMEWORK_INF).tolist() == [[0, HOMEWORK_INF]]


def test_sidecar_inf_outside_the_dtype_is_refused(tmp_path):
    fio.write_result(host_result("unreachable", "int16"), tmp_path / "r.npy")
    meta = json.loads((tmp_path / "r.json").read_text())
    (tmp_path / "r.json").write_text(json.dumps({**meta, "inf": HOMEWORK_INF}))
    with pytest.raises(fw.FloydwarpError, match="r.json.*INF"):
        fio.read_result(tmp_path / "r.npy")


# ---------------------------------------------------------------------- write -> read, random graphs
@st.composite
def graphs(draw, integral):
    n = draw(st.integers(0, 7))
    m = draw(st.integers(0, 3 * n)) if n else 0
    ends = st.integers(0, max(n - 1, 0))
    weight = st.integers(-4, 30) if integral else st.floats(-4, 30, allow_nan=False).map(lambda x: round(x, 2))
    edges = draw(st.lists(st.tuples(ends, ends, weight), min_size=m, max_size=m))
    src, dst, w = (np.array([e[k] for e in edges], dtype=np.float64 if k == 2 and not integral else np.int64)
                   for k in range(3))
    return fw.Graph.from_edges(src, dst, w, n=n)


@pytest.mark.parametrize("dtype", DTYPES)
@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_write_then_read_gives_the_same_distances(dtype, data):
    integral = dtype in INF or data.draw(st.booleans(), label="integral weights")
    g = data.draw(graphs(integral), label="graph")
    r = fw.solve(g, dtype=dtype, backend="reference")
    assert r.dtype == np.dtype(dtype)
    reachable = r.dist < r.inf
    with tempfile.TemporaryDirectory() as folder:
        for ext in ("npz", "npy"):
            back = fio.read_result(fio.write_result(r, os.path.join(folder, f"r.{ext}")))
            assert back.dtype == r.dtype and back.inf == r.inf
            assert np.asarray(back.dist).tobytes() == np.asarray(r.dist).tobytes()
            assert back.negative_cycle_vertices.tolist() == r.negative_cycle_vertices.tolist()
        path = os.path.join(folder, "r.out")
        whole = np.all(np.where(reachable, r.dist, 0) == np.round(np.where(reachable, r.dist, 0)))
        if r.has_negative_cycle or not whole:
            with pytest.raises(fw.FloydwarpError, match="negative cycle|not an integer"):
                fio.write_result(r, path)
            assert not os.path.exists(path)
            return
        back = fio.read_result(fio.write_result(r, path))
        assert back.dtype == np.int32 and back.inf == HOMEWORK_INF
        assert np.array_equal(np.asarray(back.dist) < back.inf, reachable)
        assert np.array_equal(np.asarray(back.dist)[reachable], r.dist[reachable])
        assert np.all(np.asarray(back.dist)[~reachable] == HOMEWORK_INF)
        assert np.array_equal(back.to_dense(), r.to_dense())


# ---------------------------------------------------------------------- -o is checked before any work
def tripwire(*args, **kwargs):
    raise AssertionError("the run started before the output path was checked")


def refused(args, monkeypatch, *fragments):
    monkeypatch.setattr(fio, "read_graph", tripwire)
    monkeypatch.setattr(fw, "solve", tripwire)
    out = runner.invoke(app, [str(a) for a in args])
    assert out.exit_code == 2, out.output
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), out.stderr
    for fragment in fragments:
        assert fragment in lines[0], lines[0]


def test_output_into_a_missing_folder_is_refused_before_the_solve(tmp_path, monkeypatch):
    src = homework_in(tmp_path / "case.in", "unreachable")
    for args in (["solve", src, "-o", tmp_path / "nodir" / "case.out"],
                 ["solve", "-g", 5, "-o", tmp_path / "nodir" / "r.npz"],
                 ["generate", 5, "-o", tmp_path / "nodir" / "g.gr"]):
        refused(args, monkeypatch, "cannot write", "nodir", "does not exist")
    refused(["solve", src, "-o", tmp_path / "r.xyz"], monkeypatch, "r.xyz", "cannot tell the result format")
    refused(["solve", src, "-o", src], monkeypatch, "refusing to overwrite the input file")
    assert sorted(os.listdir(tmp_path)) == ["case.in"]


def test_output_whose_layout_would_overwrite_the_input_is_refused_first(tmp_path, monkeypatch):
    src = tmp_path / "g.npy"
    fio.write_graph(graph_of("reachable"), src)
    before = src.read_bytes()
    refused(["solve", src, "-o", tmp_path / "g.json"], monkeypatch, "refusing to overwrite the input file")
    assert src.read_bytes() == before


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() == 0, reason="root writes into read-only folders")
def test_output_into_a_read_only_folder_is_refused_before_the_solve(tmp_path, monkeypatch):
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        refused(["solve", "-g", 5, "-o", locked / "r.out"], monkeypatch, "cannot write", "not writable")
    finally:
        locked.chmod(0o700)
