"""One worker process per GPU without an MPI launcher, kept for later runs, and the end of
the whole run on any failure.

``run_workers(target, args, workers)`` calls ``target(control, rank, *args)`` in each of
``workers`` worker processes, where ``control`` is a
:class:`floydwarp.multigpu.control.PipeControl`, and returns their results by rank.  The
workers are started once per process (the ``spawn`` start method: no CUDA state is
inherited) and wait for the next run when one is done (:class:`WorkerPool`): Python's and
CuPy's start-up, CUDA contexts and NCCL communicators (:func:`floydwarp.multigpu.nccl.grid_comms`)
are paid by the first run only.  The launcher (this process) is the hub of the control
plane: it answers every collective once all workers asked for it, and it watches them.

A run never hangs:

* a worker that raises sends its error and exits; a worker that dies (signal, crash,
  ``os._exit``) is seen through its process sentinel; either way the launcher stops
  every other worker (SIGTERM, then SIGKILL), forgets the pool (the next run starts a
  new one) and raises :class:`WorkerFailed` naming the worker;
* a collective that some worker has not reached ``timeout`` seconds after the first
  one did fails the run, naming the missing workers;
* a worker whose launcher is gone gets no answer (its pipe breaks) and exits.
"""
from __future__ import annotations

import atexit
import multiprocessing as mp
import os
import time
import traceback
from multiprocessing.connection import wait

from ..errors import DeviceError, FloydwarpError, InternalError
from .control import PipeControl, answer_collective

#: seconds all workers have to reach a collective after the first one did
DEFAULT_TIMEOUT = 600.0
#: seconds a stopped worker gets between SIGTERM and SIGKILL
STOP_GRACE = 5.0
#: seconds a worker waits for an answer beyond the launcher's timeout (then it gives up alone)
WORKER_EXTRA_WAIT = 30.0
#: how often the launcher looks at its workers when no message comes
POLL_SECONDS = 0.5
#: environment every worker starts with: NVLink multicast stays off (KINDS.md of the device)
WORKER_ENV = {"NCCL_NVLS_ENABLE": "0"}


class WorkerFailed(DeviceError):
    """A worker failed, died or stalled; the message names it.  ``rank`` is that worker."""

    def __init__(self, message, rank=None):
        super().__init__(message)
        self.rank = rank


#: what the current job asked to run once its reply is sent (:func:`after_reply`)
_AFTER_REPLY: list = []


def after_reply(fn) -> None:
    """In a worker: call ``fn()`` once the current job's reply is sent -- work that would only
    delay the reply (releasing what the job held).  A worker whose ``fn`` fails ends; the
    next run starts a new pool."""
    _AFTER_REPLY.append(fn)


def _worker_main(conn, rank, size):
    """Body of a worker process: run each job the launcher sends (``("job", target, args,
    timeout)``) and report its result, until told to quit or the launcher is gone."""
    for key, value in WORKER_ENV.items():
        os.environ.setdefault(key, value)
    while True:
        try:
            message = conn.recv()
        except (EOFError, OSError):
            break                           # the launcher is gone
        if message[0] != "job":
            break                           # "quit"
        _, target, args, timeout = message
        control = PipeControl(conn, rank, size, timeout)
        try:
            result = target(control, rank, *args)
        except BaseException as exc:  # noqa: BLE001 - every failure is reported to the launcher
            text = f"{type(exc).__name__}: {exc}"
            try:
                conn.send(("error", text, traceback.format_exc()))
            except (OSError, EOFError):
                pass
            conn.close()
            os._exit(1)          # skip atexit handlers (CUDA/NCCL teardown may block on a dead peer)
        conn.send(("done", result))
        try:
            while _AFTER_REPLY:
                _AFTER_REPLY.pop(0)()
        except BaseException:  # noqa: BLE001 - the reply is gone: end, the pool is not alive any more
            conn.close()
            os._exit(1)
    conn.close()
    os._exit(0)                  # nothing to tear down: the process ends with its peers


class _Hub:
    """The launcher's view of the workers: pipes, processes, the collective in progress."""

    def __init__(self, procs, conns, timeout):
        self.procs, self.conns, self.timeout = procs, conns, timeout
        self.results = {}
        self.pending = {}          # rank -> (seq, name, root, payload) of the collective being gathered
        self.first_arrival = None

    @property
    def size(self) -> int:
        return len(self.procs)

    def fail(self, message, rank=None):
        self.stop()
        raise WorkerFailed(message, rank)

    def stop(self):
        for p in self.procs:
            if p.is_alive():
                p.terminate()
        deadline = time.monotonic() + STOP_GRACE
        for p in self.procs:
            p.join(max(0.0, deadline - time.monotonic()))
            if p.is_alive():
                p.kill()
                p.join(STOP_GRACE)
        for c in self.conns:
            c.close()

    def receive(self, rank):
        conn = self.conns[rank]
        while conn.poll():
            try:
                msg = conn.recv()
            except (EOFError, OSError):
                return
            tag = msg[0]
            if tag == "done":
                self.results[rank] = msg[1]
            elif tag == "error":
                self.fail(f"worker {rank} (GPU {rank}, pid {self.procs[rank].pid}) failed: {msg[1]}", rank)
            elif tag == "collective":
                self.pending[rank] = msg[1:]
                if self.first_arrival is None:
                    self.first_arrival = time.monotonic()
                if len(self.pending) == self.size:
                    self.answer()

    def answer(self):
        requests = [self.pending[r] for r in range(self.size)]
        seq, name, root, _ = requests[0]
        for r, (s, nm, rt, _) in enumerate(requests):
            if (s, nm, rt) != (seq, name, root):
                self.fail(f"workers disagree on collective #{seq}: worker 0 called {name}, worker {r} called "
                          f"{nm} #{s}", r)
        try:
            replies = answer_collective(name, root, [req[3] for req in requests])
        except InternalError as exc:
            self.fail(f"collective {name} #{seq} failed: {exc}")
        for r, value in enumerate(replies):
            self.conns[r].send(("reply", seq, value))
        self.pending.clear()
        self.first_arrival = None

    def check_dead(self):
        for rank, p in enumerate(self.procs):
            if rank in self.results or p.is_alive():
                continue
            self.receive(rank)          # an error message it sent before dying comes first
            if rank not in self.results:
                self.fail(f"worker {rank} (GPU {rank}, pid {p.pid}) died with exit code {p.exitcode}", rank)

    def check_stalled(self):
        if self.first_arrival is not None and time.monotonic() - self.first_arrival > self.timeout:
            missing = [r for r in range(self.size) if r not in self.pending]
            seq, name = next(iter(self.pending.values()))[:2]
            self.fail(f"worker(s) {', '.join(map(str, missing))} did not reach collective {name} #{seq} within "
                      f"{self.timeout:g} s of the others", missing[0])

    def serve(self):
        self.results, self.pending, self.first_arrival = {}, {}, None
        while len(self.results) < self.size:
            live = [self.conns[r] for r in range(self.size) if r not in self.results]
            sentinels = [p.sentinel for r, p in enumerate(self.procs) if r not in self.results]
            ready = wait(live + sentinels, timeout=POLL_SECONDS)
            for rank in range(self.size):
                if self.conns[rank] in ready and rank not in self.results:
                    self.receive(rank)
            self.check_dead()
            self.check_stalled()
        return [self.results[r] for r in range(self.size)]


class WorkerPool:
    """``workers`` worker processes, started once; :meth:`run` gives each a job."""

    def __init__(self, workers: int):
        if workers < 1:
            raise FloydwarpError(f"need at least one worker, got {workers}")
        ctx = mp.get_context("spawn")
        for key, value in WORKER_ENV.items():
            os.environ.setdefault(key, value)      # spawned children copy this environment
        procs, conns = [], []
        self.hub = _Hub(procs, conns, DEFAULT_TIMEOUT)
        try:
            for rank in range(workers):
                here, there = ctx.Pipe(duplex=True)
                p = ctx.Process(target=_worker_main, args=(there, rank, workers), name=f"floydwarp-worker-{rank}",
                                daemon=True)
                p.start()
                there.close()
                procs.append(p)
                conns.append(here)
        except BaseException:
            self.hub.stop()
            raise

    @property
    def alive(self) -> bool:
        return all(p.is_alive() for p in self.hub.procs)

    def run(self, target, args=(), timeout: float = DEFAULT_TIMEOUT):
        """``target(control, rank, *args)`` on every worker; their results by rank.  On any
        failure the workers are stopped (this pool is done) and :class:`WorkerFailed` raised."""
        self.hub.timeout = float(timeout)
        try:
            # a worker waits longer than the launcher does: the launcher names the straggler first
            for conn in self.hub.conns:
                conn.send(("job", target, args, float(timeout) + WORKER_EXTRA_WAIT))
            return self.hub.serve()
        except BaseException:
            self.close()          # a failure, Ctrl-C or a launcher bug: no worker outlives the run
            raise

    def close(self):
        """Let the workers quit (a pool that failed is already stopped), stopping stragglers."""
        for conn in self.hub.conns:
            try:
                conn.send(("quit",))
            except (OSError, EOFError, ValueError):
                pass
        deadline = time.monotonic() + STOP_GRACE
        for p in self.hub.procs:
            p.join(max(0.0, deadline - time.monotonic()))
        self.hub.stop()


#: the pools of this process by worker count: kept between runs, stopped at exit
_POOLS: dict[int, WorkerPool] = {}


def pool(workers: int) -> WorkerPool:
    """This process's pool of ``workers`` workers, started on first use (or again after a failure)."""
    p = _POOLS.get(workers)
    if p is None or not p.alive:
        p = _POOLS[workers] = WorkerPool(workers)
    return p


def started(workers: int) -> bool:
    """Whether this process has a live pool of ``workers`` workers (a run finds them ready)."""
    p = _POOLS.get(workers)
    return p is not None and p.alive


def close_pools() -> None:
    while _POOLS:
        _POOLS.popitem()[1].close()


atexit.register(close_pools)


def run_workers(target, args=(), workers: int = 1, *, timeout: float = DEFAULT_TIMEOUT):
    """Run ``target(control, rank, *args)`` in the ``workers`` worker processes of this
    process's pool; the list of their return values by rank.  ``target`` and ``args`` must
    be picklable (a module-level function).  Raises :class:`WorkerFailed` naming the worker
    that failed."""
    p = pool(workers)
    try:
        return p.run(target, args, timeout)
    except BaseException:
        _POOLS.pop(workers, None)
        raise
