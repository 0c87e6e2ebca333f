"""Checkpoints: a run's matrix and the round it reached, saved so that it survives being killed.

Layout of a checkpoint folder::

    manifest.json                     what the shards are, signed (format below)
    shard-<rank>.r<round>.<name>.npy  one file per rank and array (dist, pred): the state after round - 1
    run.json                          the CLI's settings of the run (``floydwarp solve --resume``)

``manifest.json`` (format version 2) is one JSON object::

    version      2
    n, dtype, block, backend, algorithm, predecessors, processes, graph (a SHA-256 of the edges),
    and engine facts (lookahead, out_of_core)    the run it belongs to
    rounds       the run's number of rounds
    round        the round to start from: 1 .. rounds - 1
    shards       {"<rank>": {"<name>": {"file", "bytes", "crc32", "shape", "dtype"}}} for every rank
                 0 .. processes - 1 and exactly the run's arrays (dist; pred with predecessors)
    saved_at     seconds since the epoch
    sha256       SHA-256 of the canonical JSON (sorted keys, no spaces) of every other field

A save writes and fsyncs the new shards first, then replaces ``manifest.json``
atomically (temporary file, fsync, rename), and only then deletes the shards
of the previous save.  A process killed at any moment -- mid-shard, mid-manifest
-- leaves either the old manifest with its old shards or the new manifest with
its new shards: never a corrupt checkpoint, and at most one interval lost.

A resume trusts no round until the checkpoint proves it belongs together and to this run
(:meth:`Checkpointer.restore`); anything else is refused with a :class:`CheckpointError`
naming the problem (CLI exit status 2), on every rank of an MPI run at once:

1. ``manifest.json`` is there, is JSON, and is an object;
2. its ``version`` is this format's, and its ``sha256`` matches its other fields (an edited
   manifest -- a round, a deleted key -- is refused whole);
3. n, dtype, block, backend, algorithm, predecessors, processes, graph fingerprint and the
   engine facts equal this run's, and ``rounds`` equals its number of rounds;
4. ``round`` is an integer in 1 .. rounds - 1;
5. ``shards`` names every rank and, for each, exactly this run's arrays, each in its file
   ``shard-<rank>.r<round>.<name>.npy`` (the round in the name is the manifest's);
6. each of this rank's shard files has the recorded size and CRC32, and is a ``.npy`` whose
   dtype and shape are the recorded ones and those of the run's array (n and dtype).

SIGTERM (what batch schedulers send) and Ctrl-C do not kill a run that
checkpoints: the run finishes its round, saves, and stops with
:class:`CheckpointInterrupt`.  From :func:`stop_on_signals` on (``solve()`` enters it as a
checkpointed run starts, the CLI before it writes ``run.json``), a signal before the first
round is the same: the run stops after the first round, saved.
"""
from __future__ import annotations

import contextlib
import hashlib
import json
import os
import signal
import threading
import time
import zlib
from pathlib import Path

import numpy as np

from .errors import CheckpointError, CheckpointInterrupt

FORMAT_VERSION = 2
MANIFEST = "manifest.json"

#: set by SIGTERM / SIGINT inside :func:`stop_on_signals`: the run saves and stops after its round
_STOP = threading.Event()
_guarding = threading.local()


def graph_fingerprint(graph) -> str:
    """A digest of the graph's edges: a checkpoint resumes only the graph it was made from."""
    h = hashlib.sha256(f"n={graph.n}".encode())
    for a in graph.edges():
        h.update(np.ascontiguousarray(a).tobytes())
    return h.hexdigest()[:32]


def manifest_digest(manifest: dict) -> str:
    """The SHA-256 a manifest carries: of its canonical JSON without the ``sha256`` field."""
    body = {k: v for k, v in manifest.items() if k != "sha256"}
    return hashlib.sha256(json.dumps(body, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def _crc32(path: Path) -> int:
    crc = 0
    with open(path, "rb") as fh:
        while chunk := fh.read(1 << 24):
            crc = zlib.crc32(chunk, crc)
    return crc


def _fsync_dir(folder: Path):
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def shard_name(rank: int, next_round: int, name: str) -> str:
    return f"shard-{rank}.r{next_round}.{name}.npy"


class Checkpointer:
    """Saves and restores one run's state at round boundaries.

    ``identity`` holds what must match to resume (n, dtype, block, algorithm,
    graph fingerprint, process count); ``comm`` (MPI) makes every rank save its
    own shard at the same round, rank 0 writing the manifest.
    """

    def __init__(self, folder, identity: dict, *, every: float | None = None, comm=None, resuming=False):
        self.folder = Path(folder)
        #: start from the folder's checkpoint (``resume=DIR``) rather than from scratch
        self.resuming = resuming
        self.identity = dict(identity, version=FORMAT_VERSION)
        self.every = every
        self.comm = comm
        self.rank = 0 if comm is None else comm.Get_rank()
        self.last_save = time.monotonic()

    # ------------------------------------------------------------------ resume
    def restore(self, rounds: int, dist, pred=None) -> int:
        """The round to start from: 0 for a fresh run; when resuming, the saved round, with
        the saved matrices copied into ``dist`` (and ``pred``) once the checkpoint has passed
        every check of the module docstring (a :class:`CheckpointError` otherwise, on every rank)."""
        if not self.resuming:
            return 0
        arrays = {"dist": dist} if pred is None else {"dist": dist, "pred": pred}
        try:
            start, problem = self._load(rounds, arrays), None
        except CheckpointError as exc:
            start, problem = 0, str(exc)
        if self.comm is not None:       # every rank refuses, or none: no rank waits in a collective alone
            failed = [(rank, p) for rank, p in enumerate(self.comm.allgather(problem)) if p]
            if failed:
                rank, problem = failed[0]
                problem = problem if rank == self.rank else f"rank {rank}: {problem}"
        if problem:
            raise CheckpointError(problem)
        return start

    def _refuse(self, what: str):
        raise CheckpointError(f"checkpoint {self.folder}: {what}; refusing to resume")

    def _manifest(self) -> dict:
        """Checks 1 and 2: the manifest as written, unedited."""
        path = self.folder / MANIFEST
        if not path.exists():
            raise CheckpointError(f"no checkpoint to resume in {self.folder} (no {MANIFEST})")
        try:
            manifest = json.loads(path.read_text())
        except (OSError, ValueError) as exc:
            self._refuse(f"{MANIFEST} is unreadable ({exc})")
        if not isinstance(manifest, dict):
            self._refuse(f"{MANIFEST} is a JSON {type(manifest).__name__}, not an object")
        if manifest.get("version") != FORMAT_VERSION:
            self._refuse(f"{MANIFEST} is of another floydwarp checkpoint format (version {manifest.get('version')!r}, "
                         f"this floydwarp reads version {FORMAT_VERSION})")
        if manifest.get("sha256") != manifest_digest(manifest):
            self._refuse(f"{MANIFEST} was changed after it was written (its sha256 does not match its contents)")
        return manifest

    def _load(self, rounds: int, arrays: dict) -> int:
        """Checks 1 to 6 of the module docstring, then this rank's shards into ``arrays``."""
        manifest = self._manifest()
        what = {"graph": "another graph", "dtype": "another dtype"}
        for key, want in {**self.identity, "rounds": rounds}.items():
            have = manifest.get(key)
            if have != want:
                self._refuse(f"it is from {what.get(key, f'a run with {key}={have!r}')} "
                             f"({key}: checkpoint has {have!r}, this run has {want!r})")
        start = manifest.get("round")
        if type(start) is not int or not 1 <= start < rounds:
            self._refuse(f"its round {start!r} is not a round this run of {rounds} rounds can start from "
                         f"(an integer 1 .. {rounds - 1})")
        shards = manifest.get("shards")
        ranks = [str(r) for r in range(self.identity["processes"])]
        if not isinstance(shards, dict) or sorted(shards) != sorted(ranks):
            self._refuse(f"its shards {_keys(shards)} are not those of ranks {', '.join(ranks)}")
        for rank in ranks:
            entries = shards[rank]
            if not isinstance(entries, dict) or sorted(entries) != sorted(arrays):
                self._refuse(f"rank {rank}'s shards {_keys(entries)} are not this run's arrays {sorted(arrays)}")
            for name, entry in entries.items():
                want = shard_name(int(rank), start, name)
                if not isinstance(entry, dict) or entry.get("file") != want:
                    self._refuse(f"rank {rank}'s {name} shard is not the file {want} of round {start}")
        for name, target in arrays.items():
            self._read_shard(shards[str(self.rank)][name], target)
        return start

    def _read_shard(self, entry: dict, target):
        """Check 6 for one shard, then its array copied into ``target``."""
        path = self.folder / entry["file"]
        if not path.is_file() or path.stat().st_size != entry.get("bytes"):
            self._refuse(f"shard {path.name} is missing or has the wrong size")
        if _crc32(path) != entry.get("crc32"):
            self._refuse(f"shard {path.name} is corrupt (CRC32 mismatch)")
        try:
            saved = np.load(path, mmap_mode="r", allow_pickle=False)
        except (OSError, ValueError) as exc:
            self._refuse(f"shard {path.name} is not a .npy array ({exc})")
        recorded = (entry.get("dtype"), entry.get("shape"))
        if (saved.dtype.name, list(saved.shape)) != recorded or saved.dtype != target.dtype \
                or saved.shape != target.shape:
            self._refuse(f"shard {path.name} holds a {saved.dtype.name} array of shape {saved.shape} (recorded: "
                         f"{recorded[0]} {recorded[1]}); this run's is {target.dtype.name} {target.shape}")
        target[...] = saved

    # ------------------------------------------------------------------ save
    def after_round(self, next_round: int, total_rounds: int, dist, pred=None):
        """Call at the end of every round: saves when the interval is up or a stop was asked."""
        if next_round >= total_rounds:
            return
        due = self.every is not None and time.monotonic() - self.last_save >= self.every
        stop = _STOP.is_set()
        if self.comm is not None:      # every rank saves at the same round
            from mpi4py import MPI

            flags = self.comm.allreduce(int(due) | int(stop) << 1, op=MPI.BOR)
            due, stop = bool(flags & 1), bool(flags & 2)
        if due or stop:
            self.save(next_round, total_rounds, {"dist": dist} if pred is None else {"dist": dist, "pred": pred})
        if stop:
            raise CheckpointInterrupt(
                f"stopped by a signal after round {next_round} of {total_rounds}; checkpoint saved in "
                f"{self.folder}: resume with --resume {self.folder}")

    def save(self, next_round: int, total_rounds: int, arrays: dict):
        self.folder.mkdir(parents=True, exist_ok=True)
        shard = {}
        for name, array in arrays.items():
            array = np.asarray(array)
            path = self.folder / shard_name(self.rank, next_round, name)
            with open(path, "wb") as fh:
                np.save(fh, array)
                fh.flush()
                os.fsync(fh.fileno())
            shard[name] = {"file": path.name, "bytes": path.stat().st_size, "crc32": _crc32(path),
                           "shape": list(array.shape), "dtype": array.dtype.name}
        shards = {str(self.rank): shard} if self.comm is None else _merge(self.comm.gather(shard, root=0))
        if self.rank == 0:
            _fsync_dir(self.folder)
            manifest = dict(self.identity, rounds=total_rounds, round=next_round, shards=shards, saved_at=time.time())
            manifest["sha256"] = manifest_digest(manifest)
            from .io.atomic import atomic_path   # the io package imports every file format: only here

            with atomic_path(self.folder / MANIFEST) as tmp:
                tmp.write_text(json.dumps(manifest, indent=1))
            _fsync_dir(self.folder)
        if self.comm is not None:
            self.comm.Barrier()        # the manifest names the new shards before old ones go
        for old in self.folder.glob(f"shard-{self.rank}.r*.npy"):
            if not old.name.startswith(f"shard-{self.rank}.r{next_round}."):
                old.unlink()
        self.last_save = time.monotonic()

    # ------------------------------------------------------------------ signals
    @staticmethod
    def stop_on_signals():
        return stop_on_signals()


def _keys(value) -> str:
    return repr(sorted(value)) if isinstance(value, dict) else f"(a JSON {type(value).__name__})"


@contextlib.contextmanager
def stop_on_signals():
    """SIGTERM and SIGINT ask the run to save and stop at the end of its next round (nested
    uses keep the outermost's handlers; outside the main thread, signals are not this one's)."""
    if threading.current_thread() is not threading.main_thread() or getattr(_guarding, "on", False):
        yield
        return
    previous = {sig: signal.getsignal(sig) for sig in (signal.SIGTERM, signal.SIGINT)}

    def handler(signum, frame):
        _STOP.set()

    _STOP.clear()
    for sig in previous:
        signal.signal(sig, handler)
    _guarding.on = True
    try:
        yield
    finally:
        _guarding.on = False
        for sig, old in previous.items():
            signal.signal(sig, old)


def _merge(parts):
    """Rank 0's view of every rank's shard entries (None on other ranks)."""
    return None if parts is None else {str(rank): shard for rank, shard in enumerate(parts)}


def requested(plan) -> bool:
    """Whether the plan asks to checkpoint (``checkpoint=DIR``) or to resume (``resume=DIR``)."""
    return bool(plan.options.get("checkpoint") or plan.options.get("resume"))


#: the folder, inside a run's, where its float64 rerun saves (the solver reruns an integer run
#: that met a negative cycle in float64; the rerun's identity differs, so the run's own folder
#: would refuse it)
FLOAT64_RERUN = "float64"


def rerun_options(options: dict) -> dict:
    """The options of a checkpointed run's float64 rerun: it saves in ``DIR/float64``, and a
    resumed run resumes it there where it had saved (:func:`rerun_saved`)."""
    folder = options.get("checkpoint") or options.get("resume")
    if not folder:
        return options
    own = Path(folder) / FLOAT64_RERUN
    return {**options, "checkpoint": own, "resume": own if rerun_saved(options) else None}


def rerun_saved(options: dict) -> bool:
    """Whether a resumed run had stopped in its float64 rerun: the integer run had ended, so the
    resume goes on with the rerun, which starts from the graph (the integer run's own save, if
    it made one, is not needed)."""
    resume = options.get("resume")
    return bool(resume) and (Path(resume) / FLOAT64_RERUN / MANIFEST).exists()


def saved(folder) -> bool:
    """Whether ``folder`` holds a saved round to resume from: the run's, or its rerun's."""
    return any((Path(folder) / sub / MANIFEST).exists() for sub in ("", FLOAT64_RERUN))


def from_plan(plan, graph, *, block: int, comm=None, extra=None) -> Checkpointer | None:
    """The checkpointer a plan asks for (``checkpoint=DIR`` or ``resume=DIR``), or None.

    ``extra`` adds engine facts that must match to resume (e.g. lookahead on or off).
    """
    if not requested(plan):
        return None
    folder = plan.options.get("checkpoint") or plan.options.get("resume")
    identity = {"n": plan.n, "dtype": np.dtype(plan.dtype).name, "block": int(block),
                "backend": plan.backend, "algorithm": plan.algorithm, "predecessors": bool(plan.predecessors),
                "processes": 1 if comm is None else comm.Get_size(), "graph": graph_fingerprint(graph),
                **(extra or {})}
    return Checkpointer(folder, identity, every=plan.options.get("checkpoint_every"), comm=comm,
                        resuming=bool(plan.options.get("resume")))
