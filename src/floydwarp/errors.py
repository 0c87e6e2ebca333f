"""Exceptions raised by floydwarp, by whose fault they are.

=======================  ================  ========  =================================================
class                    base              CLI exit  raised for
=======================  ================  ========  =================================================
FloydwarpError           ValueError        2         bad input or options (the message says which)
DtypeError               FloydwarpError    2         a distance dtype that cannot hold every path
NoPathError              FloydwarpError    2         a route between vertices that have none
BackendUnavailableError  FloydwarpError    2         a backend that cannot run here
CheckpointError          FloydwarpError    2         a checkpoint that does not belong to this run
NegativeCycleError       FloydwarpError,   2         a graph whose distances are unbounded
                         SciPy's
CheckpointInterrupt      FloydwarpError    3         stopped by SIGTERM / Ctrl-C after saving a checkpoint
DeviceError              RuntimeError      4         the GPU, CUDA, NCCL or a worker process failed (out of
                                                     device memory included): the input may be fine
InternalError            RuntimeError      5         a broken internal invariant: a bug in floydwarp
=======================  ================  ========  =================================================

The CLI (cli/app.py, one place for every command) prints one ``error: <message>`` line and
exits with the status above; an internal error keeps its traceback, to be reported.
"""
import functools


class FloydwarpError(ValueError):
    """A problem with the input or the options, explained in the message."""


@functools.cache
def _negative_cycle_error():
    from scipy.sparse.csgraph import NegativeCycleError as ScipyNegativeCycleError

    class NegativeCycleError(ScipyNegativeCycleError, FloydwarpError):
        """The graph has a negative cycle.

        A subclass of :class:`scipy.sparse.csgraph.NegativeCycleError`, so code
        written for SciPy's ``floyd_warshall`` keeps catching it, and of
        :class:`FloydwarpError`: the input has no shortest paths (CLI exit status 2).
        """

        def __init__(self, message="", vertices=()):
            super().__init__(message)
            self.vertices = list(vertices)

    NegativeCycleError.__module__ = __name__
    return NegativeCycleError


def __getattr__(name):
    # NegativeCycleError subclasses SciPy's: made on first use, so that importing
    # floydwarp does not import SciPy (150 ms of a process's start)
    if name == "NegativeCycleError":
        return _negative_cycle_error()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class OptionError(FloydwarpError, TypeError):
    """An option the call does not take: misspelt, or not one of the chosen backend's or
    algorithm's.  A TypeError, as Python's own for an unexpected keyword argument."""


class DtypeError(FloydwarpError):
    """The requested distance dtype cannot hold every shortest path."""


class BackendUnavailableError(FloydwarpError):
    """The requested backend cannot run here (missing package or device)."""


class NoPathError(FloydwarpError):
    """A route was asked for between vertices that have no shortest path."""


class CheckpointError(FloydwarpError):
    """A checkpoint that does not prove it belongs to this run (or together) is refused."""


class CheckpointInterrupt(FloydwarpError):
    """The run was asked to stop (SIGTERM / Ctrl-C) and saved a checkpoint first."""


class DeviceError(RuntimeError):
    """The device or its runtime failed: GPU out of memory, a CUDA or NCCL error, a worker
    process that died or stalled.  Not the input's fault: the same call may succeed later,
    with more free device memory, or on another backend."""


class InternalError(RuntimeError):
    """A broken internal invariant (a protocol fault between processes, an engine's result
    that cannot be right): a bug in floydwarp, never the input's fault."""


class InexactWarning(UserWarning):
    """Integer weights are solved in float64, whose sums may round (``dtype="auto"`` found no exact dtype)."""
