"""Arrays in and out of the graph-learning drop-ins: NumPy, CuPy, or PyTorch tensors (read in
place through DLPack), and results handed back as the caller's kind on the caller's device."""
from __future__ import annotations

import numpy as np

from ..arrays import is_device_array, to_host
from ..dlpack import maybe_from_dlpack


def is_torch(obj) -> bool:
    """True for a PyTorch tensor (without importing torch)."""
    return type(obj).__module__.startswith("torch")


def array_of(obj):
    """A NumPy or CuPy view of ``obj`` (a PyTorch tensor on its device through DLPack), or
    ``obj`` itself (None included)."""
    if obj is None:
        return None
    return maybe_from_dlpack(obj)


def host(obj) -> np.ndarray:
    """``obj`` as a host NumPy array."""
    return np.asarray(to_host(array_of(obj)))


def handed_back(array, torch_out: bool):
    """``array`` (NumPy or CuPy) as a PyTorch tensor on the same device when ``torch_out``,
    without a copy; else as it is."""
    if not torch_out:
        return array
    import torch

    if is_device_array(array):
        return torch.from_dlpack(array)
    return torch.from_numpy(np.ascontiguousarray(array))
