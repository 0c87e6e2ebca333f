"""Seconds of each NVRTC compile CuPy runs in this process (its own kernels and floydwarp's).

CuPy has no public hook for this: the probes wrap its private compile function (CuPy 13-14), which
is fine for a measurement and never done by floydwarp itself.
"""
import time

from cupy.cuda import compiler

#: seconds of every NVRTC compile since :func:`install`, in order
COMPILES: list[float] = []


def install() -> list[float]:
    original = compiler._compile_using_nvrtc_no_warning

    def timed(*args, **kwargs):
        t = time.perf_counter()
        try:
            return original(*args, **kwargs)
        finally:
            COMPILES.append(time.perf_counter() - t)

    compiler._compile_using_nvrtc_no_warning = timed
    return COMPILES
