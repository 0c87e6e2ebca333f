"""How many Numba threads a cpu kernel runs on."""
from __future__ import annotations

from contextlib import contextmanager

from ..errors import FloydwarpError


@contextmanager
def numba_threads(requested, tasks=None):
    """Run with ``requested`` Numba threads; by default all, or ``tasks`` when fewer (a
    thread with nothing to do costs each parallel loop a wake-up: 3 us of a 5 us round)."""
    import numba

    limit = numba.config.NUMBA_NUM_THREADS
    n = (limit if tasks is None else max(1, min(limit, tasks))) if requested is None else int(requested)
    if not 1 <= n <= limit:
        raise FloydwarpError(
            f"threads={requested} is out of range: Numba runs 1..{limit} threads here "
            f"(set NUMBA_NUM_THREADS before starting Python for more)")
    previous = numba.get_num_threads()
    if previous == n:                  # the common case: nothing to set (it costs microseconds)
        yield n
        return
    numba.set_num_threads(n)
    try:
        yield n
    finally:
        numba.set_num_threads(previous)
