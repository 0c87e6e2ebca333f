"""gpu/bfs: the GPU's all-pairs breadth-first search gives the CPU's answer (tests/test_bfs.py
checks that one against SciPy and the reference): the same hop counts, dtype and
predecessors, on the host or left on the device; uint8 widening on long paths; a search of
too many levels hands the graph to gpu/fast."""
from __future__ import annotations

import numpy as np
import pytest

import floydwarp as fw
from floydwarp.arrays import to_host

from test_bfs import random_edges, scipy_hops

pytestmark = pytest.mark.gpu

SIZES = (0, 1, 2, 3, 63, 64, 65, 129, 500, 1000)


def _same(gpu, cpu):
    assert gpu.algorithm == "bfs" and gpu.dtype == cpu.dtype and gpu.inf == cpu.inf
    np.testing.assert_array_equal(to_host(gpu.dist), cpu.dist)
    if cpu.pred is not None:
        np.testing.assert_array_equal(to_host(gpu.pred), cpu.pred)


@pytest.mark.parametrize("directed", [True, False], ids=["directed", "undirected"])
@pytest.mark.parametrize("n", SIZES)
def test_gpu_hop_counts_equal_the_cpu(n, directed):
    import cupy as cp

    rng = np.random.default_rng(n + 7 * directed)
    for density in (0.0, 1.0 / max(n, 1), 4.0 / max(n, 1), 0.2):
        src, dst = random_edges(rng, n, directed=directed, density=density)
        graph = fw.Graph.from_edges(src, dst, n=n)
        cpu = fw.solve(graph, backend="cpu", predecessors=True)
        for output in ("host", "device"):
            gpu = fw.solve(graph, backend="gpu", predecessors=True, output=output)
            assert isinstance(gpu.dist, cp.ndarray) == (output == "device")
            _same(gpu, cpu)
        _same(fw.solve(graph, backend="gpu", dtype="int32"), fw.solve(graph, backend="cpu", dtype="int32"))


@pytest.mark.parametrize("n", [0, 1, 70])
def test_gpu_a_device_matrix_keeps_its_hop_counts_on_the_device(n):
    """A unit-weight CuPy matrix goes to gpu/bfs, and its result stays on the device like gpu/fast's."""
    import cupy as cp

    rng = np.random.default_rng(n)
    w = np.where(rng.random((n, n)) < 0.1, 1.0, np.inf)
    gpu = fw.solve(cp.asarray(w), backend="gpu")
    assert isinstance(gpu.dist, cp.ndarray) and gpu.algorithm == "bfs"
    _same(gpu, fw.solve(w, backend="cpu"))


@pytest.mark.parametrize("length, dtype", [(255, "uint8"), (256, "int16"), (300, "int16")])
def test_gpu_long_paths_widen_past_uint8(length, dtype):
    src, dst = np.arange(length - 1), np.arange(1, length)
    graph = fw.Graph.from_edges(src, dst, n=length)
    r = fw.solve(graph, backend="gpu", predecessors=True, bfs_fallback=False)
    assert r.dtype == np.dtype(dtype) and "bfs_fallback" not in r.metadata
    _same(r, fw.solve(graph, backend="cpu", predecessors=True))


def test_gpu_a_search_too_deep_hands_over_to_fast():
    """A path of 3,000 vertices needs 2,999 levels, longer than Floyd-Warshall takes on it."""
    n = 3000
    src, dst = np.r_[np.arange(n - 1), np.arange(1, n)], np.r_[np.arange(1, n), np.arange(n - 1)]
    r = fw.solve(fw.Graph.from_edges(src, dst, n=n), backend="gpu")
    assert "gpu/fast solved the graph" in r.metadata["bfs_fallback"] and r.dtype == np.int16
    np.testing.assert_array_equal(r.to_dense(), scipy_hops(n, src, dst))


def test_gpu_metrics_of_device_hop_counts():
    import cupy as cp

    rng = np.random.default_rng(11)
    src, dst = random_edges(rng, 700, directed=True, density=0.006)
    graph = fw.Graph.from_edges(src, dst, n=700)
    gpu, cpu = fw.solve(graph, backend="gpu", output="device"), fw.solve(graph, backend="cpu")
    assert isinstance(gpu.dist, cp.ndarray) and gpu.dtype == np.uint8
    for name in ("diameter", "radius", "center", "periphery", "average_path_length", "wiener_index"):
        assert getattr(gpu, name)() == getattr(cpu, name)(), name
    np.testing.assert_array_equal(to_host(gpu.closeness()), cpu.closeness())
    np.testing.assert_array_equal(to_host(gpu.eccentricity()), cpu.eccentricity())


def test_gpu_a_search_that_does_not_fit_hands_over_to_fast(monkeypatch):
    from floydwarp.gpu import bfs as gpu_bfs

    monkeypatch.setattr(gpu_bfs, "_needed", lambda *args: 1 << 62)
    rng = np.random.default_rng(2)
    src, dst = random_edges(rng, 400, directed=True, density=0.01)
    graph = fw.Graph.from_edges(src, dst, n=400)
    r = fw.solve(graph, backend="gpu")
    assert "more than it may use" in r.metadata["bfs_fallback"] and r.dtype == np.int16
    np.testing.assert_array_equal(r.to_dense(), scipy_hops(400, src, dst))
