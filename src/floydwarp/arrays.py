"""Host/device array helpers: code written once for NumPy and CuPy arrays.

The base layer imports no engine package.  What a device array needs from the gpu package
(downloads through pinned staging buffers into memory or a file, whole-matrix checks by a
kernel) is in
:data:`DEVICE_HELPERS`, which the package fills when it is imported (gpu/__init__.py); the
first device array that needs one imports it, by name, as the registry imports a backend.
"""
from __future__ import annotations

import importlib
from typing import Callable

import numpy as np

#: name -> the gpu package's function: ``to_host(a)``, ``to_file(a, fd, offset)``,
#: ``any_in_range(a, lo, hi)``
DEVICE_HELPERS: dict[str, Callable] = {}
#: the package that fills DEVICE_HELPERS when imported
DEVICE_PACKAGE = "floydwarp.gpu"


def device_helper(name: str) -> Callable:
    """The device helper ``name``, importing the gpu package the first time one is needed."""
    helper = DEVICE_HELPERS.get(name)
    if helper is None:
        importlib.import_module(DEVICE_PACKAGE)
        helper = DEVICE_HELPERS[name]
    return helper


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
    return device_helper("to_host")(a)
