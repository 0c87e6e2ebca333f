"""Atomic file writes: write a temporary file beside the target, fsync, rename.

A reader never sees a half-written file, a crash leaves the old file (or
nothing) in place, and a run never overwrites its own input.
"""
from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path

from ..errors import FloydwarpError


@contextlib.contextmanager
def atomic_path(target, *, inputs=()):
    """Yield a temporary path in the target's folder; rename it onto ``target`` on success.

    ``inputs`` are files this run read: writing onto one of them is refused.
    """
    target = check_writable(target, inputs=inputs)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    os.close(fd)
    try:
        yield Path(tmp)
        with open(tmp, "rb+") as fh:
            os.fsync(fh.fileno())
        os.chmod(tmp, 0o666 & ~_umask())       # mkstemp makes 0600; outputs get the usual mode
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def check_writable(target, *, inputs=()) -> Path:
    """Refuse a target :func:`atomic_path` could not write -- one of the ``inputs``, a folder, a
    file in a folder that does not exist or is not writable -- with the error it would raise;
    callers check before any work (``floydwarp solve -o``), atomic_path again when it writes."""
    target = Path(target)
    for src in inputs:
        if src is not None and Path(src).exists() and target.exists() and target.resolve() == Path(src).resolve():
            raise FloydwarpError(f"refusing to overwrite the input file {src}; choose another output path")
    folder = target.parent if str(target.parent) else Path(".")
    if not folder.is_dir():
        raise FloydwarpError(f"cannot write {target}: folder {folder} does not exist")
    if target.is_dir():
        raise FloydwarpError(f"cannot write {target}: it is a folder")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise FloydwarpError(f"cannot write {target}: folder {folder} is not writable")
    return target


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
