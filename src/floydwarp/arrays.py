"""Host/device array helpers: code written once for NumPy and CuPy arrays."""
from __future__ import annotations

import numpy as np


def array_module(a):
    """``numpy`` for host arrays, ``cupy`` for device arrays (cupy imported only then)."""
    if type(a).__module__.startswith("cupy"):
        import cupy
        return cupy
    return np


def is_device_array(a) -> bool:
    return type(a).__module__.startswith("cupy")


def to_host(a):
    """A NumPy array for a NumPy or CuPy array (a large one comes through pinned staging
    buffers, several chunks in flight: gpu/transfer.py)."""
    if not is_device_array(a):
        return a
    from .gpu.transfer import to_host as download

    return download(a)
