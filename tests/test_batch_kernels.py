"""The batch CPU engine's building blocks against NumPy models: the vector min-plus rows
(batch/vectors.py) for every dtype, rows of 1..7 vectors (straight-line and looped code),
with and without the clamp; the whole-vector stores (steps.store, called through its C
pointer: no byte outside a graph's block); and the parallel PyG edge pass
(kernels.pyg_edges) over many chunks."""
from __future__ import annotations

import numpy as np
import pytest
from numba import njit

from floydwarp import numeric
from floydwarp.batch import kernels, steps
from floydwarp.batch.vectors import lanes, minplus_row, minplus_row_pair

DTYPES = ("uint8", "int16", "int32", "int64", "float32", "float64")


# ---------------------------------------------------------------------- models
def _plus(a, b, dt):
    """The kernels' sum: saturating for unsigned dtypes, else in the dtype (INF = max // 2 fits)."""
    if dt.kind == "u":
        return np.minimum(a.astype(np.int64) + b.astype(np.int64), np.iinfo(dt).max).astype(dt)
    return (a.astype(np.float64 if dt.kind == "f" else np.int64) + b).astype(dt)


def _entries(rng, dt, size, clamp):
    """Random entries the kernels meet: INF, small values, and for signed dtypes anything in
    [-INF, INF] (with the clamp) or [0, INF]."""
    inf = numeric.inf_of(dt)
    if dt.kind == "f":
        x = rng.uniform(0, 50, size)
    else:
        lo = -int(inf) if clamp else 0
        wide = rng.integers(lo, int(inf) + 1, size)
        small = rng.integers(max(lo, -20), 21, size)
        x = np.where(rng.random(size) < 0.5, wide, small)
    x = x.astype(dt)
    x[rng.random(size) < 0.2] = inf
    return x


@njit
def _row(out, oi, x, xi, a, r, ri, nv, lo, clamp):
    if nv == 1:
        minplus_row(out, oi, x, xi, a, r, ri, 1, lo, clamp)
    elif nv == 2:
        minplus_row(out, oi, x, xi, a, r, ri, 2, lo, clamp)
    else:
        minplus_row(out, oi, x, xi, a, r, ri, nv, lo, clamp)


@njit
def _pair(d, di, k, dkk1, r, ri, r2, nv, lo, clamp):
    if nv == 3:
        minplus_row_pair(d, di, k, dkk1, r, ri, r2, 3, lo, clamp)
    else:
        minplus_row_pair(d, di, k, dkk1, r, ri, r2, nv, lo, clamp)


@pytest.mark.parametrize("name", DTYPES)
@pytest.mark.parametrize("clamp", [False, True])
def test_vector_rows_match_numpy(name, clamp):
    dt = np.dtype(name)
    if clamp and dt.kind != "i":
        pytest.skip("only signed integers clamp")
    rng = np.random.default_rng(len(name) + 7 * clamp)
    lane = lanes(dt)
    inf = numeric.inf_of(dt)
    lo = dt.type(-inf if clamp else 0)
    for nv in (1, 2, 3, 4, 7):
        w = nv * lane
        for _ in range(20):
            x, r, r2 = (_entries(rng, dt, w + 5, clamp) for _ in range(3))
            a, dkk1 = _entries(rng, dt, 2, clamp)
            # minplus_row: out = min(x, max(a + r, lo)); 2 and 3 are offsets into the arrays
            out = _entries(rng, dt, w + 4, clamp)
            want = out.copy()
            cand = _plus(np.full(w, a, dt), r[3:3 + w], dt)
            cand = np.maximum(cand, lo) if clamp else cand
            want[1:1 + w] = np.where(cand < x[2:2 + w], cand, x[2:2 + w])
            _row(out, 1, x, 2, a, r, 3, nv, lo, clamp)
            np.testing.assert_array_equal(out, want, err_msg=f"minplus_row nv={nv}")
            # minplus_row_pair on row i of d (at offset 4): pivots k = 1, k + 1 = 2
            d = _entries(rng, dt, w + 9, clamp)
            want = d.copy()
            row = d[4:4 + w].copy()
            a_ = row[1]
            via = _plus(np.array([a_]), np.array([dkk1]), dt)
            via = np.maximum(via, lo) if clamp else via
            a2 = via[0] if via[0] < row[2] else row[2]
            cand = np.where(_plus(np.full(w, a2, dt), r2[:w], dt) < _plus(np.full(w, a_, dt), r[3:3 + w], dt),
                            _plus(np.full(w, a2, dt), r2[:w], dt), _plus(np.full(w, a_, dt), r[3:3 + w], dt))
            cand = np.maximum(cand, lo) if clamp else cand
            want[4:4 + w] = np.where(cand < row, cand, row)
            _pair(d, 4, 1, dkk1, r, 3, r2, nv, lo, clamp)
            np.testing.assert_array_equal(d, want, err_msg=f"minplus_row_pair nv={nv}")


def test_saturating_sum_never_wraps():
    """uint8: 254 + 254 and INF + anything stay at INF = 255."""
    out = np.zeros(32, np.uint8)
    r = np.full(32, 254, np.uint8)
    r[:4] = [0, 1, 255, 100]
    x = np.full(32, 255, np.uint8)
    _row(out, 0, x, 0, np.uint8(254), r, 0, 1, np.uint8(0), False)
    assert out[:4].tolist() == [254, 255, 255, 255] and np.all(out[4:] == 255)


# ---------------------------------------------------------------------- stores
STORE_PAIRS = [("uint8", "uint8"), ("uint8", "int16"), ("uint8", "float64"), ("int16", "uint8"),
               ("int16", "int16"), ("int32", "int32"), ("int64", "int64"), ("float32", "float32"),
               ("float64", "float64")]


@pytest.mark.parametrize("arith,stored", STORE_PAIRS)
def test_store_blocks_exactly(arith, stored):
    """Every padded size (narrower and wider than a vector), every n <= size, with and without
    a clip: the block equals the model and not one entry outside it is written; the store
    tells a negative diagonal entry."""
    dt, out_dt = np.dtype(arith), np.dtype(stored)
    rng = np.random.default_rng(3)
    lane = lanes(dt)
    inf, out_inf = numeric.inf_of(dt), numeric.inf_of(out_dt)
    threshold = dt.type(inf)
    store = steps.store(dt, out_dt, out_inf).ctypes
    for size in (1, 3, lane - 1, lane, lane + 1, 2 * lane + 3, 70):
        for n in sorted({0, 1, size // 2, size}):
            nv = max(1, -(-n // lane))
            width = nv * lane
            width_max = max(lane, -(-size // lane) * lane)
            d = np.full(size * width_max + lane, inf, dt)
            d[:n * width] = rng.integers(0, 100, n * width).astype(dt)
            d[:n * width][rng.random(n * width) < 0.2] = inf
            if n:
                d[(n - 1) * width + n - 1] = 0
            for top, negative in ((threshold, False), (dt.type(40), True)):
                if negative and n and dt.kind != "u":
                    d[(n - 1) * width + n - 1] = -1
                guard = out_dt.type(7)
                flat = np.full(3 * size * size, guard, out_dt)
                bounds = steps.bounds(dt, inf, 0, threshold, top)
                told = store(d.ctypes.data, n, width, flat.ctypes.data, size * size, size, bounds.ctypes.data)
                assert told == (negative and n > 0 and dt.kind != "u")
                block = d[:n * width].reshape(n, width)[:, :n] if n else np.zeros((0, 0), dt)
                want = np.full((size, size), out_inf, out_dt)
                reach = block < threshold
                want[:n, :n] = np.where(reach, np.minimum(block, top), out_inf).astype(out_dt)
                np.testing.assert_array_equal(flat[size * size:2 * size * size].reshape(size, size), want,
                                              err_msg=f"size {size}, n {n}, top {top}")
                assert np.all(flat[:size * size] == guard) and np.all(flat[2 * size * size:] == guard)


# ---------------------------------------------------------------------- the PyG edge pass
def _pyg_model(src, dst, ptr):
    """The serial definition: local ids, each graph's first edge, the first bad edge."""
    nodes = ptr[-1]
    for e, (u, v) in enumerate(zip(src, dst)):
        if not 0 <= u < nodes:
            return 1, e
        if not 0 <= v < nodes:
            return 2, e
        if np.searchsorted(ptr, u, side="right") != np.searchsorted(ptr, v, side="right"):
            return 3, e
    return 0, -1


def _random_pyg(rng, count):
    sizes = rng.integers(0, 6, count)
    ptr = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    src, dst = [], []
    for g in range(count):
        m = int(rng.integers(0, 8)) if sizes[g] else 0
        src.append(ptr[g] + rng.integers(0, sizes[g], m) if m else np.zeros(0, np.int64))
        dst.append(ptr[g] + rng.integers(0, sizes[g], m) if m else np.zeros(0, np.int64))
    return np.concatenate(src).astype(np.int64), np.concatenate(dst).astype(np.int64), ptr


@pytest.mark.parametrize("chunk", [1, 3, 7, 1 << 16])
def test_pyg_edges_over_many_chunks(chunk):
    rng = np.random.default_rng(chunk)
    for trial in range(60):
        src, dst, ptr = _random_pyg(rng, int(rng.integers(1, 30)))
        graph = np.searchsorted(ptr, src, side="right") - 1
        local_src, local_dst, eptr, code, bad, grouped = kernels.pyg_edges(src, dst, ptr, chunk)
        assert (code, bad, grouped) == (0, -1, True)
        np.testing.assert_array_equal(local_src, src - ptr[graph])
        np.testing.assert_array_equal(local_dst, dst - ptr[graph])
        np.testing.assert_array_equal(eptr, np.searchsorted(graph, np.arange(ptr.size)))
        if src.size > 2:                                   # edges out of graph order
            perm = rng.permutation(src.size)
            scattered = bool(np.any(np.diff(graph[perm]) < 0))
            assert kernels.pyg_edges(src[perm], dst[perm], ptr, chunk)[3:] == (0, -1, not scattered)
            # one bad edge, then a second later one: the first is reported
            for code_want, at in ((1, int(rng.integers(src.size))), (2, int(rng.integers(src.size)))):
                s, t = src.copy(), dst.copy()
                (s if code_want == 1 else t)[at] = ptr[-1] + 5
                s[-1] = -1
                want = _pyg_model(s, t, ptr)
                assert kernels.pyg_edges(s, t, ptr, chunk)[3:5] == want
            inside = np.flatnonzero(np.diff(ptr) > 0)
            if inside.size > 1:                            # an edge into another graph
                t = dst.copy()
                at = int(rng.integers(src.size))
                t[at] = ptr[inside[inside != graph[at]][0]]
                assert kernels.pyg_edges(src, t, ptr, chunk)[3:5] == _pyg_model(src, t, ptr) == (3, at)


def test_device_edge_pass_agrees_with_the_host_pass():
    """pyg_layout.device_edges (whole-array operations, CuPy on a GPU) run with NumPy in CuPy's
    place gives the host pass's answer: the first bad edge, eptr, and edges in graph order with
    their local ids (the order within a graph may differ: NumPy's default sort is not stable)."""
    from floydwarp.batch import pyg_layout

    rng = np.random.default_rng(17)
    for trial in range(80):
        src, dst, ptr = _random_pyg(rng, int(rng.integers(1, 25)))
        if src.size > 1 and trial % 2:
            perm = rng.permutation(src.size)
            src, dst = src[perm], dst[perm]
        if src.size and trial % 5 == 0:
            dst = dst.copy()
            dst[int(rng.integers(src.size))] = ptr[-1] + 1
        node_graph = np.repeat(np.arange(ptr.size - 1), np.diff(ptr)) if trial % 3 == 0 else None
        host = pyg_layout.host_edges(src, dst, ptr)
        device = pyg_layout.device_edges(np, src, dst, ptr, node_graph, int(ptr[-1]))
        assert host[4:] == device[4:]
        if host[4]:
            continue
        np.testing.assert_array_equal(host[2], device[2])                   # eptr
        graph = np.searchsorted(ptr, src, side="right") - 1
        for local_src, local_dst, _, order, _, _ in (host, device):
            order = np.arange(src.size) if order is None else order
            np.testing.assert_array_equal(local_src, (src - ptr[graph])[order])  # the weights follow order
            np.testing.assert_array_equal(local_dst, (dst - ptr[graph])[order])
            np.testing.assert_array_equal(graph[order], np.sort(graph))         # in graph order
