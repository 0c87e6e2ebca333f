"""Arrays from other libraries (PyTorch, JAX, CuPy, ...) through the DLPack protocol.

:func:`maybe_from_dlpack` turns any object exposing ``__dlpack__`` into an array
floydwarp works with, without a copy where the protocol allows:

* host (CPU) tensors -> ``np.from_dlpack``: a NumPy view of the same memory;
* CUDA tensors -> ``cupy.from_dlpack``: a CuPy view on the same device (needs CuPy);
* NumPy and CuPy arrays, masked arrays and everything else pass through unchanged.

A PyTorch tensor that requires grad is detached first (DLPack refuses to export it).

>>> import numpy as np
>>> from floydwarp.dlpack import maybe_from_dlpack
>>> a = np.zeros((2, 2))
>>> maybe_from_dlpack(a) is a
True
"""
from __future__ import annotations

import numpy as np

from .errors import BackendUnavailableError, FloydwarpError

# DLDeviceType codes (dlpack.h)
KDL_CPU = 1
KDL_CUDA = 2
KDL_CUDA_HOST = 3
KDL_CUDA_MANAGED = 13
_HOST = {KDL_CPU, KDL_CUDA_HOST}
_CUDA = {KDL_CUDA, KDL_CUDA_MANAGED}
_NAMES = {1: "CPU", 2: "CUDA", 3: "CUDA host", 4: "OpenCL", 7: "Vulkan", 8: "Metal", 9: "VPI", 10: "ROCm",
          11: "ROCm host", 13: "CUDA managed", 14: "oneAPI"}


def is_foreign_tensor(obj) -> bool:
    """True for an object that speaks DLPack and is not already a NumPy or CuPy array."""
    if not hasattr(obj, "__dlpack__"):
        return False
    if isinstance(obj, np.ndarray):            # includes masked arrays and memmaps
        return False
    module = type(obj).__module__ or ""
    return not module.startswith(("numpy", "cupy"))


def device_of(obj) -> tuple[int, int]:
    """``(device_type, device_id)`` of a DLPack object (CPU when it does not say)."""
    probe = getattr(obj, "__dlpack_device__", None)
    if probe is None:
        return KDL_CPU, 0
    kind, index = probe()
    return int(kind), int(index)


def from_dlpack(obj):
    """A NumPy (host) or CuPy (CUDA) array sharing the tensor's memory."""
    kind, index = device_of(obj)
    obj = _exportable(obj)
    if kind in _HOST:
        try:
            return np.from_dlpack(obj)
        except (TypeError, BufferError, RuntimeError, ValueError) as exc:
            raise FloydwarpError(f"cannot read a {type(obj).__name__} through DLPack: {exc}") from exc
    if kind in _CUDA:
        try:
            import cupy
        except ImportError:
            raise BackendUnavailableError(
                f"a {type(obj).__name__} on CUDA device {index} needs CuPy to be read without a copy; "
                "install floydwarp[gpu] or move the tensor to the CPU first") from None
        with cupy.cuda.Device(index):
            return cupy.from_dlpack(obj)
    raise FloydwarpError(
        f"a {type(obj).__name__} on a {_NAMES.get(kind, f'type-{kind}')} device cannot be read; "
        "floydwarp takes CPU and CUDA arrays")


def maybe_from_dlpack(obj):
    """``from_dlpack(obj)`` for foreign tensors, else ``obj`` unchanged (the hook in ``as_graph``)."""
    return from_dlpack(obj) if is_foreign_tensor(obj) else obj


def _exportable(obj):
    """PyTorch refuses to export tensors that require grad: detach those."""
    if getattr(obj, "requires_grad", False) and hasattr(obj, "detach"):
        return obj.detach()
    return obj
