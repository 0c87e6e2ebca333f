"""Seconds of each NVRTC compile CuPy runs in this process (its own kernels and floydwarp's).

CuPy has no public hook for this: the probes wrap its private compile function (CuPy 13-14), which
is fine for a measurement and never done by floydwarp itself.
"""
import re
import time

from cupy.cuda import compiler

#: seconds of every NVRTC compile since :func:`install`, in order
COMPILES: list[float] = []
#: the first kernel each of those compiles defines (CuPy's names its dtypes: ``cupy_copy__int16_int16``)
NAMES: list[str] = []
_KERNEL = re.compile(r"__global__\s+(?:void\s+)?(?:__launch_bounds__\([^)]*\)\s*)?(?:void\s+)?(\w+)")


def install() -> list[float]:
    original = compiler._compile_using_nvrtc_no_warning

    def timed(*args, **kwargs):
        t = time.perf_counter()
        try:
            return original(*args, **kwargs)
        finally:
            COMPILES.append(time.perf_counter() - t)
            found = _KERNEL.search(args[0]) if args and isinstance(args[0], str) else None
            NAMES.append(found.group(1) if found else "?")

    compiler._compile_using_nvrtc_no_warning = timed
    return COMPILES
