"""Matrices between the device and the host through pinned staging (gpu/staging.py) and into
result memory made ready ahead (gpu/transfer.py).

The chunk and direct-copy thresholds are shrunk so that small matrices take every path a
large one takes: many chunks, several workers, pre-faulted destinations, files.
(run with pytest -m gpu)
"""
import mmap

import numpy as np
import pytest

import floydwarp as fw
from floydwarp.arrays import to_host
from floydwarp.gpu import staging
from floydwarp.io import read_result, write_result

from conftest import path_length

cupy = pytest.importorskip("cupy")
pytestmark = pytest.mark.gpu


@pytest.fixture
def tiny_chunks(monkeypatch):
    """gpu/staging.py's copies in 4 KiB chunks on 4 workers, never one direct copy; the
    fixture is gpu/transfer.py, whose HostMatrix and to_host use them."""
    from floydwarp.gpu import staging, transfer

    monkeypatch.setattr(staging, "CHUNK_BYTES", 4096)
    monkeypatch.setattr(staging, "DIRECT_BYTES", 0)
    monkeypatch.setattr(staging, "workers_for", lambda nbytes: 4)
    return transfer


@pytest.mark.parametrize("n", [1, 2, 63, 300, 1031])
@pytest.mark.parametrize("dtype", ["int16", "int32", "float32", "float64"])
def test_a_host_result_through_staging_equals_the_cpu(tiny_chunks, n, dtype):
    g = fw.generate.erdos_renyi(n, 3, seed=n, weights=(1, 5), potential=2)   # int16 holds its paths
    gpu = fw.solve(g, backend="gpu", dtype=dtype, predecessors=n <= 300)
    cpu = fw.solve(g, backend="cpu", dtype=dtype, predecessors=n <= 300)
    assert isinstance(gpu.dist, np.ndarray) and gpu.dist.flags.c_contiguous
    assert np.array_equal(gpu.dist, cpu.dist)
    if n <= 300:
        w = g.to_matrix("float64", np.inf)
        for j in range(0, n, max(1, n // 7)):
            if cpu.reachable(0, j):
                assert path_length(w, gpu.path(0, j)) == cpu.distance(0, j)


@pytest.mark.parametrize("n", [1, 300, 1031])
def test_a_dense_host_matrix_goes_up_through_staging(tiny_chunks, n):
    w = fw.generate.erdos_renyi(n, 10, seed=n).to_matrix("float64", np.inf)
    assert np.array_equal(fw.solve(w, backend="gpu", dtype="int32").dist,
                          fw.solve(w, backend="cpu", dtype="int32").dist)
    g = fw.Graph.from_dense(w)
    for dtype, inf in (("int16", 16383), ("float32", np.inf)):
        dev = cupy.zeros((n + 5, n + 40), dtype=dtype)
        staging.upload(staging.Pitched.of(dev, n, n), staging.GraphRows(g, dtype, inf))
        assert np.array_equal(dev[:n, :n].get(), g.to_matrix(dtype, inf))          # converted in the staging
        assert not dev[n:].any() and not dev[:, n:].any()


def test_columns_upload_converts_like_astype(tiny_chunks):
    rng = np.random.default_rng(1)
    host = rng.integers(-(2 ** 40), 2 ** 40, size=10_007)
    for dtype in (np.uint16, np.int32, np.float32, np.int16):
        dev = cupy.empty(host.size, dtype=dtype)
        staging.upload_columns([(dev.data.ptr, host, dtype)])
        with np.errstate(all="ignore"):
            assert np.array_equal(dev.get(), host.astype(dtype))


def test_to_host_of_pitched_views_and_other_ranks(tiny_chunks):
    a = cupy.arange(300 * 517, dtype=cupy.int32).reshape(300, 517)
    assert np.array_equal(tiny_chunks.to_host(a, 123, 45), a.get()[:123, :45])
    cube = cupy.arange(5 * 40 * 33, dtype=cupy.float32).reshape(5, 40, 33)
    assert np.array_equal(to_host(cube), cube.get())
    assert np.array_equal(to_host(a[:, ::2]), a.get()[:, ::2])
    assert to_host(cupy.float32(3)) == 3
    for vector in (a.diagonal(), a[:, 7], a[5, ::3], a.diagonal()[1:50:2]):
        assert np.array_equal(to_host(vector), vector.get())
    for shape in [(0, 0), (0, 5), (3, 0, 2), (0,)]:
        assert to_host(cupy.zeros(shape, dtype=cupy.int16)).shape == shape


@pytest.mark.parametrize("predecessors", [False, True])
def test_a_device_result_streams_into_npy_files(tiny_chunks, tmp_path, predecessors):
    g = fw.generate.erdos_renyi(257, 4, seed=2)
    r = fw.solve(g, backend="gpu", dtype="int32", predecessors=predecessors, output="device")
    assert isinstance(r.dist, cupy.ndarray)
    path = write_result(r, tmp_path / "r.npy")
    host = r.to_host()
    back = read_result(path)
    assert np.array_equal(back.dist, host.dist) and back.dist.dtype == host.dist.dtype
    assert (back.pred is None) == (not predecessors)
    if predecessors:
        assert np.array_equal(back.pred, host.pred)
    np.save(tmp_path / "plain.npy", host.dist)
    assert (tmp_path / "plain.npy").read_bytes() == (tmp_path / "r.npy").read_bytes()


def _let_the_mapping_finish(host):
    """Wait until the threads have mapped and locked every piece."""
    for piece in host._futures:
        piece.result()


@pytest.mark.parametrize("shape,dtype", [((300, 517), "int32"), ((1031, 1031), "int16"), ((77, 3001), "float64")])
@pytest.mark.parametrize("lock_first", [True, False])
def test_a_page_locked_host_matrix_takes_the_dma_itself(tiny_chunks, monkeypatch, shape, dtype, lock_first):
    """Pieces locked before the copy go by DMA, the rest through staging: same bytes either way."""
    monkeypatch.setattr(tiny_chunks, "PIECE_BYTES", 64 << 10)
    rows, cols = shape
    a = cupy.arange((rows + 3) * (cols + 40), dtype=dtype).reshape(rows + 3, cols + 40)   # pitched
    host = tiny_chunks.HostMatrix(shape, dtype, lock=True)
    if lock_first:
        _let_the_mapping_finish(host)
    got = host.fill(a, rows, cols)
    assert got is host.array and got.flags.c_contiguous and got.ctypes.data % tiny_chunks.PAGE_BYTES == 0
    assert np.array_equal(got, a[:rows, :cols].get())
    if lock_first:
        assert all(host._wait())                                 # every piece went by DMA
    # the pieces stay locked while the array or a view of it lives; when the last goes they are
    # unlocked, or (all locked) kept for the next result until release_kept
    import gc

    from cupy.cuda import runtime as rt

    view, ptr = got[:], got.ctypes.data
    del got, host
    gc.collect()
    assert np.array_equal(view, a[:rows, :cols].get())
    del view
    gc.collect()
    tiny_chunks.release_kept()
    with pytest.raises(rt.CUDARuntimeError):                     # not registered any more
        rt.hostUnregister(ptr)


@pytest.mark.parametrize("n,dtype,rows", [(700, "int32", None), (520, "int16", (100, 413)), (300, "float64", (7, 300))])
def test_a_shared_mapping_takes_blocks_by_dma(tiny_chunks, monkeypatch, n, dtype, rows):
    """HostMatrix.over (a rank's rows of a result in shared memory): the pages are locked, never
    written; blocks land at their origin, by DMA or staging; release() unlocks."""
    from cupy.cuda import runtime as rt

    monkeypatch.setattr(tiny_chunks, "PIECE_BYTES", 64 << 10)
    shared = np.frombuffer(mmap.mmap(-1, n * n * np.dtype(dtype).itemsize), dtype=dtype).reshape(n, n)
    shared[:] = 7                                     # what was there before stays until filled
    host = tiny_chunks.HostMatrix.over(shared, rows)
    _let_the_mapping_finish(host)
    assert np.all(shared == 7)
    r0, r1 = rows or (0, n)
    half = n // 2
    left = cupy.arange((r1 - r0) * (half + 5), dtype=dtype).reshape(r1 - r0, half + 5)    # pitched blocks
    right = -cupy.arange((r1 - r0) * (n - half), dtype=dtype).reshape(r1 - r0, n - half)
    host.fill(left, r1 - r0, half, at=(r0, 0))
    host.fill(right, at=(r0, half))
    assert np.array_equal(shared[r0:r1, :half], left[:, :half].get())
    assert np.array_equal(shared[r0:r1, half:], right.get())
    assert np.all(shared[:r0] == 7) and np.all(shared[r1:] == 7)
    locked = host._wait()
    assert len(locked) > 1 and all(locked)           # every piece went by DMA
    with pytest.raises(ValueError, match="does not fit"):
        host.fill(right, at=(r0, half + 1))
    everything = cupy.arange(n * n, dtype=dtype).reshape(n, n)
    host.fill(everything)                             # rows outside the locked ones go through staging
    assert np.array_equal(shared, everything.get())
    host.release()
    with pytest.raises(rt.CUDARuntimeError):          # not registered any more
        rt.hostUnregister(host._spans[0][0])


def test_a_result_comes_back_through_locked_pages(tiny_chunks, monkeypatch):
    monkeypatch.setattr(tiny_chunks, "PIECE_BYTES", 64 << 10)
    g = fw.generate.erdos_renyi(700, 3, seed=7)
    gpu = fw.solve(g, backend="gpu", dtype="int32", predecessors=True)
    cpu = fw.solve(g, backend="cpu", dtype="int32", predecessors=True)
    assert np.array_equal(gpu.dist, cpu.dist)
    w = g.to_matrix("float64", np.inf)
    for j in range(0, 700, 37):
        if cpu.reachable(3, j):
            assert path_length(w, gpu.path(3, j)) == cpu.distance(3, j)


@pytest.mark.parametrize("n,width,dtype", [(1031, 256, "int32"), (700, 128, "int16"), (300, 64, "float32"),
                                           (100, 256, "int32")])
@pytest.mark.parametrize("pinned", [True, False])
def test_the_last_round_sends_rows_home_as_it_finishes_them(tiny_chunks, monkeypatch, n, width, dtype, pinned):
    """wide rounds into a host result: each band of the last round goes by DMA behind its
    kernel where its pages are locked (a small pinned result: every band), the rest after
    the kernels; the bytes are the same either way (100 vertices: one round)."""
    from floydwarp.gpu import delivery

    monkeypatch.setattr(delivery, "EARLY_MIN_BYTES", 0)
    if pinned:
        from floydwarp.gpu import staging

        monkeypatch.setattr(staging, "DIRECT_BYTES", 1 << 40)
    else:
        monkeypatch.setattr(tiny_chunks, "PIECE_BYTES", 64 << 10)
    g = fw.generate.erdos_renyi(n, 3, seed=n, weights=(1, 5), potential=2)
    gpu = fw.solve(g, backend="gpu", algorithm="fast", dtype=dtype, fast_variant="wide", wide_width=width)
    cpu = fw.solve(g, backend="cpu", dtype=dtype)
    assert isinstance(gpu.dist, np.ndarray) and np.array_equal(gpu.dist, cpu.dist)
    share = gpu.metadata["d2h_overlapped"]
    assert share == 1.0 if pinned else 0.0 <= share <= 1.0
    monkeypatch.setattr(delivery, "EARLY_MIN_BYTES", 1 << 40)      # a small result: after the kernels
    again = fw.solve(g, backend="gpu", algorithm="fast", dtype=dtype, fast_variant="wide", wide_width=width)
    assert np.array_equal(again.dist, cpu.dist) and "d2h_overlapped" not in again.metadata


@pytest.mark.parametrize("early", [None, (0, 128), (128, 640)])
def test_rows_sent_early_land_and_unlock_with_their_array(tiny_chunks, monkeypatch, early):
    """delivery.Rows: bands sent behind their kernels, the rest by finish(); the locked pages
    go with the array also when every row went early."""
    import gc

    from cupy.cuda import runtime as rt

    from floydwarp.gpu import delivery

    monkeypatch.setattr(tiny_chunks, "PIECE_BYTES", 64 << 10)
    n = 700
    a = cupy.arange((n + 5) * (n + 40), dtype=cupy.int32).reshape(n + 5, n + 40)     # padded, pitched
    host = tiny_chunks.HostMatrix((n, n), np.int32, lock=True)
    _let_the_mapping_finish(host)
    rows = delivery.Rows(host, a, n, n)
    for lo in range(*early, 64) if early else range(0, n + 5, 128):
        rows((lo, lo + (64 if early else 128)))
    got = rows.finish()
    assert np.array_equal(got, a[:n, :n].get())
    assert rows.share() == ((early[1] - early[0]) / n if early else 1.0)
    ptr = got.ctypes.data
    del got, host, rows
    gc.collect()
    tiny_chunks.release_kept()                        # all its pieces were locked: kept until now
    with pytest.raises(rt.CUDARuntimeError):          # not registered any more
        rt.hostUnregister(ptr)


def test_a_block_goes_home_at_its_place(tiny_chunks, monkeypatch):
    """A multi-GPU worker's block: its real rows and columns land at their origin in the
    result, the first bands behind kernels of the worker's own stream, the rest by finish()."""
    from floydwarp.gpu import delivery, panel

    monkeypatch.setattr(tiny_chunks, "PIECE_BYTES", 64 << 10)
    stream = cupy.cuda.Stream(non_blocking=True)
    with stream:
        a = cupy.arange(640 * 700, dtype=cupy.int32).reshape(640, 700)        # the padded block
    host = tiny_chunks.HostMatrix((900, 1000), np.int32, lock=True)
    _let_the_mapping_finish(host)
    rows = delivery.Rows(host, a, 600, 650, at=(250, 333), stream=stream)
    for band in panel.row_bands(640)[:5]:
        rows(band)
    got = rows.finish()
    assert 0 < rows.share() < 1
    assert np.array_equal(got[250:850, 333:983], a[:600, :650].get())
    outside = np.ones(got.shape, bool)
    outside[250:850, 333:983] = False
    assert not got[outside].any()


@pytest.mark.parametrize("dtype", ["uint8", "int16", "int32", "int64", "float32", "float64"])
def test_any_in_range_on_the_device(dtype):
    from floydwarp.gpu.checks import any_in_range

    rng = np.random.default_rng(3)
    for rows, cols in [(1, 1), (5, 300), (700, 33), (2, 70000)]:
        h = rng.integers(0, 100, size=(rows, cols)).astype(dtype)
        d = cupy.asarray(h)
        for lo, hi in [(0, 1), (50, 60), (99, 100), (100, 120), (-5, 0)]:
            if np.dtype(dtype).kind == "u" and lo < 0:
                continue
            assert any_in_range(d, lo, hi) == bool(((h >= lo) & (h < hi)).any())
        assert any_in_range(d[:, ::2], 0, 200) and not any_in_range(d[:0], 0, 200)
        big = cupy.full((rows + 2, cols + 64), 100, dtype=dtype)
        big[:rows, :cols] = d
        assert any_in_range(big[:rows, :cols], 100, 101) == bool((h == 100).any())   # pitched view


@pytest.mark.parametrize("dtype", ["int16", "int32", "float64"])
def test_pitched_device_views_copy_by_rows(dtype):
    from floydwarp.errors import FloydwarpError
    from floydwarp.gpu import panel

    h = np.arange(37 * 53).reshape(37, 53).astype(dtype)
    src = cupy.zeros((40, 70), dtype)[:37, 5:58]
    src[...] = cupy.asarray(h)
    dst = cupy.full((37, 61), 7, dtype)
    panel.copy(dst[:, 3:56], src)
    np.testing.assert_array_equal(dst[:, 3:56].get(), h)
    assert (dst[:, :3] == 7).all() and (dst[:, 56:] == 7).all()        # the pitch's padding untouched
    panel.copy(dst[:0, :0], src[:0, :0])
    with pytest.raises(FloydwarpError, match="copy"):
        panel.copy(dst, src)


@pytest.mark.parametrize("n,rows,cols", [(1, 1, 1), (5, 5, 5), (5, 64, 70), (300, 320, 333)])
def test_seeded_predecessors_cover_the_padding(n, rows, cols):
    """start.seed_predecessors writes every entry of a padded predecessor matrix that starts
    empty: i on the edges of the n x n corner, none elsewhere."""
    from floydwarp.gpu import start
    from floydwarp.predecessors import NO_PREDECESSOR

    rng = np.random.default_rng(n)
    inf = np.int32(2**30 - 1)
    w = np.where(rng.random((n, n)) < 0.3, rng.integers(1, 9, (n, n)), inf).astype(np.int32)
    np.fill_diagonal(w, 0)
    d = cupy.full((rows, cols + 3), inf, np.int32)
    d[:n, :n] = cupy.asarray(w)
    pr = cupy.full((rows, cols), 12345, np.int32)
    start.seed_predecessors(d, pr, n, inf)
    want = np.full((rows, cols), NO_PREDECESSOR, np.int32)
    i, j = np.nonzero((w < inf) & ~np.eye(n, dtype=bool))
    want[i, j] = i
    np.testing.assert_array_equal(pr.get(), want)


def test_a_first_kernel_compile_is_its_own_stage(monkeypatch):
    """A kernel fetched for the first time inside the compute is timed as "compile", not "compute"."""
    from floydwarp.gpu import modules

    monkeypatch.setattr(modules, "_KERNELS", {})            # every kernel is new to this process
    r = fw.solve(fw.generate.erdos_renyi(300, 5, seed=1), backend="gpu", dtype="int32")
    assert r.timings["compile"] > 0
    again = fw.solve(fw.generate.erdos_renyi(300, 5, seed=1), backend="gpu", dtype="int32")
    assert "compile" not in again.timings


@pytest.mark.parametrize("dtype", ["int16", "int32", "float32", "float64"])
def test_a_device_matrix_is_read_band_by_band(monkeypatch, dtype):
    """Statistics and the start matrix of a device graph come from bands of a few rows (the
    temporaries of a matrix of half the device's memory must fit beside it): same as the host's."""
    from floydwarp.graph import graph as graph_module

    monkeypatch.setattr(graph_module, "DEVICE_BAND_ENTRIES", 3000)
    rng = np.random.default_rng(5)
    n = 211
    w = rng.integers(0, 20, size=(n, n)).astype(np.float64)
    w[rng.random((n, n)) < 0.6] = np.inf
    w[100, 100] = 4                                  # a positive self-loop is no edge
    for weights in (w, np.where(np.eye(n, dtype=bool) & (np.arange(n) == 7), -1, w)):   # a negative one is
        host, dev = fw.Graph.from_dense(weights), fw.Graph.from_dense(cupy.asarray(weights))
        assert dev.weight_stats() == host.weight_stats() and dev.num_edges == host.num_edges
    # (a negative cycle's pairs hold whatever the order of relaxations left in floats: compare without it)
    a = fw.solve(fw.Graph.from_dense(cupy.asarray(w)), backend="gpu", dtype=dtype, output="host")
    b = fw.solve(fw.Graph.from_dense(w), backend="cpu", dtype=dtype)
    assert np.array_equal(a.dist, b.dist)


def test_a_matrix_diagonal_comes_to_the_host_without_a_cupy_kernel(tmp_path):
    """The solver reads every result's diagonal (negative cycles, lost data): by a 2-D copy, so
    that a process with an empty CuPy cache starts no compiler for it (CuPy writes each kernel
    it compiles into its cache folder; the matrix is uploaded, as ``cupy.arange`` is a kernel)."""
    import os
    import subprocess
    import sys

    code = ("import cupy, numpy; from floydwarp.arrays import to_host; import floydwarp.gpu; "
            "d = cupy.asarray(numpy.arange(1000 * 1000, dtype=numpy.int32).reshape(1000, 1000)); "
            "assert numpy.array_equal(to_host(d.diagonal()), numpy.arange(1000) * 1001)")
    cache = tmp_path / "cupy-cache"
    subprocess.run([sys.executable, "-c", code], check=True, env={**os.environ, "CUPY_CACHE_DIR": str(cache)})
    assert not cache.exists() or list(cache.iterdir()) == []
