"""A GPU matrix of one process opened by the other processes of its node, through CUDA IPC:
the mpi GPU algorithms' result on rank 0's GPU, which every rank fills with its rows over
NVLink (:class:`floydwarp.gpu.delivery.DeviceRows`), as the threads of ``--gpus N`` do."""
from __future__ import annotations

import contextlib
import functools


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


def allocation_of(ptr: int) -> tuple[int, int]:
    """``(base, size)`` of the device allocation that holds address ``ptr`` (CUDA IPC exports
    whole allocations, and an array from CuPy's pool may lie anywhere inside one)."""
    import ctypes

    from ..errors import DeviceError

    base, size = ctypes.c_uint64(), ctypes.c_size_t()
    status = _driver().cuMemGetAddressRange_v2(ctypes.byref(base), ctypes.byref(size), ctypes.c_uint64(ptr))
    if status != 0:
        raise DeviceError(f"cuMemGetAddressRange found no device allocation at {ptr:#x} (CUDA error {status})")
    return base.value, size.value


@functools.cache
def _driver():
    """The CUDA driver library (loaded by CuPy already: this only finds it)."""
    import ctypes

    return ctypes.CDLL("libcuda.so.1")
