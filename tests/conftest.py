"""Shared test helpers: independent references and random graph strategies."""
from __future__ import annotations

import math

import numpy as np
import pytest


def triple_loop(weights):
    """Textbook Floyd-Warshall on a float64 matrix with inf = no edge (diag = min(0, self-loop))."""
    d = np.array(weights, dtype=np.float64, copy=True)
    n = d.shape[0]
    for i in range(n):
        d[i, i] = min(d[i, i], 0.0)
    for k in range(n):
        for i in range(n):
            dik = d[i, k]
            if dik == math.inf:
                continue
            for j in range(n):
                c = dik + d[k, j]
                if c < d[i, j]:
                    d[i, j] = c
    return d


def random_weight_matrix(rng, n, *, density=0.3, low=0, high=10, integer=True, parallel=False):
    """A dense weight matrix (inf = no edge) with zero weights and self-loops possible."""
    if integer:
        w = rng.integers(low, high + 1, size=(n, n)).astype(np.float64)
    else:
        w = rng.uniform(low, high, size=(n, n))
    w[rng.random((n, n)) >= density] = np.inf
    return w


def path_length(weights, path):
    """Sum of edge weights along a vertex path in a dense weight matrix."""
    return sum(weights[a, b] for a, b in zip(path, path[1:]))


def gpu_count() -> int:
    """CUDA devices usable through CuPy (0 without CuPy, a driver or a device)."""
    try:
        import cupy
        return cupy.cuda.runtime.getDeviceCount()
    except Exception:  # noqa: BLE001 -- no CuPy, driver or device: no GPU
        return 0


def require_gpu():
    """CuPy, for a test module that needs a GPU; skips the whole module otherwise."""
    cupy = pytest.importorskip("cupy")
    if gpu_count() < 1:
        pytest.skip("no CUDA GPU", allow_module_level=True)
    return cupy


def pytest_collection_modifyitems(config, items):
    """Skip GPU tests cleanly when no CUDA device is usable."""
    if gpu_count() > 0:
        return
    skip = pytest.mark.skip(reason="needs a CUDA GPU and CuPy")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)
