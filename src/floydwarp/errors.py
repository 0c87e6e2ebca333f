"""Exceptions raised by floydwarp.

Every error a user can cause is a subclass of :class:`FloydwarpError` (itself a
``ValueError``) and says what was wrong in words; the CLI prints the message
and exits with status 2 instead of a traceback.
"""
import functools


class FloydwarpError(ValueError):
    """A problem with the input or the options, explained in the message."""


@functools.cache
def _negative_cycle_error():
    from scipy.sparse.csgraph import NegativeCycleError as ScipyNegativeCycleError

    class NegativeCycleError(ScipyNegativeCycleError):
        """The graph has a negative cycle.

        A subclass of :class:`scipy.sparse.csgraph.NegativeCycleError`, so code
        written for SciPy's ``floyd_warshall`` keeps catching it.
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


class DtypeError(FloydwarpError):
    """The requested distance dtype cannot hold every shortest path."""


class BackendUnavailableError(FloydwarpError):
    """The requested backend cannot run here (missing package or device)."""


class NoPathError(FloydwarpError):
    """A route was asked for between vertices that have no shortest path."""


class InexactWarning(UserWarning):
    """Integer weights are solved in float64, whose sums may round (``dtype="auto"`` found no exact dtype)."""
