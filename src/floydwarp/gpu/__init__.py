"""The ``gpu`` backend: CUDA C++ kernels compiled at run time through CuPy (NVRTC).

Importing this package never imports CuPy; :mod:`floydwarp.gpu.engine` registers the
backend and probes for CuPy and a device only when asked.  Importing it gives the base layer
its device helpers (``arrays.DEVICE_HELPERS``): pinned-staging downloads into host memory or a
file, and the dtype check on the device.
"""
from ..arrays import DEVICE_HELPERS
from . import checks, staging, transfer

DEVICE_HELPERS.update(to_host=transfer.to_host, to_file=staging.to_file, any_in_range=checks.any_in_range)
