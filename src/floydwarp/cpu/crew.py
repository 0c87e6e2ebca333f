"""A crew: threads that stay inside one Numba call and hand each other jobs through memory.

:class:`Crew` starts one for the rounds of a blocked run, with the workers of team.py: each worker thread enters the
phase kernel once and waits there, spinning on an int64 array ``crew``, for the jobs the
leader (the thread running the schedule) posts, one per phase.  A hand-off costs about a
microsecond; through Python it cost 50-100 us on the 2-core dev VM (a semaphore wakes a
halted vCPU, and the woken thread then waits for the GIL), which was 8 % of a blocked
run at n = 2048 (64 phases of 0.3-4 ms).

Layout of ``crew``: ``[ticket, r, panel, done_1, done_2, ...]``.  The leader writes the
job's round ``r`` and phase flag ``panel``, then the next ticket (release); worker ``k``
reads the ticket (acquire) and the job, does its share, then writes the ticket into
``done_k`` (release); the leader waits until every ``done_k`` holds it.  A ticket of -1
sends the workers home.  Plain loads in a wait loop could be hoisted out of it by LLVM;
these are atomic, and the acquire/release pairs order the tiles written before a signal
before those read after it.
"""
from __future__ import annotations

import platform

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic

from .. import team

#: the ticket that ends a crew
STOP = -1
#: index of the first done_k entry
DONE = 3


def _entry_pointer(context, builder, array_type, array, index):
    ary = context.make_array(array_type)(context, builder, array)
    return cgutils.get_item_pointer(context, builder, array_type, ary, [index])


def _int64_vector(array):
    return isinstance(array, types.Array) and array.dtype == types.int64 and array.ndim == 1


@intrinsic
def load_acquire(typingctx, array, index):
    """``array[index]`` (a 1-D int64 array) read with acquire ordering."""
    if not _int64_vector(array):
        return None

    def codegen(context, builder, sig, args):
        return builder.load_atomic(_entry_pointer(context, builder, sig.args[0], *args), "acquire", 8)

    return types.int64(array, index), codegen


@intrinsic
def store_release(typingctx, array, index, value):
    """``array[index] = value`` (a 1-D int64 array) written with release ordering."""
    if not _int64_vector(array):
        return None

    def codegen(context, builder, sig, args):
        value = context.cast(builder, args[2], sig.args[2], types.int64)
        builder.store_atomic(value, _entry_pointer(context, builder, sig.args[0], args[0], args[1]), "release", 8)
        return context.get_dummy_value()

    return types.void(array, index, value), codegen


#: the spin-wait hint of this CPU, an LLVM intrinsic (x86 ``pause``: frees the core's shared
#: resources for a sibling thread and saves power while a thread waits); None elsewhere
_RELAX = "llvm.x86.sse2.pause" if platform.machine().lower() in ("x86_64", "amd64") else None


@intrinsic
def relax(typingctx):
    """A spin-wait hint (x86 ``pause``; nothing where none is known)."""
    def codegen(context, builder, sig, args):
        if _RELAX is not None:
            fn = cgutils.get_or_insert_function(builder.module, ir.FunctionType(ir.VoidType(), []), _RELAX)
            builder.call(fn, [])
        return context.get_dummy_value()

    return types.void(), codegen


@njit(inline="always")
def first_job(crew, me, count, r, panel):
    """The ticket of the first job of thread ``me``: the leader (0) posts job ``(r, panel)``
    (to the workers when there are any) and returns its ticket; a worker waits for the next
    ticket (STOP included)."""
    if me == 0:
        crew[1] = r
        crew[2] = panel
        ticket = crew[0] + 1
        if count > 1:
            store_release(crew, 0, ticket)
        else:
            crew[0] = ticket
        return ticket
    last = load_acquire(crew, DONE + me - 1)
    ticket = load_acquire(crew, 0)
    while ticket == last:
        relax()
        ticket = load_acquire(crew, 0)
    return ticket


@njit(inline="always")
def next_job(crew, me, count, ticket):
    """After thread ``me`` did job ``ticket``: the leader waits for every worker to finish it
    and is done (STOP); a worker reports it and waits for its next ticket."""
    if me == 0:
        for k in range(1, count):
            while load_acquire(crew, DONE + k - 1) != ticket:
                relax()
        return STOP
    store_release(crew, DONE + me - 1, ticket)
    following = load_acquire(crew, 0)
    while following == ticket:
        relax()
        following = load_acquire(crew, 0)
    return following


class Crew:
    """``count`` threads in one call each of a crew kernel ``kernel(*args, crew, me, count,
    *job)``, for the length of a ``with`` block: the workers (team.py's) wait inside it for
    jobs, and :meth:`lead` posts one, does the leader's share on this thread and returns when
    every share is done.  With one thread (or no idle workers) :meth:`lead` is a plain call."""

    def __init__(self, kernel, args, count):
        self.kernel, self.args, self.count = kernel, tuple(args), max(1, int(count))
        self.flags = np.zeros(DONE + self.count - 1, np.int64)
        self.team = None

    def __enter__(self):
        self.team = team.hire(self.count - 1) if self.count > 1 else None
        if self.team is None:
            self.count = 1
        for me, w in enumerate(self.team or (), start=1):
            w.start(self.kernel, (*self.args, self.flags, me, self.count, 0, False))
        return self

    def lead(self, *job):
        kernel, args = self.call(*job)
        kernel(*args)

    def call(self, *job):
        """The kernel and arguments of the leader's call for ``job`` (what :meth:`lead` runs)."""
        return self.kernel, (*self.args, self.flags, 0, self.count, *job)

    def __exit__(self, *exc):
        if self.team is not None:
            self.flags[0] = STOP            # the workers read it with acquire loads
            team.dismiss(self.team)
        return False
