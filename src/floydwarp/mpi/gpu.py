"""The ``mpi`` backend's GPU algorithms, ``gpu-2d`` and ``gpu-rows``: the multi-GPU engine of
:mod:`floydwarp.multigpu.rank` under ``mpiexec``, one GPU per rank (:class:`MpiControl` as its
control plane; CUDA IPC copies between the GPUs of one node, NCCL across nodes:
:mod:`floydwarp.mpi.links`).  The result: on rank 0's GPU where the caller wants it
on a GPU and every rank runs on one node (each rank's rows copied in over NVLink, through CUDA
IPC), else in the node's shared memory, else gathered to rank 0, or written rank by rank into
``output_file``."""
from __future__ import annotations

import contextlib
import dataclasses
import time

import numpy as np

from ..errors import FloydwarpError
from ..multigpu import blocks
from ..multigpu import rank as gpu_rank
from ..multigpu.control import MpiControl
from ..multigpu.partition import choose_grid
from ..multigpu.result import result_on_gpu
from ..options import GRID
from ..plan import EngineOutput
from ..registry import register
from . import GPU_ALGORITHMS, comm as mpi_util, ipc, output, shared
from .links import OPTIONS as LINKS, links_for


def device_for_rank(comm) -> int:
    """Each rank on a node drives its own GPU (NCCL refuses two ranks on one GPU): the one of its
    local rank (:func:`floydwarp.mpi.comm.local_rank`), the GPU whose context the launcher started
    (:mod:`floydwarp.launch`)."""
    import cupy as cp

    local, per_node = mpi_util.local_rank(comm), mpi_util.ranks_on_this_node(comm)
    count = cp.cuda.runtime.getDeviceCount()
    if per_node > count:
        raise FloydwarpError(f"{per_node} MPI ranks on this node but {count} GPU(s): the mpi GPU algorithms "
                             f"run one rank per GPU (mpiexec -n {count}, or use the CPU algorithms)")
    return local


def run_mpi_gpu(graph, plan, width, rows_grid=None):
    """The mpi backend's GPU run: the result in the node's shared memory when every rank runs on
    one node, else gathered to rank 0 when it fits there, else written rank by rank into
    ``output_file`` (:mod:`floydwarp.mpi.output`, as the CPU algorithms do).  ``rows_grid``:
    the grid ``gpu-rows`` imposes (else ``grid=`` or the default).  The panels move by the
    links of :func:`floydwarp.mpi.links.links_for`."""
    comm = mpi_util.world()
    grid_shape = rows_grid or plan.options.get("grid")
    with mpi_util.abort_on_error(comm):
        gpu_rank.check_plan(plan)
        control = MpiControl(comm)
        device = device_for_rank(comm)
    target = output.choose_target(comm, plan)          # before any work: refused alike on every rank
    one_node = shared.on_one_node(comm)
    with links_for(comm, plan, device, one_node) as links:
        run = Run(comm, control, graph, device, width, grid_shape, rows_grid, links)
        if target is not None:
            return run.into_file(plan, target)
        if one_node:
            return run.on_this_node(plan)
        return run.gathered(plan)


@dataclasses.dataclass
class Run:
    """One mpi GPU run's parts, for the places its result can go."""

    comm: object
    control: MpiControl
    graph: object
    device: int
    width: int
    grid_shape: tuple | None
    rows_grid: tuple | None
    links: object

    def rounds(self, plan):
        """:func:`floydwarp.multigpu.rank.run_rank` of this rank, its block left on its GPU."""
        return gpu_rank.run_rank(self.control, plan, blocks.of_graph(self.graph, plan.dtype, plan.inf), self.device,
                                 width=self.width, grid_shape=self.grid_shape, links=self.links)

    def delivered(self, plan, deliver_into):
        """:func:`floydwarp.multigpu.rank.run_delivered` of this rank."""
        return gpu_rank.run_delivered(self.control, plan, blocks.of_graph(self.graph, plan.dtype, plan.inf),
                                      self.device, width=self.width, grid_shape=self.grid_shape,
                                      deliver_into=deliver_into, links=self.links)

    def described(self, meta: dict, plan, **more) -> dict:
        meta.update(links=self.links.name, **gpu_rank.choices(plan, self.rows_grid), **more)
        return meta

    def into_file(self, plan, target) -> EngineOutput:
        """Every rank writes its rows into ``output_file`` (:func:`floydwarp.mpi.output.finish_in_file`)."""
        comm = self.comm
        meta = self.described({"processes": comm.Get_size(), "panel_width": self.width,
                               "grid": list(choose_grid(comm.Get_size(), self.grid_shape))}, plan)

        def compute(p):
            with mpi_util.abort_on_error(comm):
                L, part, grid, timings, _ = self.rounds(p)
                parts = [output.Part(lo, lo + band.shape[0], c0, c0 + band.shape[1], band)
                         for lo, c0, band in blocks.download_bands(L, part, grid)]
                return parts, timings

        return output.finish_in_file(comm, self.graph, plan, target, compute, k_order=False, metadata=meta)

    def gathered(self, plan) -> EngineOutput:
        """Ranks on several nodes: the result gathered to rank 0 through MPI."""
        with mpi_util.abort_on_error(self.comm):
            L, part, grid, timings, meta = self.rounds(plan)
            negative = gpu_rank.negative_anywhere(self.control, L, part, grid)
            t = time.perf_counter()
            dist = gather_to_root(self.comm, L, part, grid, plan.dtype)
            timings["gather"] = time.perf_counter() - t
            return EngineOutput(dist, None, timings, negative_diagonal=negative, pred_loops=False,
                                uncapped=output.uncapped_everywhere(self.comm, dist, plan),
                                metadata=self.described(meta, plan))

    def on_this_node(self, plan) -> EngineOutput:
        """Every rank on this node: the result on rank 0's GPU where the caller wants it on a GPU
        (``output="device"``, as the CLI's summary-only runs do) and it fits there; else in the
        node's shared memory."""
        comm, dtype = self.comm, np.dtype(plan.dtype)
        matrix, handle, where = None, None, None
        if comm.Get_rank() == 0:
            with mpi_util.abort_on_error(comm):
                matrix, where = result_on_gpu(plan, self.width, choose_grid(comm.Get_size(), self.grid_shape), dtype,
                                              self.device, exported=True, otherwise="node shared memory")
                handle = None if matrix is None else ipc.handle_of(matrix)
        handle, where = comm.bcast((handle, where), root=0)
        if handle is None:
            return self.into_node_memory(plan, where)
        from ..gpu import delivery

        with mpi_util.abort_on_error(comm), contextlib.ExitStack() as opened:
            target = matrix if comm.Get_rank() == 0 else opened.enter_context(ipc.opened(handle, (plan.n,) * 2,
                                                                                         dtype))

            def into_matrix(L, extent, stream):
                r0, r1, c0, c1 = extent
                return delivery.DeviceRows(target, L, r1 - r0, c1 - c0, at=(r0, c0), stream=stream)

            # run_delivered ends in collectives: every rank's rows are in before any rank closes the matrix
            result, timings, negative, uncapped, meta = self.delivered(plan, into_matrix)
        return EngineOutput(result if comm.Get_rank() == 0 else None, None, timings, negative_diagonal=negative,
                            pred_loops=False, uncapped=uncapped,
                            metadata=self.described(meta, plan, result=f"{where} of rank 0"))

    def into_node_memory(self, plan, where) -> EngineOutput:
        """Every rank on this node: each copies its block into the node's shared result by DMA.
        ``where``: the result's place as the metadata says it (and why it is not on a GPU)."""
        from ..gpu import delivery
        from ..gpu.transfer import HostMatrix

        comm = self.comm
        with mpi_util.abort_on_error(comm):
            result = shared.NodeResult(comm, plan.n, plan.dtype, plan.options.get("workdir"))
            hosts = []

            def into_result(L, extent, stream):
                r0, r1, c0, c1 = extent
                hosts.append(HostMatrix.over(result.array, (r0, r1)))
                return delivery.Rows(hosts[-1], L, r1 - r0, c1 - c0, at=(r0, c0), stream=stream)

            try:
                _, timings, negative, uncapped, meta = self.delivered(plan, into_result)
            except BaseException:
                result.discard()
                raise
            if comm.Get_rank() != 0:
                for host in hosts:
                    host.release()                # unlocked before this rank's mapping goes
            return EngineOutput(result.finish(), None, timings, negative_diagonal=negative, pred_loops=False,
                                uncapped=uncapped, metadata=self.described(meta, plan, result=where))


def gather_to_root(comm, L, part, grid, dtype, root=0):
    """The n x n result on ``root`` (host memory), each block sent in bands (host buffers only).
    ``output.choose_target`` decided beforehand that it fits."""
    n = part.n
    if comm.Get_rank() != root:
        for lo, c0, band in blocks.download_bands(L, part, grid):
            comm.send((lo, c0, band.shape), dest=root, tag=11)
            comm.Send(band, dest=root, tag=12)
        comm.send(None, dest=root, tag=11)
        return None
    full = np.empty((n, n), dtype)
    for lo, c0, band in blocks.download_bands(L, part, grid):
        full[lo:lo + band.shape[0], c0:c0 + band.shape[1]] = band
    for rank in range(comm.Get_size()):
        if rank == root:
            continue
        while (head := comm.recv(source=rank, tag=11)) is not None:
            lo, c0, shape = head
            band = np.empty(shape, dtype)
            comm.Recv(band, source=rank, tag=12)
            full[lo:lo + shape[0], c0:c0 + shape[1]] = band
    return full


@register("mpi", GPU_ALGORITHMS[0], predecessors=False, dtypes=gpu_rank.GPU_DTYPES,
          options={**gpu_rank.OPTIONS, **GRID, **LINKS})
def gpu_2d(graph, plan) -> EngineOutput:
    """One GPU per rank: 2D blocks, wide panels broadcast between the GPUs, lookahead (distances only)."""
    return run_mpi_gpu(graph, plan, gpu_rank.width_of(plan))


@register("mpi", GPU_ALGORITHMS[1], predecessors=False, dtypes=gpu_rank.GPU_DTYPES,
          options={**gpu_rank.OPTIONS, **LINKS})
def gpu_rows(graph, plan) -> EngineOutput:
    """Seed 002's 1D rows on one GPU per rank: each 64-row panel broadcast between the GPUs (distances only)."""
    return run_mpi_gpu(graph, plan, gpu_rank.width_of(plan, gpu_rank.ROWS_WIDTH), (mpi_util.world().Get_size(), 1))
