"""Graphs for the studies: one random graph per size, made once and shared by every case.

Host graphs are :func:`floydwarp.generate.erdos_renyi` (the seeds' generator; the
same for a seed everywhere).  With ``graph_on="device"`` the gpu cases get a graph
built on the GPU instead (CuPy's generator: same density and weights, another random
stream, no n^2 host work and no upload), which is what makes sizes of tens of
thousands practical on a GPU; records say which (``graph``).
"""
from __future__ import annotations

import numpy as np

HOST = "erdos-renyi"
DEVICE = "device-random"

#: rows generated per step on the device (bounds the temporaries)
_DEVICE_ROWS = 4096


class GraphCache:
    """``get(n, backend)``: the graph a case of that backend runs on (made on first use)."""

    def __init__(self, config):
        self.config = config
        self._host: dict[int, object] = {}
        self._device: dict[int, object] = {}
        self.generation_s: dict[tuple, float] = {}

    def source(self, backend: str) -> str:
        return DEVICE if backend == "gpu" and self.config.graph_on == "device" else HOST

    def get(self, n: int, backend: str = "cpu"):
        import time

        from ..generate import erdos_renyi

        if self.source(backend) == DEVICE:
            if n not in self._device:
                self._device.clear()
                free_device_memory()
                t0 = time.perf_counter()
                self._device[n] = device_graph(n, self.config.percent, self.config.seed,
                                               real=self.config.real_weights)
                self.generation_s[(n, DEVICE)] = time.perf_counter() - t0
            return self._device[n]
        if n not in self._host:
            self._host.clear()                       # one size at a time: large graphs are large
            t0 = time.perf_counter()
            self._host[n] = erdos_renyi(n, self.config.percent, seed=self.config.seed, real=self.config.real_weights)
            self.generation_s[(n, HOST)] = time.perf_counter() - t0
        return self._host[n]

    def clear(self):
        self._host.clear()
        self._device.clear()
        free_device_memory()


def free_device_memory() -> None:
    """Hand CuPy's cached blocks back to the device (when CuPy is in use at all)."""
    import gc
    import sys

    cupy = sys.modules.get("cupy")
    if cupy is None:
        return
    gc.collect()
    try:
        cupy.get_default_memory_pool().free_all_blocks()
        cupy.get_default_pinned_memory_pool().free_all_blocks()
    except Exception:  # noqa: BLE001 -- no device after all: nothing to free
        pass


def device_weight_dtype(weights=(1, 16), real: bool = False) -> np.dtype:
    """The dtype of :func:`device_graph`'s matrix: the narrowest of int16 and int32 that holds
    the weights (float32 for real weights), so that the graph leaves the device room."""
    if real:
        return np.dtype(np.float32)
    return np.dtype(np.int16 if max(abs(int(w)) for w in weights) < 2 ** 15 else np.int32)


def device_graph(n: int, percent: float = 25.0, seed: int = 0, weights=(1, 16), real: bool = False):
    """A random graph built on the GPU: integer weights in ``weights`` (float32 drawn
    uniformly from ``[lo, hi)`` when ``real``), 0 = no edge, as a matrix of
    :func:`device_weight_dtype`."""
    import cupy as cp

    from ..graph import Graph

    rs = cp.random.RandomState(seed)
    w = cp.empty((n, n), dtype=device_weight_dtype(weights, real))
    p = percent / 100.0
    for start in range(0, n, _DEVICE_ROWS):
        rows = min(_DEVICE_ROWS, n - start)
        if real:
            block = rs.uniform(weights[0], weights[1], size=(rows, n), dtype=cp.float32)
        else:
            block = rs.randint(weights[0], weights[1] + 1, size=(rows, n), dtype=w.dtype)
        block[rs.random_sample((rows, n), dtype=cp.float32) >= p] = 0
        w[start:start + rows] = block
        del block
    return Graph.from_dense(w, missing=0)
