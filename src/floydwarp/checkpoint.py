"""Checkpoints: a run's matrix and the round it reached, saved so that it survives being killed.

Layout of a checkpoint folder::

    manifest.json                 n, dtype, block, round, graph fingerprint, version, shards + CRC32s
    shard-<rank>.r<round>.<name>.npy  one file per rank and array (dist, pred)

A save writes and fsyncs the new shards first, then replaces ``manifest.json``
atomically (temporary file, fsync, rename), and only then deletes the shards
of the previous save.  A process killed at any moment -- mid-shard, mid-manifest
-- leaves either the old manifest with its old shards or the new manifest with
its new shards: never a corrupt checkpoint, and at most one interval lost.

SIGTERM (what batch schedulers send) and Ctrl-C do not kill a run that
checkpoints: the run finishes its round, saves, and stops with
:class:`CheckpointInterrupt`.
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

from .errors import CheckpointInterrupt, FloydwarpError

FORMAT_VERSION = 1

def graph_fingerprint(graph) -> str:
    """A digest of the graph's edges: a checkpoint resumes only the graph it was made from."""
    h = hashlib.sha256(f"n={graph.n}".encode())
    for a in graph.edges():
        h.update(np.ascontiguousarray(a).tobytes())
    return h.hexdigest()[:32]


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
        self._stop = threading.Event()

    # ------------------------------------------------------------------ resume
    def restore(self, dist, pred=None) -> int:
        """The round to start from: 0 for a fresh run; when resuming, the saved round,
        with the saved matrices copied into ``dist`` (and ``pred``)."""
        if not self.resuming:
            return 0
        start, arrays = self.load()
        dist[...] = arrays["dist"]
        if pred is not None:
            pred[...] = arrays["pred"]
        return start

    def load(self) -> tuple[int, dict]:
        """(next round, arrays of this rank) from the folder's checkpoint."""
        manifest_path = self.folder / "manifest.json"
        if not manifest_path.exists():
            raise FloydwarpError(f"no checkpoint to resume in {self.folder} (no manifest.json)")
        try:
            manifest = json.loads(manifest_path.read_text())
        except (OSError, ValueError) as exc:
            raise FloydwarpError(f"{manifest_path}: unreadable checkpoint manifest ({exc})") from exc
        for key, want in self.identity.items():
            have = manifest.get(key)
            if have != want:
                what = {"graph": "another graph", "dtype": "another dtype",
                        "version": "another floydwarp checkpoint format"}
                raise FloydwarpError(
                    f"checkpoint {self.folder} is from {what.get(key, f'a run with {key}={have!r}')} "
                    f"({key}: checkpoint has {have!r}, this run has {want!r}); refusing to resume")
        arrays = {}
        for name, entry in manifest["shards"][str(self.rank)].items():
            path = self.folder / entry["file"]
            if not path.exists() or _crc32(path) != entry["crc32"]:
                raise FloydwarpError(f"checkpoint shard {path} is missing or corrupt (CRC32 mismatch)")
            arrays[name] = np.load(path)
        return int(manifest["round"]), arrays

    # ------------------------------------------------------------------ save
    def after_round(self, next_round: int, total_rounds: int, dist, pred=None):
        """Call at the end of every round: saves when the interval is up or a stop was asked."""
        if next_round >= total_rounds:
            return
        due = self.every is not None and time.monotonic() - self.last_save >= self.every
        stop = self._stop.is_set()
        if self.comm is not None:      # every rank saves at the same round
            from mpi4py import MPI

            flags = self.comm.allreduce(int(due) | int(stop) << 1, op=MPI.BOR)
            due, stop = bool(flags & 1), bool(flags & 2)
        if due or stop:
            self.save(next_round, {"dist": dist} if pred is None else {"dist": dist, "pred": pred})
        if stop:
            raise CheckpointInterrupt(
                f"stopped by a signal after round {next_round} of {total_rounds}; checkpoint saved in "
                f"{self.folder}: resume with --resume {self.folder}")

    def save(self, next_round: int, arrays: dict):
        self.folder.mkdir(parents=True, exist_ok=True)
        shard = {}
        for name, array in arrays.items():
            path = self.folder / f"shard-{self.rank}.r{next_round}.{name}.npy"
            with open(path, "wb") as fh:
                np.save(fh, np.asarray(array))
                fh.flush()
                os.fsync(fh.fileno())
            shard[name] = {"file": path.name, "crc32": _crc32(path)}
        shards = {str(self.rank): shard} if self.comm is None else _merge(self.comm.gather(shard, root=0))
        if self.rank == 0:
            _fsync_dir(self.folder)
            manifest = dict(self.identity, round=next_round, shards=shards, saved_at=time.time())
            from .io.atomic import atomic_path   # the io package imports every file format: only here

            with atomic_path(self.folder / "manifest.json") as tmp:
                tmp.write_text(json.dumps(manifest, indent=1))
            _fsync_dir(self.folder)
        if self.comm is not None:
            self.comm.Barrier()        # the manifest names the new shards before old ones go
        for old in self.folder.glob(f"shard-{self.rank}.r*.npy"):
            if not old.name.startswith(f"shard-{self.rank}.r{next_round}."):
                old.unlink()
        self.last_save = time.monotonic()

    # ------------------------------------------------------------------ signals
    @contextlib.contextmanager
    def stop_on_signals(self):
        """SIGTERM and SIGINT ask the run to save and stop at the end of the round."""
        if threading.current_thread() is not threading.main_thread():
            yield
            return
        previous = {sig: signal.getsignal(sig) for sig in (signal.SIGTERM, signal.SIGINT)}

        def handler(signum, frame):
            self._stop.set()

        for sig in previous:
            signal.signal(sig, handler)
        try:
            yield
        finally:
            for sig, old in previous.items():
                signal.signal(sig, old)


def _merge(parts):
    """Rank 0's view of every rank's shard entries (None on other ranks)."""
    return None if parts is None else {str(rank): shard for rank, shard in enumerate(parts)}


def requested(plan) -> bool:
    """Whether the plan asks to checkpoint (``checkpoint=DIR``) or to resume (``resume=DIR``)."""
    return bool(plan.options.get("checkpoint") or plan.options.get("resume"))


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
