"""Rows of the result going home during the last round (schedule.run(deliver=), gpu/wide.py's
bands, gpu/delivery.py): the logic on the CPU, with NumPy playing the GPU (numpy_gpu.py).
The copies themselves are tested on a GPU in test_gpu_transfer.py."""
import functools
import sys
from concurrent.futures import Future

import numpy as np
import pytest
from scipy.sparse.csgraph import floyd_warshall

from floydwarp import numeric, schedule
from floydwarp.gpu import delivery, panel, transfer, wide
from numpy_gpu import FAKE_CUPY, NumpyPanel, ScheduledCupy


def _padded_start(w, n_pad):
    inf = np.int32(numeric.inf_of(np.int32))
    d = np.full((n_pad, n_pad), inf, np.int32)
    n = w.shape[0]
    d[:n, :n] = np.where(np.isinf(w), inf, w).astype(np.int32)
    np.fill_diagonal(d, np.minimum(np.diagonal(d), 0))
    return d, inf


@pytest.mark.parametrize("n,width,bands", [(333, 128, 16), (200, 64, 3), (64, 64, 16), (1000, 192, 5), (130, 192, 2)])
def test_the_last_round_delivers_every_row_final_band_by_band(monkeypatch, n, width, bands):
    from conftest import random_weight_matrix

    monkeypatch.setitem(sys.modules, "cupy", FAKE_CUPY)
    monkeypatch.setattr(wide, "panel", NumpyPanel)
    monkeypatch.setattr(panel, "DELIVERY_BANDS", bands)
    rng = np.random.default_rng(n + width)
    w = random_weight_matrix(rng, n, density=0.05, low=1, high=20)
    n_pad = -(-n // 64) * 64
    d, inf = _padded_start(w, n_pad)
    engine = wide.Rounds(d, width, functools.partial(NumpyPanel.close_block, plan=None), panel.Arith(np.int32(-inf)))
    seen = []

    def deliver(rows):
        seen.append((rows, d[rows[0]:rows[1]].copy()))

    rounds = []
    schedule.run(engine, report=lambda done, total: rounds.append(done), deliver=deliver)
    got = d[:n, :n].astype(np.float64)
    got[got >= inf] = np.inf
    np.testing.assert_array_equal(got, floyd_warshall(w))      # w: inf = no edge, no zero weights
    # the bands cover every row once, in order, each as final as the end result
    assert [rows for rows, _ in seen] == [part for part, _ in engine.row_parts(engine.rounds - 1)]
    assert seen[0][0][0] == 0 and seen[-1][0][1] == n_pad
    assert all(a[1] == b[0] for (a, _), (b, _) in zip(seen, seen[1:]))
    tiles = n_pad // 64
    assert len(seen) == -(-tiles // -(-tiles // bands)) <= bands    # bands of equal whole tiles
    for (lo, hi), early in seen:
        assert np.array_equal(early, d[lo:hi])
    assert rounds == list(range(1, engine.rounds + 1))       # delivered within the last round


def test_engines_without_bands_deliver_nothing():
    class Whole:
        rounds = 3

        def product(self, r, part):
            assert part == schedule.ALL

    calls = []
    schedule.run(Whole(), deliver=calls.append)
    assert calls == []


@pytest.mark.parametrize("skip,lo,hi,want", [
    ((4, 2), 0, 8, (4, 2)), ((4, 2), 4, 8, (0, 2)), ((4, 2), 5, 8, (0, 1)), ((4, 2), 0, 5, (4, 1)),
    ((4, 2), 6, 9, (0, 0)), ((4, 2), 0, 4, (0, 0)), ((0, 0), 0, 3, (0, 0)), ((2, 10), 4, 6, (0, 2))])
def test_band_skip(skip, lo, hi, want):
    assert panel.band_skip(skip, lo, hi) == want


@pytest.mark.parametrize("sent,n,want", [
    ([], 10, [(0, 10)]), ([(0, 10)], 10, []), ([(3, 5)], 10, [(0, 3), (5, 10)]),
    ([(5, 10), (0, 2)], 10, [(2, 5)]), ([(0, 4), (4, 6)], 6, []), ([], 0, [])])
def test_unsent_rows(sent, n, want):
    assert delivery.unsent(sent, n) == want


def _done(value):
    f = Future()
    f.set_result(value)
    return f


def test_locked_rows_are_those_of_pieces_locked_by_now():
    """A result's host array tells which rows a DMA may fill before its mapping is done:
    pieces locked so far (done and True), without stopping the others."""
    host = transfer.HostMatrix.__new__(transfer.HostMatrix)
    host._pieces = [(0, 10), (10, 20), (20, 30)]
    host._locked = None
    host._futures = [_done(True), Future(), _done(False)]
    assert host.locked_rows(0, 30) == [(0, 10)]
    assert host.locked_rows(5, 25) == [(5, 10)]
    assert host.locked_rows(12, 18) == []
    host._futures[1].set_result(True)
    assert host.locked_rows(5, 25) == [(5, 10), (10, 20)]
    host._locked = [True, False, True]                    # the mapping is over: its answer counts
    assert host.locked_rows(0, 30) == [(0, 10), (20, 30)]
    small = transfer.HostMatrix.__new__(transfer.HostMatrix)
    small._pieces = []
    assert small.locked_rows(3, 7) == [(3, 7)] and small.locked_rows(4, 4) == []


@pytest.mark.parametrize("seed", range(12))
def test_device_rows_copy_each_band_after_its_kernel(monkeypatch, seed):
    """delivery.DeviceRows (a multi-GPU result kept on GPU 0): on streams run in any order a GPU
    may pick, each band's copy reads the band only after the kernel that finished it, and
    ``finish`` copies the bands never handed over; nothing outside the block's place is written."""
    gpu = ScheduledCupy(seed)
    monkeypatch.setitem(sys.modules, "cupy", gpu.cupy)
    monkeypatch.setitem(sys.modules, "cupy.cuda", gpu.cupy.cuda)
    monkeypatch.setitem(sys.modules, "cupy.cuda.runtime", gpu.runtime)
    rng = np.random.default_rng(seed)
    final = rng.integers(0, 1000, (40, 32)).astype(np.int32)
    block = gpu.full((40, 48), -1, np.int32)             # pitched: 32 real columns of 48
    out = gpu.empty((50, 60), np.int32)
    gpu.drain()
    compute = gpu.cupy.cuda.Stream()
    rows = delivery.DeviceRows(out, block, 40, 32, at=(5, 9), stream=compute)
    with compute:
        for lo, hi in ((0, 16), (16, 30)):                # the band 30..40 is never handed over
            block[lo:hi, :32] = final[lo:hi]              # the band's kernel, queued on the compute stream
            rows((lo, hi))
        block[30:40, :32] = final[30:40]
    got = np.asarray(rows.finish())
    np.testing.assert_array_equal(got[5:45, 9:41], final)
    outside = np.ones(got.shape, bool)
    outside[5:45, 9:41] = False
    assert np.all(got[outside] == 7)                      # a fresh buffer's bytes, untouched
    assert rows.share() == 30 / 40


def test_a_locked_result_mapping_is_kept_for_the_next_result_of_its_size(monkeypatch):
    """transfer.HostMatrix: when a locked result's array goes, its mapping stays locked and is
    the next result of the same size (no page is locked again); one released early, or of
    another size, is not reused; release_kept unlocks what is kept."""
    import contextlib
    import gc

    gpu = ScheduledCupy(0)
    monkeypatch.setitem(sys.modules, "cupy", gpu.cupy)
    monkeypatch.setitem(sys.modules, "cupy.cuda", gpu.cupy.cuda)
    monkeypatch.setitem(sys.modules, "cupy.cuda.runtime", gpu.runtime)
    locked, unlocked = [], []
    monkeypatch.setattr(gpu.runtime, "hostRegister", lambda ptr, size, flags: locked.append(ptr))
    monkeypatch.setattr(gpu.runtime, "hostUnregister", lambda ptr: unlocked.append(ptr))
    monkeypatch.setattr(gpu.cupy.cuda, "Device", lambda *a: contextlib.nullcontext())
    monkeypatch.setattr(transfer, "_KEPT", [])
    monkeypatch.setattr(transfer, "PIECE_BYTES", 16 << 20)
    n = 4200                                              # 70.6 MB of int32: over staging.DIRECT_BYTES
    first = transfer.HostMatrix((n, n), np.int32, lock=True)
    for piece in first._futures:                          # every piece locked before the run ends
        piece.result()
    assert first.locked_share() == 1.0
    address, pieces = first.array.ctypes.data, len(locked)
    assert pieces > 1
    first.array[-1, -1] = 5
    del first
    gc.collect()
    assert unlocked == [] and len(transfer._KEPT) == 1
    again = transfer.HostMatrix((n, n), np.int32, lock=True)
    assert again.array.ctypes.data == address and again.locked_share() == 1.0 and len(locked) == pieces
    assert sum(b - a for a, b in again.locked_rows(0, n)) == n and transfer._KEPT == []
    other = transfer.HostMatrix((n + 64, n), np.int32, lock=True)     # another size: a mapping of its own
    for piece in other._futures:
        piece.result()
    assert other.array.ctypes.data != address and len(locked) > pieces
    other.release()                                       # released while its array lives: unlocked, not kept
    assert sorted(unlocked) == sorted(locked[pieces:])
    view = again.array[:3]                                # a view outlives the array: its pages stay locked
    del again, other
    gc.collect()
    assert transfer._KEPT == [] and sorted(unlocked) == sorted(locked[pieces:])
    third = transfer.HostMatrix((n, n), np.int32, lock=True)
    for piece in third._futures:
        piece.result()
    assert third.array.ctypes.data != address            # the viewed mapping is not anyone else's
    del third, view                                       # both go: the last one given back is kept
    gc.collect()
    assert len(transfer._KEPT) == 1
    transfer.release_kept()
    assert transfer._KEPT == [] and sorted(unlocked) == sorted(locked)
