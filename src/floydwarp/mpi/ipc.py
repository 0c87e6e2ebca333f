"""A GPU matrix of one process opened by the other processes of its node, through CUDA IPC:
the mpi GPU algorithms' result on rank 0's GPU, which every rank fills with its rows over
NVLink (:class:`floydwarp.gpu.delivery.DeviceRows`), as the threads of ``--gpus N`` do."""
from __future__ import annotations

import contextlib


def handle_of(matrix) -> bytes:
    """The IPC handle of ``matrix``, an allocation of its own at offset 0 (CUDA IPC opens the
    whole allocation, so a matrix from CuPy's pool would land at an unknown offset)."""
    from cupy.cuda import runtime

    return bytes(runtime.ipcGetMemHandle(matrix.data.ptr))


@contextlib.contextmanager
def opened(handle: bytes, shape, dtype):
    """The matrix another process of this node exported as ``handle``, as a CuPy array of this
    process for as long as the block runs; closed after."""
    import cupy as cp
    import numpy as np
    from cupy.cuda import runtime

    dtype = np.dtype(dtype)
    nbytes = int(np.prod(shape)) * dtype.itemsize
    ptr = runtime.ipcOpenMemHandle(handle)
    try:
        yield cp.ndarray(shape, dtype, cp.cuda.MemoryPointer(cp.cuda.UnownedMemory(ptr, max(nbytes, 1), None), 0))
    finally:
        runtime.ipcCloseMemHandle(ptr)
