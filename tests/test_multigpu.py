"""Multi-GPU engines: the partition and the control plane (CPU, in CI), results on GPUs (gpu/multigpu)."""
import functools
import os
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

import floydwarp as fw
from floydwarp import numeric, registry, schedule
from floydwarp.errors import DeviceError, FloydwarpError, InternalError
from floydwarp.grid import ProcessGrid
from floydwarp.multigpu.control import reduce_values
from floydwarp.multigpu.partition import BlockPartition, choose_grid, split_bounds, union_skip
from floydwarp.multigpu.threads import in_threads
from floydwarp.generate import erdos_renyi
from floydwarp.plan import Plan
from numpy_gpu import FAKE_CUPY, NumpyPanel


# ---------------------------------------------------------------- partition and schedule (no GPU)
GRIDS = [(1, 1), (1, 2), (2, 1), (2, 2), (3, 2), (1, 5)]


@pytest.mark.parametrize("n", [0, 1, 63, 64, 65, 1000, 4097])
@pytest.mark.parametrize("width", [64, 192, 512])
@pytest.mark.parametrize("shape", GRIDS)
def test_partition_covers_the_padded_matrix_once(n, width, shape):
    part = BlockPartition(n, width, *shape)
    assert part.padded % 64 == 0 and part.padded >= n and part.padded - n < 64
    spans = [part.span(t) for t in range(part.panels)]
    assert sum(w for _, w in spans) == part.padded
    assert all(w % 64 == 0 and 0 < w <= width for _, w in spans)
    for extent, count in ((part.row_extent, shape[0]), (part.col_extent, shape[1])):
        start = 0
        for p in range(count):
            first, size = extent(p)
            assert size % 64 == 0
            if size:
                assert first == start
            start += size
        assert start == part.padded
    for t in range(part.panels):
        k0, w = part.span(t)
        first, size = part.row_extent(part.owner_row(t))
        assert first <= k0 and k0 + w <= first + size
        first, size = part.col_extent(part.owner_col(t))
        assert first <= k0 and k0 + w <= first + size


@pytest.mark.parametrize("shape", GRIDS)
def test_each_round_has_one_pivot_owner_and_whole_panel_groups(shape):
    part = BlockPartition(1000, 128, *shape)
    size = shape[0] * shape[1]
    for t in range(part.panels):
        roles = [part.round_roles(t, ProcessGrid(shape[0], shape[1], r)) for r in range(size)]
        assert sum(r["closes_pivot"] for r in roles) == 1
        assert sum(r["row_panel"] for r in roles) == shape[1]       # one process row
        assert sum(r["col_panel"] for r in roles) == shape[0]       # one process column
        for rank, r in enumerate(roles):
            g = ProcessGrid(shape[0], shape[1], rank)
            rows, cols = part.local_shape(g.my_row, g.my_col)
            if r["row_panel"]:
                assert 0 <= r["local_row"] and r["local_row"] + r["width"] <= rows
            if r["col_panel"]:
                assert 0 <= r["local_col"] and r["local_col"] + r["width"] <= cols


def test_split_bounds_and_skip_ranges():
    assert split_bounds(5, 2) == [0, 2, 5]
    assert split_bounds(1, 3) == [0, 0, 0, 1]
    assert union_skip(None) == (0, 0)
    assert union_skip((128, 64)) == (2, 1)
    assert union_skip((128, 64), (192, 128)) == (2, 3)
    assert union_skip(None, (64, 64)) == (1, 1)
    with pytest.raises(FloydwarpError, match="do not touch"):
        union_skip((0, 64), (192, 64))


def test_grid_choice_and_refusals():
    assert choose_grid(1) == (1, 1)
    assert choose_grid(2) == (1, 2)
    assert choose_grid(4) == (2, 2)
    assert choose_grid(6) == (2, 3)
    assert choose_grid(4, (4, 1)) == (4, 1)
    with pytest.raises(ValueError, match="does not match"):
        choose_grid(4, (3, 1))
    with pytest.raises(FloydwarpError, match="multiple of 64"):
        BlockPartition(100, 100, 1, 2)


def test_predecessors_are_refused_naming_who_can():
    with pytest.raises(FloydwarpError, match=r"mpi/gpu-2d cannot compute predecessors; these can: blocked-2d"):
        registry.lookup("mpi", "gpu-2d", dtype=np.dtype("int32"), predecessors=True, n=10)
    # no multigpu algorithm can: the message named none ("these can: ") and now says where to look
    with pytest.raises(FloydwarpError, match=r"multigpu/gpu-2d cannot compute predecessors, nor can any multigpu "
                                             r"algorithm; `floydwarp info` marks"):
        registry.lookup("multigpu", "gpu-2d", dtype=np.dtype("int32"), predecessors=True, n=10)


# ---------------------------------------------------------------- the schedule itself, on NumPy (no GPU)
class _Group:
    """One NCCL communicator's members as threads: bcast through a shared slot."""

    def __init__(self, size):
        self.barrier = threading.Barrier(size, timeout=20)
        self.slot = None

    def member(self, index):
        """Member ``index``'s handle (what Gpu2D's broadcast is given)."""
        return self, index

    def abort(self):
        self.barrier.abort()

    def bcast(self, index, array, root):
        if index == root:
            self.slot = array.copy()
        self.barrier.wait()
        assert array.shape == self.slot.shape, (array.shape, self.slot.shape)
        if index != root:
            array[...] = self.slot
        self.barrier.wait()


class _SlotLinks:
    """The links of :func:`_simulate`: each communicator a slot its members' threads share."""

    group = _Group

    @staticmethod
    def broadcast(comm, array, root, stream):
        comm[0].bcast(comm[1], array, root)


def _simulate(weights, shape, width, lookahead, delivered=None, rest_bands=1, timelines=None, links=_SlotLinks):
    """Run Gpu2D on every process of a Pr x Pc grid (threads, NumPy) and assemble the result;
    with a dict ``delivered``, what the last round hands over (rank -> ([(rows, their values
    then)], the rank's final block)).  ``links``: how the panels move (``group(size)`` makes a
    communicator of ``size`` members, with ``member(index)`` and ``abort()``; ``broadcast`` is
    Gpu2D's)."""
    import dataclasses

    from floydwarp.multigpu.rank import Gpu2D
    from floydwarp.multigpu.timeline import Timeline

    n = weights.shape[0]
    inf = np.int32(numeric.inf_of(np.int32))
    part = BlockPartition(n, width, *shape)
    full = np.full((part.padded, part.padded), inf, np.int32)
    full[:n, :n] = np.where(np.isinf(weights), inf, weights).astype(np.int32)
    np.fill_diagonal(full[:n, :n], np.minimum(np.diagonal(full[:n, :n]), 0))
    plan = Plan(n=n, dtype=np.dtype(np.int32), inf=inf, clamp=False, backend="mpi", algorithm="gpu-2d")
    rows = [links.group(shape[1]) if shape[1] > 1 else None for _ in range(shape[0])]
    cols = [links.group(shape[0]) if shape[0] > 1 else None for _ in range(shape[1])]
    blocks, errors = {}, []

    def rank_main(rank):
        try:
            g = ProcessGrid(shape[0], shape[1], rank)
            (r0, nr), (c0, nc) = part.row_extent(g.my_row), part.col_extent(g.my_col)
            local = full[r0:r0 + nr, c0:c0 + nc].copy()
            timeline = None if timelines is None else timelines.setdefault(rank, Timeline(FAKE_CUPY))
            comms = SimpleNamespace(row=rows[g.my_row].member(g.my_col) if shape[1] > 1 else None,
                                    col=cols[g.my_col].member(g.my_row) if shape[0] > 1 else None)
            engine = Gpu2D(part, g, local, dataclasses.replace(plan), comms, xp=FAKE_CUPY, ops=NumpyPanel,
                           close=NumpyPanel.close_block, broadcast=links.broadcast, rest_bands=rest_bands,
                           timeline=timeline)
            if timeline is not None:
                timeline.start(engine.main)
            handed = []
            deliver = None if delivered is None else lambda rows: handed.append((rows, local[rows[0]:rows[1]].copy()))
            schedule.run(engine, lookahead=lookahead, deliver=deliver)
            blocks[rank] = (r0, c0, local)
            if delivered is not None:
                delivered[rank] = handed, local
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)
            for grp in rows + cols:
                if grp is not None:
                    grp.abort()

    threads = [threading.Thread(target=rank_main, args=(r,)) for r in range(shape[0] * shape[1])]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    if errors:
        raise errors[0]
    out = np.empty_like(full)
    for r0, c0, local in blocks.values():
        out[r0:r0 + local.shape[0], c0:c0 + local.shape[1]] = local
    return out[:n, :n]


@pytest.mark.parametrize("shape", [(1, 1), (1, 2), (2, 1), (2, 2), (3, 2), (2, 3), (4, 1), (1, 4), (2, 4),
                                   (4, 2)])
@pytest.mark.parametrize("lookahead, rest_bands", [(True, 1), (False, 1), (True, 3)])
def test_schedule_on_numpy_matches_the_reference(shape, lookahead, rest_bands):
    """The whole multi-GPU schedule (owners, skips, lookahead split, phase 3's bulk in bands,
    broadcasts) on every grid the code allows up to 8 GPUs, with NumPy for the panel kernels
    and threads for processes."""
    from conftest import random_weight_matrix

    rng = np.random.default_rng(sum(shape) + lookahead + rest_bands)
    for n, width in ((333, 128), (200, 64), (1, 64)):
        w = random_weight_matrix(rng, n, density=0.05, low=1, high=20)
        want = fw.solve(w, backend="reference", dtype="float64").to_dense()
        timelines = {} if rest_bands > 1 else None
        got = _simulate(w, shape, width, lookahead, rest_bands=rest_bands, timelines=timelines).astype(np.float64)
        if timelines is not None:                  # every rank timed its products, every round
            for timeline in timelines.values():
                bulk = {row[0] for row in timeline.rows() if row[1] in ("rest", "all")}
                assert bulk == set(range(-(-n // width)))
        got[got >= numeric.inf_of(np.int32)] = np.inf
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("shape", [(1, 1), (1, 2), (2, 1), (2, 2)])
@pytest.mark.parametrize("bands", [16, 3])
def test_each_block_hands_its_rows_over_final_during_the_last_round(monkeypatch, shape, bands):
    """With ``deliver``, every process's last round runs in bands of its block's rows, each
    handed over as final as the end result, together covering the block."""
    from conftest import random_weight_matrix

    from floydwarp.gpu import panel

    monkeypatch.setattr(panel, "DELIVERY_BANDS", bands)
    rng = np.random.default_rng(sum(shape) + bands)
    w = random_weight_matrix(rng, 333, density=0.05, low=1, high=20)
    delivered = {}
    got = _simulate(w, shape, 128, True, delivered).astype(np.float64)
    got[got >= numeric.inf_of(np.int32)] = np.inf
    np.testing.assert_array_equal(got, fw.solve(w, backend="reference", dtype="float64").to_dense())
    assert sorted(delivered) == list(range(shape[0] * shape[1]))
    for handed, block in delivered.values():
        assert [rows for rows, _ in handed] == panel.row_bands(block.shape[0])
        for (lo, hi), early in handed:
            assert np.array_equal(early, block[lo:hi])


# ---------------------------------------------------------------- control plane and threads (no GPU)
def test_nccl_settings_cap_the_channels_unless_the_user_chose():
    from floydwarp.multigpu.nccl import MAX_CTAS, apply_settings

    env = {}
    apply_settings(22809, env)
    assert env == {"NCCL_NVLS_ENABLE": "0", "NCCL_CUMEM_ENABLE": "0", "NCCL_MAX_CTAS": str(MAX_CTAS)}
    env = {}
    apply_settings(21603, env)                 # before NCCL 2.17 the setting had its older name
    assert env == {"NCCL_NVLS_ENABLE": "0", "NCCL_CUMEM_ENABLE": "0", "NCCL_MAX_NCHANNELS": str(MAX_CTAS)}
    for chosen in ({"NCCL_MAX_CTAS": "32"}, {"NCCL_MAX_NCHANNELS": "2"}, {"NCCL_NVLS_ENABLE": "1"},
                   {"NCCL_CUMEM_ENABLE": "1"}):
        env = dict(chosen)
        apply_settings(22809, env)
        assert {k: env[k] for k in chosen} == chosen


def test_starting_nccl_early_without_it_is_harmless():
    from floydwarp.multigpu import nccl

    nccl.begin(0).join(timeout=60)          # no NCCL here, or no GPU: the thread just ends
    nccl._started()
    assert not nccl._STARTED


def test_reductions():
    assert reduce_values([1, 2, 3], "sum") == 6 and reduce_values([3, 7, 5], "max") == 7
    assert reduce_values([False, True], "or") is True and reduce_values([True, False], "and") is False
    with pytest.raises(InternalError, match="unknown reduction"):
        reduce_values([1], "median")


def _collectives(control, scale):
    """Every collective once, from each rank."""
    rank = control.rank
    token = control.bcast({"token": 42} if rank == 0 else None, root=0)
    total = control.allreduce(rank * scale, "sum")
    late = control.bcast(f"from {rank}", root=control.size - 1)
    gathered = control.gather(rank, root=0)
    control.barrier()
    return {"token": token, "total": total, "late": late, "gathered": gathered, "kind": control.kind}


def test_thread_control_collectives():
    results = in_threads(lambda control: _collectives(control, 10), 3, timeout=30)
    assert [r["total"] for r in results] == [30, 30, 30]
    assert all(r["token"] == {"token": 42} and r["late"] == "from 2" for r in results)
    assert results[0]["gathered"] == [0, 1, 2] and results[1]["gathered"] is None
    assert results[0]["kind"] == "GPU"
    # many rounds in a row: an exchange never reads the next one's slots
    many = in_threads(lambda c: [c.allreduce(c.rank + i, "max") for i in range(200)], 4, timeout=30)
    assert all(r == [3 + i for i in range(200)] for r in many)


def _fail(control, how):
    """Rank 1 fails in the way asked; the others wait in a collective."""
    control.barrier()
    if control.rank == 1:
        if how == "raise":
            raise RuntimeError("injected failure")
        if how == "stall":
            time.sleep(5)
    control.barrier()
    return control.rank


@pytest.mark.parametrize("how, error, message", [("raise", RuntimeError, "injected failure"),
                                                 ("stall", DeviceError, "broke off")])
def test_a_failing_thread_ends_the_run_with_its_own_error(how, error, message):
    """The failure itself is raised (not the others' "broke off"), promptly, and a later run works."""
    aborted = []
    t0 = time.monotonic()
    with pytest.raises(error, match=message):
        in_threads(lambda control: _fail(control, how), 3, timeout=1, on_failure=lambda: aborted.append(1))
    assert time.monotonic() - t0 < 30 and aborted
    assert in_threads(lambda control: control.allreduce(1), 2, timeout=5) == [2, 2]


class _Array:
    """A device array as peers.bcast sees it: its pointer, device and size (host bytes here)."""

    def __init__(self, values, device):
        self.host = np.ascontiguousarray(values)
        self.size, self.nbytes = self.host.size, self.host.nbytes
        self.data = SimpleNamespace(ptr=self.host.ctypes.data)
        self.device = SimpleNamespace(id=device)


def test_peer_broadcasts_copy_the_roots_array_in_stream_order(monkeypatch):
    """PeerLinks.bcast on a stand-in CuPy: every member gets the root's bytes; the root's stream
    waits for every copy (its array is not written again before they read it)."""
    import ctypes
    import sys

    from floydwarp.multigpu.peers import PeerLinks

    copies, waits = [], []

    class Stream:
        def __init__(self, name):
            self.name, self.ptr = name, 0

        def record(self):
            return ("event", self.name, len(copies))

        def wait_event(self, event):
            waits.append((self.name, event[1]))

    def memcpy_peer(dst, dst_dev, src, src_dev, nbytes, stream):
        ctypes.memmove(dst, src, nbytes)
        copies.append((src_dev, dst_dev))

    fake = SimpleNamespace(cuda=SimpleNamespace(runtime=SimpleNamespace(memcpyPeerAsync=memcpy_peer)))
    monkeypatch.setitem(sys.modules, "cupy", fake)
    links = PeerLinks(1, 3, timeout=10)                # one process row of three GPUs

    def member(control):
        comms = links.grid_comms(control, ProcessGrid(1, 3, control.rank))
        assert comms.col is None
        a = _Array(np.full(5, control.rank * 10, np.int32), control.rank)
        links.bcast(comms.row, a, 2, Stream(control.rank))
        return a.host.tolist()

    assert in_threads(member, 3, timeout=10) == [[20] * 5] * 3
    assert sorted(copies) == [(2, 0), (2, 1)]
    assert (2, 0) in waits and (2, 1) in waits                         # the root waited for both copies
    assert (0, 2) in waits and (1, 2) in waits                         # each copy waited for the root


def test_a_block_of_a_shared_matrix_takes_row_chunks():
    from floydwarp.gpu.staging import ArraySink

    full = np.zeros((6, 10), np.int32)
    sink = ArraySink(full[1:5, 3:7])                               # a process's block: strided rows
    chunk = np.arange(8, dtype=np.int32)
    sink.write(2 * 16, chunk.view(np.uint8))                       # rows 2..3 of the block
    assert np.array_equal(full[3:5, 3:7], chunk.reshape(2, 4)) and full.sum() == chunk.sum()
    back = np.empty(8, np.int32)
    sink.read(2 * 16, back.view(np.uint8))
    assert np.array_equal(back, chunk)
    with pytest.raises(ValueError):
        ArraySink(full[:, ::2])


@pytest.mark.mpi
@pytest.mark.skipif(shutil.which("mpiexec") is None, reason="no mpiexec")
def test_mpi_control_collectives():
    """The same Control contract over MPI (CPU ranks: CI runs it)."""
    pytest.importorskip("mpi4py")
    import json

    script = Path(__file__).parent / "mpi_scripts" / "control_collectives.py"
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OMPI_MCA_rmaps_base_oversubscribe="1", NCCL_NVLS_ENABLE="0")
    proc = subprocess.run(["mpiexec", "-n", "3", sys.executable, str(script)], capture_output=True, text=True,
                          timeout=120, env=env)
    assert proc.returncode == 0, proc.stderr[-2000:]
    got = json.loads(next(line for line in reversed(proc.stdout.splitlines()) if line.startswith("{")))
    assert got == {"size": 3, "token": {"ids": [1, 2]}, "late": "from 2", "total": 6, "flag": True,
                   "gathered": [0, 10, 20], "kind": "rank"}


def test_cli_gpus_refuses_distributed():
    from cli_runner import cli_runner
    from floydwarp.cli.app import app

    out = cli_runner().invoke(app, ["solve", "-g", "10", "--gpus", "2", "--distributed"])
    assert out.exit_code == 2
    assert "--gpus runs a thread per GPU of this machine" in out.stderr


@pytest.mark.parametrize("shape", [(1, 2), (2, 2), (1, 3), (2, 4)])
def test_a_grid_rows_gpus_share_their_edges_upload(monkeypatch, shape):
    """blocks.RowSharedEdgeBlocks, its GPUs played by threads and NumPy: each GPU of a grid row
    uploads a share of the row's edges, every block reads them all and is the start matrix's
    block; no share outlives the rows' second meeting."""
    from floydwarp.gpu import start
    from floydwarp.multigpu import blocks

    monkeypatch.setitem(sys.modules, "cupy", SimpleNamespace(cuda=SimpleNamespace(
        get_current_stream=lambda: SimpleNamespace(synchronize=lambda: None))))
    uploaded = []

    def upload(edges, n, dtype):
        uploaded.append(len(edges[0]))
        return tuple(np.array(e) for e in edges)

    def matrix(rows, pitch, dtype, inf, origin=(0, 0)):
        i, j = np.indices((rows, pitch))
        return np.where(i + origin[0] == j + origin[1], 0, inf).astype(dtype)

    def scatter(d, edges, origin=(0, 0)):
        i, j = edges[0] - origin[0], edges[1] - origin[1]
        inside = (i >= 0) & (i < d.shape[0]) & (j >= 0) & (j < d.shape[1])
        d[i[inside], j[inside]] = edges[2][inside]

    monkeypatch.setattr(start, "upload_edges", upload)
    monkeypatch.setattr(start, "matrix", matrix)
    monkeypatch.setattr(start, "scatter", scatter)
    g = graph(333, "neg")
    dt, inf = np.dtype(np.int32), numeric.inf_of(np.int32)
    part = BlockPartition(g.n, 64, *shape)
    source = blocks.of_graph(g, dt, inf, shared_by=(shape, 30))
    assert isinstance(source, blocks.RowSharedEdgeBlocks)
    built = in_threads(lambda c: source.block(part, ProcessGrid(*shape, c.rank), dt, inf), shape[0] * shape[1], 30)
    start_matrix = g.to_matrix(dt, inf)
    for rank, got in enumerate(built):
        r0, r1, c0, c1 = blocks.real_extent(part, ProcessGrid(*shape, rank))
        assert np.array_equal(got[:r1 - r0, :c1 - c0], start_matrix[r0:r1, c0:c1])
    assert sum(uploaded) == g.num_edges and source.shares == {}    # each edge went up once


def test_a_failing_gpu_releases_its_grid_row(monkeypatch):
    """A GPU whose upload fails aborts the row's meeting: its peers stop, and its error is raised."""
    from floydwarp.gpu import start
    from floydwarp.multigpu import blocks

    def upload(edges, n, dtype):
        if threading.current_thread().name.endswith("-1"):
            raise DeviceError("out of memory on GPU 1 (simulated)")
        return edges

    monkeypatch.setattr(start, "upload_edges", upload)
    monkeypatch.setattr(start, "matrix", lambda rows, pitch, dtype, inf, origin=(0, 0): np.zeros((rows, pitch)))
    monkeypatch.setitem(sys.modules, "cupy", SimpleNamespace(cuda=SimpleNamespace(
        get_current_stream=lambda: SimpleNamespace(synchronize=lambda: None))))
    g = graph(200, "pos")
    source = blocks.of_graph(g, np.dtype(np.int32), 0, shared_by=((1, 2), 30))
    part = BlockPartition(g.n, 64, 1, 2)
    t = time.perf_counter()
    with pytest.raises(DeviceError, match="simulated"):
        in_threads(lambda c: source.block(part, ProcessGrid(1, 2, c.rank), np.dtype(np.int32), 0), 2, 30,
                   on_failure=source.abort)
    assert time.perf_counter() - t < 10


# ---------------------------------------------------------------- on GPUs
def _gpus():
    try:
        import cupy

        return cupy.cuda.runtime.getDeviceCount()
    except Exception:  # noqa: BLE001 -- no CuPy, driver or device: no GPU
        return 0


GPUS = _gpus()
needs_two = pytest.mark.skipif(GPUS < 2, reason="needs two or more GPUs")


@functools.lru_cache(maxsize=None)
def graph(n, kind):
    pct = 30.0 if n < 100 else 6.0
    if kind == "pos":
        return erdos_renyi(n, pct, seed=100 + n)
    if kind == "neg":
        return erdos_renyi(n, pct, seed=200 + n, potential=20)
    if kind == "cycle":
        return erdos_renyi(n, pct, seed=300 + n, weights=(-5, 10))
    if kind == "neg-narrow":   # negative weights whose paths int16 provably holds
        return erdos_renyi(n, pct, seed=400 + n, potential=4)
    raise ValueError(kind)


@functools.lru_cache(maxsize=None)
def expected(n, kind):
    return fw.solve(graph(n, kind), backend="cpu", dtype="float64")


def check(r, n, kind):
    ref = expected(n, kind)
    assert r.has_negative_cycle == ref.has_negative_cycle
    np.testing.assert_array_equal(r.negative_cycle_vertices, ref.negative_cycle_vertices)
    got = np.asarray(r.to_dense(), dtype=np.float64)
    want = ref.to_dense()
    if ref.has_negative_cycle:
        nc = ref.negative_cycles
        keep = ~((nc.reach_to.T.astype(np.int64) @ nc.reach_from.astype(np.int64)) > 0)
        got, want = got[keep], want[keep]
    if r.dtype.kind == "f" and r.dtype.itemsize == 4:
        np.testing.assert_allclose(got, want, rtol=1e-5)
    else:
        np.testing.assert_array_equal(got, want)


CASES = [  # (n, kind, dtype, block_size): odd n, narrow last panels, several owners per GPU
    (301, "pos", "int32", 64),
    (333, "neg-narrow", "int16", 256),
    (257, "cycle", "int32", 64),
    (190, "neg", "float32", 128),
    (150, "pos", "float64", 64),
    (129, "neg", "int64", 64),
]


@pytest.mark.gpu
@pytest.mark.parametrize("n, kind, dtype, bs", CASES)
def test_one_gpu_worker_matches_cpu(n, kind, dtype, bs):
    r = fw.solve(graph(n, kind), backend="multigpu", gpus=1, dtype=dtype, block_size=bs)
    assert r.dtype == np.dtype(dtype) and r.metadata["grid"] == [1, 1]
    check(r, n, kind)


@pytest.mark.gpu
@pytest.mark.multigpu
@needs_two
@pytest.mark.parametrize("algorithm", ["gpu-2d", "gpu-rows", "rows-p2p"])
@pytest.mark.parametrize("n, kind, dtype, bs", CASES)
def test_two_gpus_match_cpu(algorithm, n, kind, dtype, bs):
    r = fw.solve(graph(n, kind), backend="multigpu", algorithm=algorithm, gpus=2, dtype=dtype,
                 block_size=bs if algorithm != "gpu-rows" else None)
    check(r, n, kind)


@pytest.mark.gpu
@pytest.mark.parametrize("shape", [(1, 1), (1, 2), (2, 1), (2, 2), (3, 2)])
@pytest.mark.parametrize("dtype", ["int16", "float64"])
def test_blocks_from_edges_equal_blocks_from_rows(shape, dtype):
    """Each process's block built on the device from the edge list is the start matrix's
    block (built here on one GPU for every grid position)."""
    from floydwarp.multigpu import blocks
    from floydwarp.grid import ProcessGrid
    from floydwarp.multigpu.partition import BlockPartition

    g = graph(333, "neg")
    dt = np.dtype(dtype)
    inf = numeric.inf_of(dt)
    part = BlockPartition(g.n, 64, *shape)
    start = g.to_matrix(dt, inf)
    for rank in range(shape[0] * shape[1]):
        grid = ProcessGrid(shape[0], shape[1], rank)
        got = blocks.EdgeBlocks(g.edges_of_rows(0, g.n), g.n).block(part, grid, dt, inf).get()
        r0, r1, c0, c1 = blocks.real_extent(part, grid)
        assert np.array_equal(got[:r1 - r0, :c1 - c0], start[r0:r1, c0:c1])
        rows, cols = np.indices(got.shape)
        padding = (rows + r0 >= g.n) | (cols + c0 >= g.n)
        assert np.all(got[padding] == np.where(rows + r0 == cols + c0, 0, inf)[padding])


@pytest.mark.gpu
@pytest.mark.multigpu
@needs_two
def test_a_dense_graph_and_the_same_graph_as_edges_agree():
    g = graph(301, "neg")
    first = fw.solve(g, backend="multigpu", gpus=2, dtype="int32", block_size=64)
    dense = fw.solve(fw.Graph.from_dense(g.to_matrix("float64", np.inf)), backend="multigpu", gpus=2,
                     dtype="int32", block_size=64)
    assert dense.metadata["launcher"].startswith("threads") and dense.metadata["peer_access"] in (True, False)
    np.testing.assert_array_equal(first.dist, dense.dist)
    check(dense, 301, "neg")


@pytest.mark.gpu
@pytest.mark.multigpu
@needs_two
@pytest.mark.parametrize("algorithm", ["gpu-2d", "rows-p2p"])
@pytest.mark.parametrize("n", [0, 1, 2])
def test_tiny_graphs(algorithm, n):
    g = fw.Graph.from_edges([0] if n == 2 else [], [1] if n == 2 else [], [-3] if n == 2 else [], n=n)
    r = fw.solve(g, backend="multigpu", algorithm=algorithm, gpus=2, dtype="int32")
    ref = fw.solve(g, backend="reference", dtype="int32")
    np.testing.assert_array_equal(r.to_dense(), ref.to_dense())


@pytest.mark.gpu
@pytest.mark.multigpu
@needs_two
def test_grid_shapes_and_lookahead_agree():
    g = graph(301, "neg")
    base = fw.solve(g, backend="multigpu", gpus=2, dtype="int32", block_size=64, grid=(2, 1), lookahead=False)
    check(base, 301, "neg")
    r = fw.solve(g, backend="multigpu", gpus=2, dtype="int32", block_size=64, grid=(1, 2))
    np.testing.assert_array_equal(r.dist, base.dist)
    assert r.metadata["grid"] == [1, 2] and r.metadata["gpus"] == 2


@pytest.mark.gpu
@pytest.mark.multigpu
@needs_two
def test_cli_gpus_checks():
    proc = subprocess.run([sys.executable, "-m", "floydwarp", "solve", "-g", "500", "-p", "5", "--gpus", "2",
                           "-c"], capture_output=True, text=True, timeout=300,
                          env=dict(os.environ, NCCL_NVLS_ENABLE="0"))
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "backend:   multigpu/gpu-2d" in proc.stdout and "check:     match" in proc.stdout
    assert "generate" in proc.stdout and "(on the GPU)" in proc.stdout        # --gpus draws the graph there


@pytest.mark.gpu
@pytest.mark.multigpu
@needs_two
@pytest.mark.parametrize("kind", ["neg", "cycle"])
def test_a_result_kept_on_gpu_0(kind):
    """output="device": the result stays on GPU 0 (each GPU's rows copied there), exact."""
    import cupy as cp

    g = graph(333, kind)
    host = fw.solve(g, backend="multigpu", gpus=2, dtype="int32", block_size=64)
    kept = fw.solve(g, backend="multigpu", gpus=2, dtype="int32", block_size=64, output="device")
    assert host.metadata["result"] == "host memory" and kept.metadata["result"] == "GPU 0"
    assert isinstance(kept.dist, cp.ndarray) and kept.dist.device.id == 0
    np.testing.assert_array_equal(cp.asnumpy(kept.dist), host.dist)
    assert kept.has_negative_cycle == host.has_negative_cycle
    check(host, 333, kind)


@pytest.mark.gpu
@pytest.mark.multigpu
@needs_two
def test_a_result_too_large_for_gpu_0_goes_to_the_host(monkeypatch):
    from floydwarp.gpu import device

    monkeypatch.setattr(device, "budget", lambda plan: 1 << 20)
    r = fw.solve(graph(301, "pos"), backend="multigpu", gpus=2, dtype="int32", block_size=64, output="device")
    assert isinstance(r.dist, np.ndarray) and r.metadata["result"].startswith("host memory: the result")
    check(r, 301, "pos")


@pytest.mark.gpu
@pytest.mark.multigpu
@needs_two
def test_cli_gpus_summary_and_npy_from_gpu_0(tmp_path):
    """--gpus 2 without -o keeps the result on GPU 0; -o x.npy is written from there, equal to
    one GPU's file of the same drawn graph."""
    run = functools.partial(subprocess.run, capture_output=True, text=True, timeout=300)
    base = [sys.executable, "-m", "floydwarp", "solve", "-g", "700", "-p", "3", "-s", "4", "--dtype", "int32"]
    proc = run(base + ["--gpus", "2"])
    assert proc.returncode == 0 and "backend:   multigpu/gpu-2d" in proc.stdout, proc.stderr[-2000:]
    for args, name in ((["--gpus", "2"], "two.npy"), (["--backend", "gpu"], "one.npy")):
        proc = run(base + args + ["-o", str(tmp_path / name)])
        assert proc.returncode == 0, proc.stderr[-2000:]
    np.testing.assert_array_equal(np.load(tmp_path / "two.npy"), np.load(tmp_path / "one.npy"))


@pytest.mark.gpu
@pytest.mark.multigpu
@needs_two
@pytest.mark.skipif(shutil.which("mpiexec") is None, reason="no mpiexec")
def test_cli_distributed_draws_on_each_ranks_gpu(tmp_path):
    """mpiexec -n 2 ... --distributed -a gpu-2d: each rank draws the graph on its own GPU; the
    summary run keeps the result on rank 0's GPU; -o x.npy equals one GPU's file of the graph."""
    pytest.importorskip("mpi4py")
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OMPI_MCA_rmaps_base_oversubscribe="1", NCCL_NVLS_ENABLE="0")
    run = functools.partial(subprocess.run, capture_output=True, text=True, timeout=300, env=env)
    base = ["solve", "-g", "700", "-p", "3", "-s", "4", "--dtype", "int32"]
    mpi = ["mpiexec", "-n", "2", sys.executable, "-m", "floydwarp", *base, "--distributed", "-a", "gpu-2d"]
    proc = run(mpi)
    assert proc.returncode == 0 and proc.stdout.count("backend:   mpi/gpu-2d") == 1, proc.stderr[-2000:]
    assert "generate" in proc.stdout and "(on the GPU)" in proc.stdout
    assert run(mpi + ["-o", str(tmp_path / "ranks.npy")]).returncode == 0
    proc = run([sys.executable, "-m", "floydwarp", *base, "--backend", "gpu", "-o", str(tmp_path / "one.npy")])
    assert proc.returncode == 0, proc.stderr[-2000:]
    np.testing.assert_array_equal(np.load(tmp_path / "ranks.npy"), np.load(tmp_path / "one.npy"))


@pytest.mark.gpu
@pytest.mark.multigpu
@needs_two
@pytest.mark.parametrize("grid", [(2, 1), (1, 2)])
def test_a_graph_drawn_on_one_gpu_reaches_every_gpu(grid):
    """Edges in GPU 0's memory (erdos_renyi(device=True)): each GPU copies them and keeps its
    block's; the same distances as the host's graph on the CPU."""
    from floydwarp.generate import erdos_renyi

    for n, potential in ((301, 0), (517, 6)):
        drawn = erdos_renyi(n, 4, seed=n, weights=(1, 9), potential=potential, device=True)
        host = erdos_renyi(n, 4, seed=n, weights=(1, 9), potential=potential)
        r = fw.solve(drawn, backend="multigpu", gpus=2, dtype="int32", block_size=64, grid=grid)
        np.testing.assert_array_equal(r.dist, fw.solve(host, backend="cpu", dtype="int32").dist)


@pytest.mark.gpu
@pytest.mark.multigpu
@needs_two
@pytest.mark.skipif(shutil.which("mpiexec") is None, reason="no mpiexec")
def test_mpi_gpu_algorithms_under_mpiexec(tmp_path):
    """mpi/gpu-2d and mpi/gpu-rows against the cpu backend, gathered and written rank by rank."""
    pytest.importorskip("mpi4py")
    script = Path(__file__).parent / "mpi_scripts" / "check_gpu.py"
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OMPI_MCA_rmaps_base_oversubscribe="1", NCCL_NVLS_ENABLE="0", PYTHONUNBUFFERED="1")
    proc = subprocess.run(["mpiexec", "-n", "2", sys.executable, str(script), str(tmp_path)], capture_output=True,
                          text=True, timeout=300, env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    import json

    # the JSON line (Open MPI adds terminal escapes around lines when its output is not a terminal)
    import re

    lines = [line for line in re.sub(r"\x1b\[[0-9;]*m", "", proc.stdout).splitlines() if line.startswith("{")]
    assert lines, f"no summary line; stdout: {proc.stdout[-2000:]!r} stderr: {proc.stderr[-2000:]!r}"
    summary = json.loads(lines[-1])
    assert summary["cases"] >= 16 and summary["failures"] == []


def test_refusals_before_any_collective(tmp_path):
    from floydwarp.multigpu.rank import check_plan

    dt = numeric.canonical_dtype("int32")
    base = dict(n=10, dtype=dt, inf=numeric.inf_of(dt), clamp=False, backend="multigpu", algorithm="gpu-2d")
    with pytest.raises(FloydwarpError, match="distances only"):
        check_plan(Plan(**base, predecessors=True))
    with pytest.raises(FloydwarpError, match="does not checkpoint"):
        check_plan(Plan(**base, options={"checkpoint": tmp_path}))
    check_plan(Plan(**base))


NO_GUARD = """
import numpy as np
import floydwarp as fw

g = fw.generate.erdos_renyi(700, 5, seed=3, potential=10)
r = fw.solve(g, backend="multigpu", gpus={gpus}, dtype="int32", block_size=128)
ref = fw.solve(g, backend="cpu", dtype="int32")
print("exact" if np.array_equal(r.dist, ref.dist) else "DIFFERENT")
"""


@pytest.mark.gpu
@pytest.mark.multigpu
@needs_two
def test_a_script_without_a_main_guard_runs_on_several_gpus(tmp_path):
    """A plain script calling solve(backend="multigpu") at module level (no __main__ guard): nothing
    is spawned that would re-import it."""
    script = tmp_path / "plain.py"
    script.write_text(NO_GUARD.format(gpus=min(GPUS, 4)))
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip() == "exact"


def test_the_run_says_why_its_grid_and_width_are_what_they_are():
    from floydwarp.multigpu.rank import GRID_REASON, WIDTH_REASON, choices

    dt = numeric.canonical_dtype("int32")
    base = dict(n=10, dtype=dt, inf=numeric.inf_of(dt), clamp=False, backend="multigpu", algorithm="gpu-2d")
    assert choices(Plan(**base), None) == {"grid_choice": GRID_REASON, "width_choice": WIDTH_REASON}
    asked = choices(Plan(**base, block_size=1024, options={"grid": (1, 4)}), None)
    assert asked == {"grid_choice": "asked for (grid=)", "width_choice": "asked for (block_size=)"}
    assert "P x 1" in choices(Plan(**base), (4, 1))["grid_choice"]
