"""Compile Numba kernels ahead, in a forked helper process, while this one goes on.

The first run after install compiles every kernel it calls, one after the other on one
core (the main job, blocked int32: 2.0 s of its 2.9 s).  :func:`start` forks a helper that
compiles some of those kernels (``cache=True`` ones) into Numba's on-disk cache while the
caller builds its input and compiles the others; :meth:`Helper.wait`, called just before
the first use, waits for it, and that use then loads the kernel from the cache (some ms)
instead of compiling it.

Robustness: a helper is only started where it can help and cannot hurt (Linux, two or
more usable cores, a writable on-disk cache, no MPI in the process, the kernel neither
compiled here nor cached); it compiles nothing else and leaves with ``os._exit``, never
touching the caller's files or buffers; it dies with the caller (``PR_SET_PDEATHSIG``).
Whatever becomes of it -- an error, a kill, a hang -- the caller compiles the kernel itself
as it would have without one: :meth:`Helper.wait` returns when the helper has ended (or
after :data:`PATIENCE_S`, then kills it) and always reaps it.  The fork is taken while
holding Numba's compiler lock, so no thread of the caller is halfway through a
compilation the child would inherit, and once the compiler is started (its registries,
~0.2 s that the caller pays at its first compile anyway), so the helper does not start
it a second time.
"""
from __future__ import annotations

import contextlib
import os
import select
import signal
import sys
import time
import warnings

#: The longest :meth:`Helper.wait` waits, in seconds.  A helper compiles in 1-2 s; one that
#: takes this long is stuck, and the caller then compiles the kernel itself.
PATIENCE_S = 30.0
#: What a helper writes to its pipe when every kernel it was given is in the cache.
_DONE = b"ok"


def wanted() -> bool:
    """Whether this process may fork a compile helper: Linux (fork of a process that loaded
    LLVM is not safe on macOS; Windows has none), a second usable core, and no MPI (a fork
    under an MPI library can break its network state)."""
    if not sys.platform.startswith("linux") or "mpi4py.MPI" in sys.modules:
        return False
    return len(os.sched_getaffinity(0)) >= 2


def signature(kernel, args) -> tuple:
    """The Numba argument types a call ``kernel(*args)`` compiles for."""
    return tuple(kernel.typeof_pyval(a) for a in args)


def cold(kernel, sig) -> bool:
    """True when ``kernel`` (a ``cache=True`` dispatcher) has no machine code for ``sig`` in
    this process nor in Numba's on-disk cache, and a helper can write it there."""
    return sig not in kernel.overloads and _in_cache(kernel, sig) is False


def _in_cache(kernel, sig):
    """Whether Numba's on-disk cache holds ``kernel`` for ``sig``; None when that cannot be
    told or the cache cannot be written (disabled, read-only, another Numba's internals):
    the kernel is then compiled where it is called, as without a helper."""
    try:
        cache = kernel._cache
        if not cache._enabled or not os.access(cache.cache_path, os.W_OK):
            return None
        key = cache._index_key(sig, kernel.targetctx.codegen())
        return key in cache._cache_file._load_index()
    except Exception:                            # noqa: BLE001 - see the docstring
        return None


class Helper:
    """A forked process compiling ``jobs`` (``(kernel, sig)`` pairs) into Numba's cache."""

    def __init__(self, jobs):
        from numba.core.compiler_lock import global_compiler_lock

        self.jobs = list(jobs)
        read, write = os.pipe()
        parent = os.getpid()
        with global_compiler_lock, warnings.catch_warnings():
            _start_compilers(self.jobs)
            # Python 3.12 warns that a fork of a threaded process may deadlock: the compiler
            # lock is held here, and the child uses nothing else the other threads hold
            warnings.simplefilter("ignore", DeprecationWarning)
            pid = os.fork()
        if pid == 0:                             # the helper
            os.close(read)
            _compile_and_exit(self.jobs, write, parent)
        os.close(write)
        self.pid, self.pipe = pid, read

    def wait(self, patience: float = PATIENCE_S) -> bool:
        """Wait for the helper (at most ``patience`` s, then kill it) and reap it: True when
        it compiled every job into the cache."""
        if self.pid is None:
            return False
        done = b""
        try:
            deadline = time.monotonic() + patience
            while True:
                left = deadline - time.monotonic()
                if left <= 0 or not select.select([self.pipe], [], [], left)[0]:
                    break                        # out of patience
                chunk = os.read(self.pipe, 16)
                if not chunk:
                    break                        # the helper ended
                done += chunk
        finally:
            self._end()
        return done == _DONE

    def _end(self):
        os.close(self.pipe)
        with contextlib.suppress(ProcessLookupError):
            os.kill(self.pid, signal.SIGKILL)    # already gone after an answer: no harm
        with contextlib.suppress(ChildProcessError):
            os.waitpid(self.pid, 0)
        self.pid = None

    def __del__(self):
        # a caller that never waited (an error on the way) leaves no zombie or stray helper
        if getattr(self, "pid", None) is not None:
            self._end()


def start(calls):
    """A :class:`Helper` compiling each ``(kernel, args)`` of ``calls`` whose specialization
    is :func:`cold`, or None when there is none or a helper is not :func:`wanted`."""
    if not wanted():
        return None
    jobs = []
    for kernel, args in calls:
        if not hasattr(kernel, "typeof_pyval"):
            continue                             # not a dispatcher (NUMBA_DISABLE_JIT)
        sig = signature(kernel, args)
        if cold(kernel, sig):
            jobs.append((kernel, sig))
    return Helper(jobs) if jobs else None


def _start_compilers(jobs):
    """Start Numba's compiler for the jobs' targets here, before the fork, so the helper
    inherits it: its lowering and typing registries (importing most of ``numba.np`` and
    ``numba.cpython``, and SciPy's BLAS for the array functions) take ~0.2 s, which this
    process pays at its own first compile or cache load anyway; a helper started without
    them paid them a second time, on its own core but in series with its kernels.  A
    failure here (another Numba's internals) leaves that to the helper."""
    with contextlib.suppress(Exception):
        for kernel, _ in jobs:
            kernel.typingctx.refresh()
            kernel.targetctx.refresh()


def _compile_and_exit(jobs, pipe, parent):
    """The helper's life: compile, report, leave without running the caller's exit code."""
    status = 1
    try:
        _die_with(parent)
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)                      # warnings or errors here are the caller's to see
        os.dup2(devnull, 2)
        for kernel, sig in jobs:
            kernel.compile(sig)
        if all(_in_cache(kernel, sig) for kernel, sig in jobs):
            os.write(pipe, _DONE)
        status = 0
    except BaseException:                        # noqa: BLE001 - the caller compiles instead
        pass
    finally:
        os._exit(status)


def _die_with(parent):
    """Ask Linux to kill this process when ``parent``, which forked it, ends."""
    import ctypes

    ctypes.CDLL(None).prctl(1, signal.SIGKILL)   # PR_SET_PDEATHSIG
    if os.getppid() != parent:                   # it ended before the request
        os._exit(1)
