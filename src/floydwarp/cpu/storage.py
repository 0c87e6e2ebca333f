"""Where the cpu algorithms keep their matrices: RAM, or memory-mapped ``.npy`` files in a work
folder (``workdir=DIR``) when they do not fit (the OS then streams them between disk and
memory as the kernels touch them); and how much memory there is."""
from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from ..errors import FloydwarpError

#: bytes below which the memory check is skipped (it reads /proc)
SURELY_FITS = 64 << 20


def available_memory() -> int | None:
    """Bytes of memory available now (MemAvailable), or None where it cannot be read."""
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


class Storage:
    """The arrays of one cpu run: tiles (the blocked engine's, removed afterwards) and results."""

    def __init__(self, workdir=None):
        self.workdir = None if workdir is None else Path(workdir)
        self._tile_files = []
        self.metadata = {} if workdir is None else {"workdir": str(self.workdir)}

    @classmethod
    def for_plan(cls, plan, need: int) -> "Storage":
        """RAM when the run's ``need`` bytes fit (else an error naming ``workdir``), or the
        plan's ``workdir``."""
        workdir = plan.options.get("workdir")
        if workdir is None:
            have = available_memory() if need > SURELY_FITS else None
            if have is not None and need > have:
                raise FloydwarpError(
                    f"the cpu backend needs {need:,} bytes of memory for n = {plan.n} "
                    f"({np.dtype(plan.dtype).name}{' with predecessors' if plan.predecessors else ''}) "
                    f"and {have:,} are available; pass workdir=DIR (--workdir DIR) to keep the matrix "
                    f"in memory-mapped files there, or choose a narrower dtype")
            return _RAM
        folder = Path(workdir)
        if not folder.is_dir():
            raise FloydwarpError(f"workdir {folder} is not a folder")
        return cls(folder)

    def tiles(self, shape, dtype):
        if self.workdir is None:
            return np.empty(shape, dtype)
        path = self.workdir / f"floydwarp-tiles-{os.getpid()}-{len(self._tile_files)}.npy"
        self._tile_files.append(path)
        return np.lib.format.open_memmap(path, mode="w+", dtype=dtype, shape=shape)

    def result(self, shape, dtype, name):
        """A result array: new, or the work folder's ``NAME.npy``."""
        if self.workdir is None:
            return np.empty(shape, dtype)
        return np.lib.format.open_memmap(self.workdir / f"{name}.npy", mode="w+", dtype=dtype, shape=shape)

    def release_tiles(self):
        for path in self._tile_files:
            path.unlink(missing_ok=True)


#: RAM holds no state of a run (its arrays are the run's own): one Storage serves every run
_RAM = Storage()
