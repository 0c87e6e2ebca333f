"""The ``multigpu`` backend's launcher side and worker side: shared files for the graph and the
result, the workers started once per process and kept (:mod:`floydwarp.multigpu.launch`), and
each worker's run of :mod:`floydwarp.multigpu.rank` on its GPU.  :mod:`floydwarp.multigpu.engine`
describes the backend."""
from __future__ import annotations

import contextlib
import dataclasses
import functools
import os
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from ..plan import EngineOutput
from . import blocks, launch
from . import rank as rank_engine
from .control import Control
from .launch import DEFAULT_TIMEOUT, run_workers
from .partition import choose_grid


def shared_folder(nbytes: int, workdir=None) -> str:
    """Where a shared file goes: ``workdir``, else /dev/shm with room, else the temp folder."""
    if workdir is not None:
        return str(workdir)
    shm = "/dev/shm"
    try:
        st = os.statvfs(shm)
        if st.f_bavail * st.f_frsize > nbytes * 1.1:
            return shm
    except OSError:
        pass
    return tempfile.gettempdir()


class SharedMatrix:
    """The n x n matrix as a raw file mapped by the launcher and every worker, its rows on
    whole pages from the file's start (so that a worker can page-lock its rows for the DMA):
    the result, which every worker writes its block into (and, for a dense graph, the start
    matrix the workers read their blocks from first)."""

    def __init__(self, n: int, dtype, workdir=None):
        dtype = np.dtype(dtype)
        fd, self.path = tempfile.mkstemp(prefix="floydwarp-", suffix=".bin",
                                         dir=shared_folder(n * n * dtype.itemsize, workdir))
        os.close(fd)
        self.array = open_shared(self.path, n, dtype, create=True)

    def fill_from(self, graph, inf, band_bytes=blocks.BAND_BYTES):
        """The graph's start matrix written into the file, in place (Graph.write_matrix)."""
        graph.write_matrix(self.array, inf, band_bytes)

    def release(self):
        """Remove the file; the launcher's mapping (the result) stays valid."""
        _remove(self.path)


def open_shared(path: str, n: int, dtype, *, create: bool = False) -> np.ndarray:
    """The n x n matrix of the shared file ``path`` (made that size with ``create``)."""
    if n == 0:
        return np.zeros((0, 0), dtype)
    return np.memmap(path, dtype=dtype, mode="w+" if create else "r+", shape=(n, n))


class SharedEdges:
    """An edge list in one shared file, in the types it crosses the bus in (uint16 or int32
    ids, weights in the distance dtype; gpu/start.py), written by the launcher's threads:
    the workers map it and upload it as it is.  ``spec`` (small, picklable) finds it again."""

    def __init__(self, graph, dtype, workdir=None):
        from ..gpu import start

        src, dst, w = graph.edges()
        idx, dtype = start.index_dtype(graph.n), np.dtype(dtype)
        m = len(src)
        columns = [(src, idx), (dst, idx), (w, dtype)]
        offsets = np.cumsum([0] + [-(-m * t.itemsize // 64) * 64 for _, t in columns])
        fd, self.path = tempfile.mkstemp(prefix="floydwarp-edges-", dir=shared_folder(int(offsets[-1]), workdir))
        os.close(fd)
        self.spec = (self.path, graph.n, m, [(int(o), t.str) for o, (_, t) in zip(offsets, columns)])
        if m:
            mapped = np.memmap(self.path, mode="w+", dtype=np.uint8, shape=(int(offsets[-1]),))
            targets = [(host, mapped[o:o + m * t.itemsize].view(t)) for o, (host, t) in zip(offsets, columns)]
            step = max(1, BAND_EDGES)
            with ThreadPoolExecutor(min(os.cpu_count() or 1, 16)) as pool:
                for f in [pool.submit(np.copyto, out[a:a + step], host[a:a + step], casting="unsafe")
                          for host, out in targets for a in range(0, m, step)]:
                    f.result()
            del mapped

    @staticmethod
    def source(spec) -> blocks.EdgeBlocks:
        """A worker's view of the shared edges (read-only mappings of the file)."""
        path, n, m, columns = spec
        if not m:
            return blocks.EdgeBlocks(tuple(np.zeros(0, np.dtype(t)) for _, t in columns), n)
        return blocks.EdgeBlocks(tuple(np.memmap(path, mode="r", dtype=np.dtype(t), offset=o, shape=(m,))
                                       for o, t in columns), n)

    def release(self) -> threading.Thread:
        """Remove the file, in a thread of its own (returned): with no mapping left, the unlink
        frees the file's pages (50 ms for 54 M edges on the H100's host, outside every stage
        of the call); the interpreter waits for the thread at exit, so no file is left behind."""
        remover = threading.Thread(target=_remove, args=(self.path,), name="floydwarp-remove-edges")
        remover.start()
        return remover


def _remove(path: str) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


#: edges per copy task when the launcher writes the shared edge file
BAND_EDGES = 1 << 22


def start_worker(control: Control, rank: int):
    """A new worker's first job: CuPy and the engine imported, its GPU's context made (the
    launcher times this as "start"; later runs of the process find the worker ready)."""
    import cupy as cp

    cp.cuda.Device(rank).use()
    cp.cuda.Device(rank).synchronize()


def worker_run(control: Control, rank: int, plan, result_path: str, edges_spec, width: int, grid_shape):
    """One worker: its block built on GPU ``rank`` (from the shared edges, or from the rows
    of a dense start matrix in the result file), the rounds, its part of the result into the
    file -- by DMA into its rows of the file, which threads page-lock while the rounds run
    (not before: their driver calls would hold up the block's construction), each band of
    rows as soon as the last round finishes it (gpu/delivery.py).  Returns timings and facts
    (small)."""
    import cupy as cp

    from ..gpu import delivery, device, transfer

    cp.cuda.Device(rank).use()
    matrix = open_shared(result_path, plan.n, plan.dtype)
    deliveries = []

    def deliver_rows(part, grid, engine):
        r0, r1, c0, c1 = blocks.real_extent(part, grid)
        host = transfer.HostMatrix.over(matrix, (r0, max(r0, r1)))
        deliveries.append(delivery.Rows(host, engine.L, max(0, r1 - r0), max(0, c1 - c0), at=(r0, c0),
                                        stream=engine.main))
        return deliveries[-1]

    if edges_spec is not None:
        source = SharedEdges.source(edges_spec)
    else:
        source = blocks.RowBlocks(lambda lo, hi, c0, c1: matrix[lo:hi, c0:c1])
    try:
        L, part, grid, timings, meta = rank_engine.run_rank(control, plan, source, rank, width=width,
                                                           grid_shape=grid_shape, on_rounds=deliver_rows)
        t = time.perf_counter()
        rows = deliveries[0]
        rows.finish()
    except BaseException:
        for started in deliveries:
            with contextlib.suppress(Exception):      # the error that stopped the run is the one to see
                started.wait()
        raise
    del L
    r0, c0 = rows.at
    landed = matrix[r0:r0 + rows.rows, c0:c0 + rows.cols]
    # read where it landed: a read of the GPU's copy would queue behind the block's last copies
    negative = rank_engine.negative_anywhere(control, landed, part, grid)
    meta["dma_share"] = rows.host.locked_share()
    meta["gather_overlapped"] = rows.share()
    timings["gather"] = control.allreduce(time.perf_counter() - t, "max")
    meta["device"] = device.current()["name"]
    launch.after_reply(functools.partial(_release, [rows.host], rank))
    return {"timings": timings, "negative": negative, "metadata": meta}


def _release(hosts, device_id: int) -> None:
    """After a worker's reply: unlock the result's pages (~20 ms a GB, holding the driver's
    lock), then hand the GPU memory back to the device -- a worker waits for the next run
    holding none."""
    import cupy as cp

    for host in hosts:
        host.release()
    with cp.cuda.Device(device_id):
        cp.get_default_memory_pool().free_all_blocks()


def run_multigpu(graph, plan, width: int, grid_shape=None) -> EngineOutput:
    """The launcher's side: the shared files (an edge list, or a dense start matrix), the
    workers (started by the first run of this process, reused by later ones), the result."""
    rank_engine.check_plan(plan)
    gpus = rank_engine.gpu_count(plan)
    if grid_shape is None:
        grid_shape = plan.options.get("grid")
    choose_grid(gpus, grid_shape)                  # refuse a bad grid before starting anything
    workdir = plan.options.get("workdir")
    timeout = float(plan.options.get("timeout", DEFAULT_TIMEOUT))
    timings = {}
    if not launch.started(gpus):
        t0 = time.perf_counter()
        run_workers(start_worker, (), gpus, timeout=timeout)
        timings["start"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    shared = SharedMatrix(plan.n, plan.dtype, workdir)
    edges = None
    try:
        if graph.is_dense:
            shared.fill_from(graph, plan.inf)
        else:
            edges = SharedEdges(graph, plan.dtype, workdir)
        timings["share"] = time.perf_counter() - t0
        worker_plan = dataclasses.replace(plan, progress=None)
        t1 = time.perf_counter()
        results = run_workers(worker_run, (worker_plan, shared.path, edges and edges.spec, width, grid_shape), gpus,
                              timeout=timeout)
        workers = time.perf_counter() - t1
    finally:
        shared.release()
        if edges is not None:
            edges.release()
    first = results[0]
    timings.update(first["timings"])
    # the job's time outside the workers' stages: its messages, the workers' waits and mappings
    timings["dispatch"] = max(0.0, workers - sum(first["timings"].get(k, 0.0) for k in ("setup", "compute", "gather")))
    meta = dict(first["metadata"], gpus=gpus, launcher="floydwarp (spawned workers, kept for later runs)")
    return EngineOutput(shared.array, None, timings, negative_diagonal=first["negative"], pred_loops=False,
                        metadata=meta)
