"""The GPU itself: discovery (the backend's probe), device facts, occupancy, the memory
budget of a run, pinned host buffers, and the CUDA-event clock of the stage timings.

Nothing here imports CuPy at module level: ``probe`` says why the backend cannot run
(no CuPy, no device) and names the CPU fallback.
"""
from __future__ import annotations

import functools

import numpy as np

from ..errors import DeviceError, FloydwarpError
from .layout import format_bytes

NO_CUPY = "CuPy is not installed: pip install 'floydwarp[gpu]' (or use backend='cpu')"


def find() -> str | None:
    """None when CuPy and a CUDA device are usable here, else why not (uncached)."""
    try:
        import cupy
    except ImportError:
        return NO_CUPY
    except Exception as exc:  # noqa: BLE001 -- a broken CuPy install (missing CUDA libraries, ...)
        return f"CuPy cannot be imported ({type(exc).__name__}: {exc}); reinstall 'floydwarp[gpu]' or use backend='cpu'"
    try:
        count = cupy.cuda.runtime.getDeviceCount()
    except Exception as exc:  # noqa: BLE001 -- no driver or device: the probe's answer
        return f"no usable CUDA GPU ({exc}); use backend='cpu'"
    if count < 1:
        return "no CUDA GPU found; use backend='cpu'"
    return None


@functools.lru_cache(maxsize=1)
def probe() -> str | None:
    """None when the GPU backend can run here, else the reason (with the CPU fallback)."""
    return find()


@functools.lru_cache(maxsize=None)
def info(device_id: int) -> dict:
    """Name, SM count, opt-in shared memory per block, cooperative launch and compute
    capability of a device."""
    import cupy

    rt = cupy.cuda.runtime
    props = rt.getDeviceProperties(device_id)
    name = props["name"]
    return {
        "id": device_id,
        "name": name.decode() if isinstance(name, bytes) else str(name),
        "sm_count": rt.deviceGetAttribute(rt.cudaDevAttrMultiProcessorCount, device_id),
        "smem_optin": rt.deviceGetAttribute(rt.cudaDevAttrMaxSharedMemoryPerBlockOptin, device_id),
        "cooperative": rt.deviceGetAttribute(rt.cudaDevAttrCooperativeLaunch, device_id),
        "cc": props["major"] * 10 + props["minor"],
    }


def current() -> dict:
    """:func:`info` of the current device."""
    import cupy

    return info(cupy.cuda.Device().id)


@functools.lru_cache(maxsize=None)
def _blocks_per_sm(ptr, threads, smem):
    import cupy as cp

    return int(cp.cuda.driver.occupancyMaxActiveBlocksPerMultiprocessor(ptr, threads, smem))


def occupancy(kern, threads, smem) -> int:
    """Blocks of ``kern`` (a ``cupy.RawKernel``) that fit on one SM (at least 1)."""
    return max(1, _blocks_per_sm(kern.kernel.ptr, int(threads), int(smem)))


def require_smem(plan, need):
    """Refuse a block size whose kernels need more shared memory per block than the device allows."""
    optin = current()["smem_optin"]
    if need > optin:
        raise FloydwarpError(f"gpu/{plan.algorithm}: block_size {plan.block_size} needs {need} bytes of shared "
                             f"memory per block; this device allows {optin}; use a smaller block_size")


# ---------------------------------------------------------------------- memory
#: the solve options of every gpu algorithm (gpu/engine.py registers them)
OPTIONS = {
    "max_gpu_memory": "bytes of GPU memory a run may use (default: what is free); a fast run whose matrix does "
                      "not fit goes out of core",
}


def _free() -> int:
    """Bytes of device memory free now, CuPy's pool's unused blocks included."""
    import cupy as cp

    free, _ = cp.cuda.runtime.memGetInfo()
    return int(free) + int(cp.get_default_memory_pool().free_bytes())


def budget(plan) -> int:
    """Bytes of GPU memory the run may use: ``max_gpu_memory`` or what is free."""
    available = _free()
    cap = plan.options.get("max_gpu_memory")
    return available if cap is None else min(int(cap), available)


def memory_error(message: str, plan) -> Exception:
    """The refusal of a run that does not fit, by whose fault: a FloydwarpError where the
    caller's ``max_gpu_memory`` is what limits it, else a DeviceError (the device's free memory;
    other processes may hold some of it)."""
    cap = plan.options.get("max_gpu_memory")
    return FloydwarpError(message) if cap is not None and int(cap) < _free() else DeviceError(message)


def check_memory(needed: int, n: int, dtype, plan) -> None:
    """Refuse (before allocating) a run whose buffers do not fit in free device memory
    (or in ``max_gpu_memory``)."""
    available = budget(plan)
    if needed > available:
        raise memory_error(memory_message(needed, available, n, dtype, current()["name"],
                                          predecessors=bool(plan.predecessors)), plan)


def memory_message(needed: int, available: int, n: int, dtype, device_name: str, predecessors=False) -> str:
    what = f"{np.dtype(dtype).name} distances" + (" and int32 predecessors" if predecessors else "")
    return (f"a graph of n = {n} vertices needs {needed} bytes ({format_bytes(needed)}) of GPU memory "
            f"for its {what}, but only {available} bytes ({format_bytes(available)}) may be used on {device_name}; "
            f"algorithm='fast' without predecessors streams a larger matrix from host memory; otherwise use a "
            f"narrower dtype, fewer vertices, or backend='cpu'")
