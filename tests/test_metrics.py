"""Result.eccentricity() and friends against plain formulas over SciPy's distances."""
from __future__ import annotations

import json
import math

import numpy as np
import pytest

import floydwarp as fw
from floydwarp import metrics


def random_graph(seed, n, *, p=0.3, negative=False, lo=0, hi=9):
    rng = np.random.default_rng(seed)
    m = int(rng.binomial(n * n, p)) if n else 0
    src, dst = rng.integers(0, max(n, 1), m), rng.integers(0, max(n, 1), m)
    w = rng.integers(lo, hi, m)
    if negative:                       # a potential: negative weights, no negative cycle
        h = rng.integers(0, 5, max(n, 1))
        w = w + h[src] - h[dst]
        w[src == dst] = np.abs(w[src == dst])
    return fw.Graph.from_edges(src, dst, w, n=n)


def plain_distances(graph):
    """float64 distances by the textbook k-i-j loop (inf unreachable)."""
    n = graph.n
    d = np.full((n, n), np.inf)
    src, dst, w = graph.edges()
    np.minimum.at(d, (src, dst), w.astype(np.float64))
    np.fill_diagonal(d, np.minimum(np.diagonal(d), 0))
    for k in range(n):
        d = np.minimum(d, d[:, k, None] + d[None, k, :])
    return d


def reference(graph):
    """Distances by the plain loop and the metrics by plain formulas."""
    n = graph.n
    d = plain_distances(graph)
    ecc = d.max(axis=1) if n else np.zeros(0)
    finite = np.isfinite(d)
    r = finite.sum(axis=0)
    tot = np.where(finite, d, 0).sum(axis=0)
    close = np.zeros(n)
    for u in range(n):
        if tot[u] > 0 and n > 1:
            close[u] = (r[u] - 1.0) / tot[u] * ((r[u] - 1.0) / (n - 1))
    pairs = finite.all()
    return {
        "ecc": ecc, "closeness": close,
        "diameter": ecc.max() if n else None, "radius": ecc.min() if n else None,
        "apl": (d.sum() / (n * (n - 1)) if pairs else math.inf) if n > 1 else 0.0,
        "wiener": d.sum() if pairs else math.inf,
    }


DTYPES = ["int16", "int32", "int64", "float32", "float64"]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("seed", range(12))
def test_metrics_match_plain_formulas(dtype, seed, monkeypatch):
    monkeypatch.setattr(metrics, "BLOCK_BYTES", 64)          # many row blocks, ragged last one
    n = [0, 1, 2, 3, 7, 17, 33, 50][seed % 8]
    graph = random_graph(seed, n, p=[0.05, 0.3, 0.8][seed % 3], negative=seed % 4 == 1)
    result = fw.solve(graph, dtype=dtype)
    ref = reference(graph)
    ecc = result.eccentricity()
    assert ecc.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(np.where(ecc >= result.inf, np.inf, ecc), ref["ecc"])
    np.testing.assert_allclose(result.closeness(), ref["closeness"], rtol=1e-12)
    if n == 0:
        for method in ("diameter", "radius", "center", "periphery", "average_path_length"):
            with pytest.raises(fw.FloydwarpError, match="no vertices"):
                getattr(result, method)()
        assert result.wiener_index() == 0
        return
    assert result.diameter() == ref["diameter"] and result.radius() == ref["radius"]
    assert result.diameter() == math.inf or isinstance(result.diameter(), int if dtype.startswith("int") else float)
    assert result.center() == np.flatnonzero(ref["ecc"] == ref["ecc"].min()).tolist()
    assert result.periphery() == np.flatnonzero(ref["ecc"] == ref["ecc"].max()).tolist()
    assert result.average_path_length() == pytest.approx(ref["apl"], rel=1e-12)
    assert result.wiener_index() == ref["wiener"]
    assert result.wiener_index(directed=False) == ref["wiener"] / 2


def test_integer_sums_are_exact_and_closeness_bit_identical():
    """int64 distances near 2**61 on a ring of 8: every row and column sums past int64, and
    comes back as an exact Python int."""
    n, big = 8, 2 ** 59
    weights = [big + i for i in range(n)]
    r = fw.solve(fw.Graph.from_edges(range(n), [(i + 1) % n for i in range(n)], weights, n=n), dtype="int64")
    exact = [[sum(weights[(u + k) % n] for k in range((v - u) % n)) for v in range(n)] for u in range(n)]
    assert r.dist.tolist() == exact
    assert min(map(sum, exact)) > 2 ** 63
    assert r.wiener_index() == sum(map(sum, exact))
    assert r.average_path_length() == sum(map(sum, exact)) / (n * (n - 1))
    column = [sum(row[v] for row in exact) for v in range(n)]
    assert r.closeness().tolist() == [(n - 1.0) / t * ((n - 1.0) / (n - 1)) for t in column]
    assert r.diameter() == max(map(max, exact)) and type(r.diameter()) is int


def test_labels_and_unreachable():
    g = fw.Graph.from_edges([0, 1], [1, 2], [2, 3], n=4, labels=["a", "b", "c", "d"])
    r = fw.solve(g)
    assert r.diameter() == math.inf and r.radius() == math.inf
    assert r.periphery() == ["a", "b", "c", "d"] and r.average_path_length() == math.inf
    assert r.wiener_index() == math.inf
    np.testing.assert_array_equal(r.eccentricity(), [r.inf] * 4)
    ring = fw.solve(fw.Graph.from_edges([0, 1, 2], [1, 2, 0], [1, 1, 1], labels=["x", "y", "z"]))
    assert ring.center() == ["x", "y", "z"] and ring.diameter() == 2 and ring.average_path_length() == 1.5


def test_negative_cycles_have_no_metrics():
    r = fw.solve(fw.Graph.from_edges([0, 1], [1, 0], [1, -2]))
    for method in ("eccentricity", "diameter", "closeness", "average_path_length", "wiener_index"):
        with pytest.raises(fw.NegativeCycleError, match="negative cycle"):
            getattr(r, method)()


def test_cli_metrics_text_and_result_file(tmp_path, capsys):
    from floydwarp.cli import main
    from floydwarp.io import write_graph

    graph = random_graph(3, 40, p=0.2)
    result = fw.solve(graph)
    saved = result.save(tmp_path / "r.npz")
    write_graph(graph, tmp_path / "g.mtx")
    for args in (["metrics", str(tmp_path / "g.mtx")], ["metrics", str(saved), "--result", "--top", "2"],
                 ["metrics", str(tmp_path / "g.mtx"), "--json"]):
        with pytest.raises(SystemExit) as exit_info:
            main(args)
        assert exit_info.value.code == 0
        out = capsys.readouterr().out
        if "--json" in args:
            report = json.loads(out)
            assert report["diameter"] == result.diameter() and report["center"] == result.center()
            assert report["wiener_index"] == result.wiener_index()
            continue
        assert f"diameter:  {result.diameter()}" in out and f"radius:    {result.radius()}" in out
        assert "average path length:" in out and "closeness (highest first):" in out


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", DTYPES)
def test_metrics_on_the_gpu_stay_there_and_match_the_cpu(dtype):
    cupy = pytest.importorskip("cupy")
    for seed, n in enumerate((1, 2, 33, 300, 1100)):
        graph = random_graph(seed, n, p=0.02 if n > 100 else 0.3, negative=seed % 2 == 1)
        gpu = fw.solve(graph, dtype=dtype, backend="gpu", output="device")
        cpu = fw.solve(graph, dtype=dtype, backend="cpu")
        where = type(gpu.dist)
        assert where is cupy.ndarray
        ecc = gpu.eccentricity()
        assert type(ecc) is where and ecc.dtype == np.dtype(dtype)
        np.testing.assert_array_equal(cupy.asnumpy(ecc), cpu.eccentricity())
        c = gpu.closeness()
        assert type(c) is where
        np.testing.assert_allclose(cupy.asnumpy(c), cpu.closeness(), rtol=1e-12)
        for method in ("diameter", "radius", "center", "periphery", "average_path_length", "wiener_index"):
            a, b = getattr(gpu, method)(), getattr(cpu, method)()
            assert a == pytest.approx(b, rel=1e-12) if isinstance(a, float) else a == b, method
