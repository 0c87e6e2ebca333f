"""Threads for the Numba kernels: serial kernels over ranges of tasks, run on several cores.

Base layer: the graph's passes (graph/kernels.py), the text readers, the distance casts and
the engines' host passes share it.  Every parallel pass is a serial Numba kernel compiled
with ``nogil=True``: a pass ``kernel(*args, first, stop)`` does tasks ``first .. stop -
1``, and :func:`run` splits the tasks into contiguous equal shares (the static schedule
``prange`` used) and runs them at once, the first share on the calling thread and the
others on persistent worker threads.  The rounds of a blocked run, 64 short phases at n =
2048, go to a crew instead (cpu/crew.py's ``Crew``, which hires these workers): they stay
inside the phase kernel for the whole run and take each phase from the leader through
memory, a hand-off of about a microsecond instead of the 50-100 us a semaphore and the GIL
take on the 2-core dev VM.  Why not Numba's ``parallel=True``:

* compiling: a ``prange`` kernel is lowered three more times (gufunc, gufunc wrapper,
  parallel wrapper), each a full LLVM optimization and code generation of its body:
  that is most of the 5.1 s the first blocked int32 run spent compiling (bench/NOTES_cpu.md);
* small inputs: a call below :data:`GRAIN` runs on the caller's thread with no launch
  (a ``prange`` launch cost 2-5 us, and the set_num_threads pair around it 1.5 us, of a
  40 us small solve).

The share count follows Numba's thread setting (``numba.set_num_threads``, which the
engines set from ``threads=``), so one knob still controls every kernel.
"""
from __future__ import annotations

import os
import threading

#: Element operations below which a pass runs on the calling thread: a worker hand-off
#: costs 50-100 us on the dev VM, the time of ~10^5 simple element operations.
GRAIN = 1 << 16

_lock = threading.Lock()
_workers: list["_Worker"] = []


class _Worker:
    """A daemon thread that runs one job per ``go`` release and reports on ``done``."""

    def __init__(self):
        self.go = threading.Semaphore(0)
        self.done = threading.Semaphore(0)
        self.job = self.result = self.error = None
        threading.Thread(target=self._loop, name="floydwarp-worker", daemon=True).start()

    def _loop(self):
        while True:
            self.go.acquire()
            kernel, args = self.job
            try:
                self.result = kernel(*args)
            except BaseException as exc:  # noqa: BLE001 -- handed to the caller, who raises it
                self.error = exc
            self.job = None
            self.done.release()

    def start(self, kernel, args):
        self.result = self.error = None
        self.job = (kernel, args)
        self.go.release()


def usable_cores() -> int:
    """The cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:                                  # not on Linux
        return os.cpu_count() or 1


def default_threads() -> int:
    """Numba's thread count for the calling thread (``numba.set_num_threads``)."""
    import numba

    return numba.get_num_threads()


def shares(tasks: int, work: float, threads: int | None = None) -> int:
    """How many threads ``tasks`` tasks of ``work`` element operations in all are worth:
    at most ``threads`` (default: Numba's setting) and one per :data:`GRAIN` of work."""
    if tasks <= 1 or work < 2 * GRAIN:
        return 1
    if threads is None:
        threads = default_threads()
    return max(1, min(int(threads), tasks, int(work // GRAIN)))


def hire(count):
    """``count`` idle workers, or None when another caller has them (the caller then runs
    alone: two solves on two user threads already keep the cores busy)."""
    if count < 1 or not _lock.acquire(blocking=False):
        return None
    while len(_workers) < count:
        _workers.append(_Worker())
    return _workers[:count]


def dismiss(team):
    """Wait for every worker of ``team`` to finish, free them, and raise the first error."""
    try:
        for w in team:
            w.done.acquire()
    finally:
        _lock.release()
    for w in team:
        if w.error is not None:
            raise w.error


def run(kernel, tasks: int, *args, threads: int = 1) -> list:
    """``kernel(*args, first, stop)`` over tasks ``0 .. tasks - 1`` in ``threads`` contiguous
    shares at once (the first on this thread): the shares' return values in task order,
    when all are done; the first error a share raised is raised."""
    if threads <= 1 or tasks <= 1:
        return [kernel(*args, 0, tasks)]
    count = min(int(threads), int(tasks))
    team = hire(count - 1)
    if team is None:
        return [kernel(*args, 0, tasks)]
    bounds = share_bounds(tasks, count)
    for s, w in enumerate(team, start=1):
        w.start(kernel, (*args, bounds[s], bounds[s + 1]))
    try:
        first = kernel(*args, bounds[0], bounds[1])
    finally:
        dismiss(team)
    return [first] + [w.result for w in team]


def share_bounds(tasks: int, count: int) -> list:
    """Where :func:`run`'s ``count`` shares of ``tasks`` tasks begin, and the end: share ``s``
    does tasks ``bounds[s] .. bounds[s + 1] - 1``."""
    return [tasks * s // count for s in range(count + 1)]


def _forget_workers():
    """A forked child has none of its parent's threads: start new ones when needed."""
    global _lock
    _workers.clear()
    _lock = threading.Lock()


os.register_at_fork(after_in_child=_forget_workers)
