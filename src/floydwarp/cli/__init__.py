"""The ``floydwarp`` command line.

Each subcommand is one module of this package that registers its command on
the shared Click group (:mod:`floydwarp.cli.app`) when imported.  Adding a
subcommand is one module and one name in ``COMMANDS``.
"""
from __future__ import annotations

import ctypes
import gc
import importlib
import os
import sys

#: Subcommand modules, in the order ``floydwarp --help`` lists them.
COMMANDS = (
    "solve",
    "generate",
    "info",
    "bench",
    "path",
    "query",
    "metrics",
    "report",
    "batch",
)

for _name in COMMANDS:
    importlib.import_module(f"{__name__}.{_name}")


def main(argv=None):
    """The command line (``argv``: its words, default ``sys.argv[1:]``); the ``floydwarp`` script
    and ``python -m floydwarp`` run it through :func:`floydwarp.launch.main`, which starts the
    GPUs it names first."""
    from .app import PROG, app

    args = sys.argv[1:] if argv is None else list(argv)
    try:
        return app.main(args=argv, prog_name=PROG)
    except SystemExit as end:
        if end.code in (0, None) and "--distributed" in args:
            _end_mpi_rank()
        raise
    finally:
        # The process ends here: keep the objects alive now (Numba's compiler alone makes
        # about a million) out of the interpreter's final full collection, which took
        # 100-140 ms of the main job's 0.9 s on a 2-core box (floydwarp bench startup).
        gc.freeze()


def _end_mpi_rank() -> None:
    """A rank of an MPI job whose command succeeded (its files written, its lines printed):
    MPI finalized, then the process ends without the interpreter's teardown, which destroys
    NCCL's communicators and the CUDA contexts one by one: 0.6-0.9 s of a 6.6 s run of
    ``mpiexec -n 4 ... --distributed -a gpu-2d`` on four H200s, for memory the operating
    system frees at once anyway.

    It ends through the C library's ``exit``, not ``os._exit``: MPICH's launcher (Hydra)
    hears that a rank finished from the library's exit handlers, and took a rank that left
    by ``_exit`` after ``MPI_Finalize`` for killed (signal 9), failing the whole job, whenever
    the ranks ended at different times.  ``PyDLL`` keeps the GIL, so no other Python thread
    runs while those handlers do.  Where the process has no C library handle to ask (Windows),
    it ends by ``os._exit``."""
    mpi = sys.modules.get("mpi4py.MPI")
    if mpi is None or not mpi.Is_initialized() or mpi.Is_finalized():
        return
    sys.stdout.flush()
    sys.stderr.flush()
    mpi.Finalize()
    try:
        c_exit = ctypes.PyDLL(None).exit
    except (TypeError, OSError, AttributeError):
        os._exit(0)
    c_exit(0)
