"""The ``floydwarp`` command's entry point, and that of ``python -m floydwarp``.

It starts the CUDA driver and the contexts of the GPUs that a ``solve`` command line names, in a
thread of its own, before anything else is imported, and lets the driver see only those GPUs
(:func:`see_only`).  Then it runs the command line (:func:`floydwarp.cli.main`).

Creating a GPU's context is the slowest step of a GPU process's start: 0.35-0.45 s on an H200.
It needs no Python, and a foreign call through ctypes releases the GIL.  So the context is made
while the interpreter imports NumPy, Click, floydwarp and CuPy.

Begun here, ahead of ``import floydwarp.cli`` (0.2-0.3 s of imports), it shortened
``floydwarp solve --generate 32768 -p 5 -s 3 --dtype int32 --backend gpu`` from 3.43 s to 3.27 s,
and the same with ``--gpus 2`` from 2.37 s to 2.28 s (medians of 7 alternated runs, one and two
H200s; bench/results/process-gpu-h200x2-s20/).  This module imports none of NumPy and none of
floydwarp's modules but the launcher's facts (:mod:`floydwarp.mpi.comm`), and ``import floydwarp``
imports nothing itself (its names load when first used).

The contexts retained here are never released: the process ends with them, as it would with
CuPy's.  Nothing here fails.  Without a driver (or a GPU), the thread ends and the run meets the
problem where it always did, with its own message.
"""
from __future__ import annotations

import ctypes
import os
import sys
import threading


def main(argv=None):
    """Run the ``floydwarp`` command line (``argv``: its words, default ``sys.argv[1:]``), the GPUs
    it names started first."""
    start_named_gpus(sys.argv[1:] if argv is None else list(argv))
    from .cli import main as run_command_line

    return run_command_line(argv)


def start_named_gpus(args, environ=os.environ) -> None:
    """Start the CUDA driver and the contexts of the GPUs a ``solve`` command line names
    (:func:`named_gpus`), in a thread, the driver shown only those (:func:`see_only`).  An MPI
    rank's GPU algorithm also starts NCCL (:func:`floydwarp.multigpu.nccl.begin`), unless the
    launcher says that every rank runs on this node: their GPUs then copy panels through CUDA IPC
    (:mod:`floydwarp.mpi.links`), and NCCL's start would only take the CPU the rank's own start
    needs."""
    gpus, rank_gpu = named_gpus(args, environ)
    if gpus and rank_gpu is None:
        see_only(gpus, environ)
    if gpus:
        begin(gpus)
    if rank_gpu is not None:
        from .mpi.comm import launched_on_one_node

        if not launched_on_one_node(environ):
            from .multigpu import nccl

            nccl.begin(rank_gpu)


def named_gpus(args, environ=os.environ) -> tuple[tuple[int, ...], int | None]:
    """``(gpus, rank_gpu)`` of a ``solve`` command line, read once before Click parses it.

    ``rank_gpu``: this MPI rank's GPU where the line runs an mpi GPU algorithm
    (``--distributed -a gpu-2d`` or ``gpu-rows``) and the launcher says which -- the rank's index
    among those of its node, the mpi backend's choice (:func:`floydwarp.mpi.gpu.device_for_rank`);
    else None.  ``gpus``: ``--gpus N``: GPUs 0 .. N - 1; ``--backend gpu``: GPU 0; else the rank's
    GPU, if any.  Another command names none.  A command line that Click then refuses has cost
    a context, nothing more."""
    args = [str(a) for a in args]
    if not args or args[0] != "solve":
        return (), None
    named = {}          # each option by name (--algorithm as -a), with the word after it or after its =
    for i, arg in enumerate(args):
        name, equals, value = arg.partition("=")
        named.setdefault("-a" if name == "--algorithm" else name, value if equals else
                         args[i + 1] if i + 1 < len(args) else "")
    rank_gpu = None
    if "--distributed" in named:
        from .mpi import GPU_ALGORITHMS
        from .mpi.comm import launcher_local_rank

        if named.get("-a") in GPU_ALGORITHMS:
            rank_gpu = launcher_local_rank(environ)
    if named.get("--gpus", "").isdigit():
        return tuple(range(int(named["--gpus"]))), rank_gpu
    if named.get("--backend") == "gpu":
        return (0,), rank_gpu
    return (() if rank_gpu is None else (rank_gpu,)), rank_gpu


def see_only(gpus, environ=os.environ) -> None:
    """Narrow ``CUDA_VISIBLE_DEVICES`` to GPUs ``gpus``, the first N of those it shows, before the
    driver starts, so that this process (and any it starts) sees just the GPUs its command line names.

    ``cuInit`` sets up every GPU it sees.  On a 4 x H200 host with persistence mode on, it took
    0.53-0.90 s with all four visible and 0.10-0.35 s with one, whenever no other process had the
    driver open.  There ``solve --generate 32768 -p 5 -s 3 --dtype int32 --backend gpu`` went from
    3.74 s to 3.22 s with this narrowing, ``--gpus 2`` from 2.76 s to 2.26 s (medians of 5 alternated
    runs, bench/results/process-gpu-h200x4-s21/).  The named GPUs keep their ordinals, being the
    first N.  MPI ranks are left alone: their GPUs open each other's memory.  A list that is too
    short, or ordinals that are not the first N, are left as they are, for the run to meet with its
    own message."""
    if tuple(gpus) != tuple(range(len(gpus))):
        return
    shown = environ.get("CUDA_VISIBLE_DEVICES")
    entries = [str(i) for i in range(len(gpus))] if shown is None else shown.split(",")
    if len(entries) >= len(gpus):
        environ["CUDA_VISIBLE_DEVICES"] = ",".join(entries[:len(gpus)])


def begin(gpus=(0,)) -> threading.Thread:
    """Start ``cuInit`` and retain the primary contexts of GPUs ``gpus`` (ordinals among those
    ``CUDA_VISIBLE_DEVICES`` shows) in a daemon thread; the thread.  CuPy's runtime later finds
    each primary context made and retains it too."""
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
