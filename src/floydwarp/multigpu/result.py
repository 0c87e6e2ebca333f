"""Where a multi-GPU run's n x n result goes when the caller wants it on a GPU: one matrix on
the first GPU, which every GPU fills with its rows over NVLink as the last round finishes them
(:class:`floydwarp.gpu.delivery.DeviceRows`), in threads of one process or, opened by CUDA IPC,
in the MPI ranks of one node."""
from __future__ import annotations

from .partition import BlockPartition


def result_on_gpu(plan, width: int, shape, dtype, device: int = 0, exported: bool = False,
                  otherwise: str = "host memory"):
    """``(matrix, where)``: the n x n result's matrix on GPU ``device``, where the caller wants
    the result on a GPU (``output="device"``, or an ``.npy`` file it is bound for:
    ``gpu.incore.wants_device``) and it fits there beside that GPU's block; else ``(None, where
    it goes instead)``: ``otherwise``, and why where a GPU was wanted.  ``exported``: the
    matrix is an allocation of its own, at offset 0, that other processes open by CUDA IPC
    (:mod:`floydwarp.mpi.ipc`); else it comes from CuPy's pool.  Milliseconds, where a host
    result of n = 32768 took 0.3-0.8 s to lock and fill."""
    import cupy as cp

    from ..gpu import device as devices
    from ..gpu import incore
    from ..gpu.layout import format_bytes

    if not incore.wants_device(plan, False):
        return None, otherwise
    n = plan.n
    need = n * n * dtype.itemsize
    part = BlockPartition(n, width, *shape)
    rows, cols = part.row_extent(0)[1], part.col_extent(0)[1]
    # the first GPU's own block, its panels' buffers (a row and a column panel, twice for the
    # lookahead) and a margin
    block = (rows * cols + 4 * (rows + cols) * width) * dtype.itemsize + (256 << 20)
    with cp.cuda.Device(device):
        free = devices.budget(plan)
        if need + block > free:
            return None, (f"{otherwise}: the result ({format_bytes(need)}) does not fit on GPU {device} beside "
                          f"its block ({format_bytes(free)} free)")
        if exported:
            memory = cp.cuda.MemoryPointer(cp.cuda.Memory(max(need, 1)), 0)
            return cp.ndarray((n, n), dtype, memory), f"GPU {device}"
        return cp.empty((n, n), dtype), f"GPU {device}"
