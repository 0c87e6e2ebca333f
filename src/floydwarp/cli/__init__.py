"""The ``floydwarp`` command line.

Each subcommand is one module of this package that registers its command on
the shared Click group (:mod:`floydwarp.cli.app`) when imported.  Adding a
subcommand is one module and one name in ``COMMANDS``.
"""
from __future__ import annotations

import gc
import importlib
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
    """Entry point of the ``floydwarp`` script (and ``python -m floydwarp``)."""
    from .app import PROG, app
    from .solve import start_named_gpus

    start_named_gpus(sys.argv[1:] if argv is None else argv)
    try:
        return app.main(args=argv, prog_name=PROG)
    finally:
        # The process ends here: keep the objects alive now (Numba's compiler alone makes
        # about a million) out of the interpreter's final full collection, which took
        # 100-140 ms of the main job's 0.9 s on a 2-core box (floydwarp bench startup).
        gc.freeze()
