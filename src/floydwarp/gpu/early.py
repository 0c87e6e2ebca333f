"""The CUDA driver's start, begun before CuPy is imported: ``cuInit`` and the primary context
of each GPU a run will use, retained through ctypes in a thread of its own.

Creating a GPU's context is the slowest step of a GPU process's start (0.35 s on an H200, more
on a machine without persistence mode), and it needs no Python: a foreign call through ctypes
releases the GIL, so the context is made while the interpreter imports floydwarp, Click and
CuPy.  CuPy's runtime then finds the primary context made and retains it too.  The contexts
retained here are never released: the process ends with them, as it would with CuPy's.
Nothing here fails: without a driver (or a GPU) the thread ends and the run meets the problem
where it always did, with its own message.
"""
from __future__ import annotations

import ctypes
import threading


def begin(gpus=(0,)) -> threading.Thread:
    """Start ``cuInit`` and retain the primary contexts of GPUs ``gpus`` (ordinals among those
    ``CUDA_VISIBLE_DEVICES`` shows) in a daemon thread; the thread."""
    thread = threading.Thread(target=_retain, args=(tuple(gpus),), name="floydwarp-cuda-init", daemon=True)
    thread.start()
    return thread


def _retain(gpus: tuple) -> None:
    try:
        driver = ctypes.CDLL("libcuda.so.1")
    except OSError:
        return
    if driver.cuInit(0) != 0:
        return
    # one thread a GPU: each context's creation is mostly that GPU's own work (its memory
    # mapped, its firmware told), so four take little longer than one
    others = [threading.Thread(target=_retain_one, args=(driver, ordinal), daemon=True) for ordinal in gpus[1:]]
    for thread in others:
        thread.start()
    if gpus:
        _retain_one(driver, gpus[0])
    for thread in others:
        thread.join()


def _retain_one(driver, ordinal: int) -> None:
    device, context = ctypes.c_int(), ctypes.c_void_p()
    if driver.cuDeviceGet(ctypes.byref(device), ordinal) == 0:
        driver.cuDevicePrimaryCtxRetain(ctypes.byref(context), device)
