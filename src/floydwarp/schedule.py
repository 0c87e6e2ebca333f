"""The blocked Floyd-Warshall schedule, written once for every engine.

Round ``r`` of blocked Floyd-Warshall is the same on every device: close the pivot block
(phase 1), update the pivot row and column panels with it (phase 2), then every other tile
with one min-plus product of the two panels (phase 3).  :func:`run` owns the order of the
rounds and their phases, lookahead, the checkpoint at the end of a round, progress and the
stage timings; an *engine* supplies only where the tiles live and how they move:

``rounds``
    how many rounds there are;
``close_pivot(r)``, ``update_panels(r)``, ``product(r, part)``
    the tile operations of phases 1, 2 and 3; ``part`` is :data:`ALL`, or with lookahead
    :data:`NEXT` (the tiles of round ``r + 1``'s pivot row and column) then :data:`REST`;
``load(r)``, ``broadcast(r)``, ``store(r)`` (optional)
    data movement: ``load`` brings what round ``r`` works on to where it computes (before
    its phase 1); ``broadcast`` sends round ``r``'s updated panels to where phase 3 reads
    them (other processes, other GPUs, host memory) -- ``product(r, ...)`` waits for them;
    ``store`` ends round ``r``: its results are home and whatever it set moving has landed,
    so a checkpoint may read the state.  An engine whose tiles never move defines none;
``state()`` (engines that checkpoint)
    the arrays a checkpoint saves and restores: ``(dist,)`` or ``(dist, pred)``;
``row_parts(r)`` (optional)
    the last round's phase 3 in bands of rows: ``(part, (start, stop))`` pairs, each a
    ``part`` that ``product`` takes and the matrix rows it finishes.

With ``deliver`` (a function of ``(start, stop)`` rows), an engine that defines
``row_parts`` runs its last round's phase 3 band by band and hands each band's rows, final
once its product is issued, to ``deliver``: the result goes home while the bands after it
still compute (on a GPU, ``deliver`` hands the band to a thread that copies it once its
kernel ends).  Earlier rounds finish no row: every round updates every cell.

With lookahead, round ``r``'s phase 3 first updates the tiles round ``r + 1`` pivots on,
then runs round ``r + 1``'s phases 1-2 and broadcast, and only then the rest, so the next
panels travel while the bulk of phase 3 runs.  A checkpoint taken after round ``r`` then
holds round ``r + 1``'s phases 1-2 too, and a run resumed from it starts with that round's
broadcast.

Stage timings: with a clock (:class:`WallClock`, or the GPU's CUDA-event clock), each
operation is timed under its stage name (:data:`STAGES`: "phase1", "phase2", "phase3",
"load", "broadcast", "store").
"""
from __future__ import annotations

import contextlib
import functools
import time

#: the parts of a round's phase 3 (``product(r, part)``)
ALL, NEXT, REST = "all", "next", "rest"

#: the stage name each operation is timed under
STAGES = {"load": "load", "close_pivot": "phase1", "update_panels": "phase2", "broadcast": "broadcast",
          "product": "phase3", "store": "store"}


class WallClock:
    """Marks in host seconds: exact where every operation returns with its work done."""

    @staticmethod
    def mark():
        return time.perf_counter()

    @staticmethod
    def seconds(a, b) -> float:
        return b - a


class Stages:
    """Intervals per stage name, measured by a clock (``mark()`` and ``seconds(a, b)``);
    without a clock nothing is measured."""

    def __init__(self, clock=None):
        self.clock = clock
        self.intervals: dict[str, list] = {}

    @contextlib.contextmanager
    def __call__(self, name):
        if self.clock is None:
            yield
            return
        a = self.clock.mark()
        yield
        self.intervals.setdefault(name, []).append((a, self.clock.mark()))

    def timings(self) -> dict[str, float]:
        """Seconds per stage name."""
        return {name: sum(self.clock.seconds(a, b) for a, b in spans) for name, spans in self.intervals.items()}


_NO_GUARD = contextlib.nullcontext()


def _skip(engine, *args):
    """An operation the engine does not define (the data movement is optional)."""


@functools.lru_cache(maxsize=None)
def _defined(cls) -> tuple:
    """The operations an engine class defines, as functions of (engine, *args), in
    :data:`STAGES` order (:func:`_skip` where it defines none): looked up once per class, as
    a missing attribute costs a raised and caught AttributeError each time."""
    return tuple(getattr(cls, op, None) or _skip for op in STAGES)


def _operations(engine, stages: Stages | None) -> tuple:
    """The engine's operations as functions of (engine, *args), each timed under its stage
    name when ``stages`` has a clock."""
    ops = _defined(type(engine))
    if stages is None or stages.clock is None:
        return ops
    return tuple(fn if fn is _skip else _timed(stages, stage, fn) for fn, stage in zip(ops, STAGES.values()))


def _timed(stages, stage, fn):
    def timed(engine, *args):
        with stages(stage):
            fn(engine, *args)
    return timed


def run(engine, *, lookahead=False, checkpointer=None, report=None, stages: Stages | None = None,
        deliver=None) -> int:
    """Every round of ``engine`` (see the module docstring); returns the round it started
    from (0, or where a resumed checkpoint left off)."""
    rounds = engine.rounds
    bands = getattr(engine, "row_parts", None) if deliver is not None else None
    start = 0 if checkpointer is None else checkpointer.restore(rounds, *engine.state())
    # looked up once per engine class: a small graph's whole run is one round of these calls
    load, close_pivot, update_panels, broadcast, product, store = _operations(engine, stages)

    def pivot(r, done=False):
        load(engine, r)
        if not done:
            close_pivot(engine, r)
            update_panels(engine, r)
        broadcast(engine, r)

    with checkpointer.stop_on_signals() if checkpointer is not None else _NO_GUARD:
        if start < rounds:
            pivot(start, done=lookahead and start > 0)
        for r in range(start, rounds):
            ahead = lookahead and r + 1 < rounds
            if ahead:
                product(engine, r, NEXT)
                pivot(r + 1)
                product(engine, r, REST)
            elif bands is not None and r + 1 == rounds:
                for part, rows in bands(r):
                    product(engine, r, part)
                    deliver(rows)
            else:
                product(engine, r, ALL)
            store(engine, r)
            if report is not None:
                report(r + 1, rounds)
            if checkpointer is not None:
                checkpointer.after_round(r + 1, rounds, *engine.state())
            if not ahead and r + 1 < rounds:
                pivot(r + 1)
    return start
