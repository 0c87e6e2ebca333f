"""Run-time compilation of the CUDA C++ kernels in ``gpu/kernels`` through CuPy (NVRTC).

A module is one ``.cu`` file compiled for a group of template instances (say, every
blocked kernel for int32 and 64 x 64 tiles).  ``#include "x.cuh"`` lines are inlined
here, so NVRTC needs no include path and a cache key of the source text covers the
headers too.  Compiled modules are cached per process and, across processes, in
floydwarp's kernel cache (kcache.py): a new process loads a module's cubin from there
without starting NVRTC, where CuPy's own disk cache compiles an empty program first in
every process to key its entries (its NVRTC's "internal version").

CuPy is imported only when a module is first needed.
"""
from __future__ import annotations

import functools
import re
import threading
import time
from pathlib import Path

import numpy as np

KERNEL_DIR = Path(__file__).resolve().parent / "kernels"

#: C++ type of each distance dtype in the kernels (uint8: hop counts, of gpu/bfs and batches).
CTYPES = {
    "uint8": "unsigned char",
    "int16": "short",
    "int32": "int",
    "int64": "long long",
    "float32": "float",
    "float64": "double",
}

#: NVRTC options (CuPy adds -arch for the current device); the NVRTC of CUDA 12 and 13
#: both accept them.
OPTIONS = ("-std=c++17",)

_INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]+"([^"]+)"[ \t]*$', re.MULTILINE)


def ctype(dtype) -> str:
    """The kernels' C++ type for a distance dtype."""
    name = np.dtype(dtype).name
    try:
        return CTYPES[name]
    except KeyError:
        raise ValueError(f"no GPU kernel type for dtype {name}") from None


def template_arg(value) -> str:
    if isinstance(value, (bool, np.bool_)):
        return "true" if value else "false"
    if isinstance(value, (np.dtype, type)) or (isinstance(value, str) and value in CTYPES):
        return ctype(value)
    return str(value)


def name_expression(kernel: str, *targs) -> str:
    """``fw_blocked_p3<int, 64, true, false>`` from a kernel name and template arguments
    (dtypes become their C++ type, bools ``true``/``false``)."""
    if not targs:
        return kernel
    return f"{kernel}<{', '.join(template_arg(a) for a in targs)}>"


@functools.lru_cache(maxsize=None)
def source(filename: str) -> str:
    """The text of ``kernels/<filename>`` with its local includes inlined (once each)."""
    seen: set[str] = set()

    def expand(name: str) -> str:
        path = KERNEL_DIR / name
        if not path.is_file():
            raise FileNotFoundError(f"GPU kernel source {path} is missing (is the package installed with its data?)")
        text = path.read_text()

        def repl(m):
            inc = m.group(1)
            if inc in seen:
                return f"// {inc} already included"
            seen.add(inc)
            return f"// ---- begin {inc}\n{expand(inc)}\n// ---- end {inc}"

        return _INCLUDE.sub(repl, text)

    return expand(filename)


#: ``(filename, name_expressions, cooperative)`` of every module this process got, in order
#: (tools/build_kernels.py ships those of its runs)
LOADED: list = []


@functools.lru_cache(maxsize=None)
def module(filename: str, name_expressions: tuple, cooperative: bool = False):
    """The compiled module of a .cu file and a group of template instances: something whose
    ``get_function(name_expression)`` gives a ``cupy.RawKernel``."""
    LOADED.append((filename, name_expressions, cooperative))
    if not cooperative:
        from . import kcache

        found = kcache.load(source(filename), OPTIONS, name_expressions)
        if found is not None:
            return found
    import cupy

    # cooperative launches (their modules link CUDA's device runtime), or no cache to be had
    return cupy.RawModule(code=source(filename), options=OPTIONS, name_expressions=list(name_expressions),
                          enable_cooperative_groups=cooperative)


_KERNELS: dict = {}
_COMPILE_CLOCK = threading.local()


def compile_seconds() -> float:
    """Seconds this thread has spent getting kernels it had not used before (NVRTC, or
    CuPy's disk cache, and the module load): a clock that only goes forward.  An engine
    subtracts what passed during a stage from that stage and reports it as "compile"."""
    return getattr(_COMPILE_CLOCK, "seconds", 0.0)


def record_stage(timings: dict, name: str, seconds: float, compiled_before: float) -> float:
    """Record ``seconds`` of stage ``name`` less the kernels compiled during it (since the
    clock read ``compiled_before``), which go to "compile": the device idles while they
    compile, so a stage timed by CUDA events holds them too.  Returns the clock now."""
    compiled = compile_seconds()
    spent = compiled - compiled_before
    timings[name] = max(seconds - spent, 0.0)
    if spent:
        timings["compile"] = timings.get("compile", 0.0) + spent
    return compiled


class EventClock:
    """Marks as CUDA events recorded on the current stream, each with the thread's compile
    clock (:func:`compile_seconds`): stage timings (floydwarp.schedule.Stages) in GPU time less
    the kernels compiled in between, read once the run has synchronized.  The device idles while
    a kernel compiles, so the events hold that time; the run's "compute" leaves it out and
    reports it as "compile" (:func:`record_stage`), and its stages do the same, so that none of
    them exceeds it.  ``cuda`` and ``compiled``: CuPy's and floydwarp's by default."""

    def __init__(self, cuda=None, compiled=None):
        if cuda is None:
            import cupy

            cuda = cupy.cuda
        self.cuda, self.compiled = cuda, compiled or compile_seconds

    def mark(self):
        event = self.cuda.Event()
        event.record()
        return event, self.compiled()

    def seconds(self, a, b) -> float:
        (start, compiled_at_start), (end, compiled_at_end) = a, b
        elapsed = self.cuda.get_elapsed_time(start, end) / 1000.0
        return max(elapsed - (compiled_at_end - compiled_at_start), 0.0)


def strided_grid(rows: int, cols: int, threads: int) -> tuple:
    """The grid of a kernel whose blocks stride over rows (y) and, ``threads`` wide, over
    columns (x): up to 8 blocks across a row, a block row per matrix row up to CUDA's limit."""
    return max(1, min(-(-cols // threads), 8)), max(1, min(rows, 65535))


def kernel(filename: str, expr: str, group=None, *, cooperative: bool = False, dynamic_smem: int = 0):
    """The ``cupy.RawKernel`` ``expr`` from the module compiled for ``group`` (default:
    just ``expr``), allowed ``dynamic_smem`` bytes of dynamic shared memory."""
    group = tuple(sorted(set(group or ()) | {expr}))
    key = (filename, expr, group, cooperative)
    k = _KERNELS.get(key)
    if k is None:
        import cupy

        # The device finishes what is queued first, so that it is idle while NVRTC runs:
        # a stage timed by CUDA events then holds the compile exactly, to be taken out.
        cupy.cuda.Device().synchronize()
        t0 = time.perf_counter()
        k = module(filename, group, cooperative).get_function(expr)
        _COMPILE_CLOCK.seconds = compile_seconds() + time.perf_counter() - t0
        _KERNELS[key] = k
    if dynamic_smem > 48 * 1024 and k.max_dynamic_shared_size_bytes < dynamic_smem:
        k.max_dynamic_shared_size_bytes = int(dynamic_smem)
    return k
