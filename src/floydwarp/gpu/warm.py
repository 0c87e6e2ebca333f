"""The GPU's start in a thread of its own, for a process that knows it will solve there (the
CLI's ``--backend gpu``, ``--gpus N``, and each rank of ``--distributed -a gpu-2d`` on its own
GPU): CuPy's import, the CUDA contexts and the kernel modules it names."""
from __future__ import annotations

import threading
import time


class Start:
    """CuPy's import, the CUDA contexts of GPUs ``first .. first + gpus - 1`` and the kernel
    modules ``modules`` (``(file, names)`` pairs, from the kernel cache or NVRTC, on GPU
    ``first``) got ready in a thread of its own while the caller goes on (reads its input,
    parses options): the context's creation and NVRTC run without the GIL.  Whatever fails
    here is left for the run to meet and report; :meth:`wait` says how long the caller waited."""

    def __init__(self, modules=(), gpus: int = 1, backend: str = "gpu", first: int = 0):
        self.modules, self.gpus, self.backend, self.first = tuple(modules), int(gpus), backend, int(first)
        self.seconds = 0.0
        self._thread = threading.Thread(target=self._run, name="floydwarp-gpu-start", daemon=True)
        self._thread.start()

    def _run(self):
        t0 = time.perf_counter()
        try:
            import importlib

            import cupy

            from . import modules
            from ..registry import BACKEND_MODULES

            importlib.import_module(BACKEND_MODULES[self.backend])       # the backend registers itself
            for gpu in range(self.first, self.first + self.gpus):
                with cupy.cuda.Device(gpu):
                    cupy.cuda.runtime.deviceSynchronize()      # makes the device's context, without the GIL
            with cupy.cuda.Device(self.first):
                for filename, names in self.modules:
                    for name in names:
                        modules.kernel(filename, name, names)
        except Exception:                              # noqa: BLE001 - see the docstring
            pass
        self.seconds = time.perf_counter() - t0

    def wait(self) -> float:
        """Wait for the thread; the seconds waited."""
        t0 = time.perf_counter()
        self._thread.join()
        return time.perf_counter() - t0
