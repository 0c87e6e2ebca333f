"""The ``gpu`` backend: CUDA C++ kernels compiled at run time through CuPy (NVRTC).

Importing this package never imports CuPy; :mod:`floydwarp.gpu.engine` registers the
backend and probes for CuPy and a device only when asked.
"""
