"""Exceptions raised by floydwarp.

Every error a user can cause is a subclass of :class:`FloydwarpError` (itself a
``ValueError``) and says what was wrong in words; the CLI prints the message
and exits with status 2 instead of a traceback.
"""
from scipy.sparse.csgraph import NegativeCycleError as _ScipyNegativeCycleError


class FloydwarpError(ValueError):
    """A problem with the input or the options, explained in the message."""


class NegativeCycleError(_ScipyNegativeCycleError):
    """The graph has a negative cycle.

    A subclass of :class:`scipy.sparse.csgraph.NegativeCycleError`, so code
    written for SciPy's ``floyd_warshall`` keeps catching it.
    """

    def __init__(self, message="", vertices=()):
        super().__init__(message)
        self.vertices = list(vertices)


class DtypeError(FloydwarpError):
    """The requested distance dtype cannot hold every shortest path."""


class BackendUnavailableError(FloydwarpError):
    """The requested backend cannot run here (missing package or device)."""


class NoPathError(FloydwarpError):
    """A route was asked for between vertices that have no shortest path."""


class InexactWarning(UserWarning):
    """Integer weights are solved in float64, whose sums may round (``dtype="auto"`` found no exact dtype)."""
