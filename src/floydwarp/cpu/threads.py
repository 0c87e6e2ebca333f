"""How many Numba threads a cpu kernel runs on."""
from __future__ import annotations

from ..errors import FloydwarpError
from ..options import count


class NumbaThreads:
    """``with NumbaThreads(requested, tasks) as n``: run with ``requested`` Numba threads; by
    default all, or ``tasks`` when fewer (a thread with nothing to do costs each parallel
    loop a wake-up: 3 us of a 5 us round).  One task on the default setting runs on this
    thread alone: Numba is not asked (its get/set pair cost 1.5 us of a small solve)."""

    def __init__(self, requested, tasks=None):
        self.requested, self.tasks, self.previous = requested, tasks, None

    def __enter__(self) -> int:
        requested, tasks = self.requested, self.tasks
        if requested is None and tasks == 1:
            return 1
        import numba

        limit = numba.config.NUMBA_NUM_THREADS
        n = (limit if tasks is None else max(1, min(limit, tasks))) if requested is None \
            else count(requested, "threads")
        if not 1 <= n <= limit:
            raise FloydwarpError(
                f"threads={requested} is out of range: Numba runs 1..{limit} threads here "
                f"(set NUMBA_NUM_THREADS before starting Python for more)")
        previous = numba.get_num_threads()
        if previous != n:              # the common case: nothing to set (it costs microseconds)
            numba.set_num_threads(n)
            self.previous = previous
        return n

    def __exit__(self, *exc):
        if self.previous is not None:
            import numba

            numba.set_num_threads(self.previous)
        return False
