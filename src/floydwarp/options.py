"""Solve options: the ones every backend takes, the groups several engines share, and the
error for an option a call does not take.

Each backend and algorithm declares the options it reads where it registers
(``registry.register_backend(..., options=)``, ``registry.register(..., options=)``): a
name and one line saying what it does, which ``floydwarp info --options`` prints.
``solve(**options)`` takes the chosen backend's and algorithm's and the :data:`GENERAL`
ones; any other raises :class:`~floydwarp.errors.OptionError` (a ``TypeError``) naming
it and listing what the call takes.
"""
from __future__ import annotations

import operator

import numpy as np

from .errors import FloydwarpError, OptionError

#: options every backend takes
GENERAL = {
    "output": "where the result is left: 'host', 'device' (kept in GPU memory by the gpu backend, on GPU 0 by "
              "multigpu where it fits there) or 'auto' (where a dense input was); the other backends always "
              "return host arrays",
    "phases": "True: time the blocked schedule's phases (phase1, phase2, phase3, ...) where the algorithm runs "
              "one; per-k algorithms have none",
    "output_file": "NAME.npy: the file the result is bound for: the gpu backend keeps the result on the device "
                   "to write it from there; mpi ranks write their parts into it when rank 0 cannot gather",
}

#: the engines that save a run at round boundaries (checkpoint.py)
CHECKPOINT = {
    "checkpoint": "DIR: save the run's state there at round boundaries; SIGTERM or Ctrl-C then stop after saving",
    "checkpoint_every": "seconds between saves (default: only when stopped by a signal)",
    "resume": "DIR: finish the run saved there, bit-identically",
}

#: the engines that can keep their matrices in files instead of memory
WORKDIR = {
    "workdir": "DIR: keep the matrices in memory-mapped files there (for matrices larger than RAM)",
}

#: the engines whose rounds run over a grid of processes or GPUs
GRID = {
    "grid": "(Pr, Pc): the process (or GPU) grid of the 2D blocks (default: the squarest, Pr <= Pc)",
}
LOOKAHEAD = {
    "lookahead": "False: start a round's pivot once the last round is done (default True: the next round's "
                 "panels are computed and sent during this round's phase 3)",
}


def unexpected(function: str, name: str, takes, *, by: str | None = None, parameters=(), elsewhere=()) -> OptionError:
    """The error for the keyword ``name`` given to ``function``, which takes ``takes``
    (``by``: whose options these are, e.g. "cpu/blocked", where ``function`` takes them on its
    behalf; ``parameters``: ``function``'s own keywords besides, for the "did you mean";
    ``elsewhere``: the backends/algorithms that do take ``name``)."""
    import difflib

    takes = sorted(takes)
    owner = by or f"{function}()"
    if elsewhere:
        why = f"{owner} does not take it; {', '.join(sorted(elsewhere))} {'does' if len(elsewhere) == 1 else 'do'}"
    else:
        close = difflib.get_close_matches(name, [*parameters, *takes], n=1)
        why = f"did you mean {close[0]!r}?" if close else f"{owner} does not take it"
    listed = f"{owner} takes {', '.join(takes)}" if takes else f"{owner} takes no options"
    if parameters:
        listed += f", besides {function}()'s own {', '.join(parameters)}"
    return OptionError(f"{function}() got an unexpected keyword argument {name!r} ({why}); {listed}")


def refused(func, unknown) -> OptionError:
    """The error for ``func``'s catch-all ``**unknown`` keywords when there are some: like
    Python's for an unexpected keyword, and it lists the keywords ``func`` takes.  (A
    catch-all costs a call nothing; a wrapper that checked the keywords cost
    ``floyd_warshall``'s 4.5 us small path 0.3 us.)"""
    import inspect

    kinds = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    names = [n for n, p in inspect.signature(func).parameters.items() if p.kind in kinds]
    return unexpected(func.__name__, next(iter(unknown)), names)


def flag(value, what: str) -> bool:
    """``value`` as a bool: True or False (NumPy's too), else a FloydwarpError naming ``what``;
    a truth test would take "False", -1 or 2 as True and refuse an array with a raw error."""
    if not isinstance(value, (bool, np.bool_)):
        raise FloydwarpError(f"{what} must be True or False; got {value!r}")
    return bool(value)


def count(value, what: str) -> int:
    """``value`` as a non-negative int: a Python or NumPy integer, or a 0-d integer array or
    tensor (PyG keeps a ``num_nodes`` as it was stored) -- whatever has ``__index__``.  Bools,
    floats, text and None are refused, naming ``what``, where ``int()`` would truncate 2.7,
    parse "3" or overflow on inf."""
    whole = -1
    if not isinstance(value, bool):
        try:
            whole = operator.index(value)
        except TypeError:
            pass
    if whole < 0:
        raise FloydwarpError(f"{what} must be a non-negative integer; got {value!r}")
    return whole
