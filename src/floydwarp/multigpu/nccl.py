"""NCCL for the multi-GPU engines: loading the library, one communicator per process row
and column, and in-place broadcasts of device arrays.

Unique ids are made on rank 0 and travel over the control plane (host data only).
"""
from __future__ import annotations

import os

from ..errors import FloydwarpError
from .control import Control
from ..grid import ProcessGrid


def _preload_wheel_nccl() -> bool:
    """Load libnccl from the nvidia-nccl-cu12/-cu13 wheel (where pip put it, off the loader's
    path) so that CuPy's bindings find it; True when one was loaded."""
    import ctypes
    import glob

    try:
        import nvidia.nccl as wheel
    except ImportError:
        return False
    for folder in getattr(wheel, "__path__", []):
        for lib in sorted(glob.glob(os.path.join(folder, "lib", "libnccl.so*"))):
            try:
                ctypes.CDLL(lib, mode=ctypes.RTLD_GLOBAL)
                return True
            except OSError:
                continue
    return False


def probe() -> str | None:
    """None when CuPy's NCCL bindings load here, else why not."""
    try:
        from cupy.cuda import nccl
        if not getattr(nccl, "available", True) and _preload_wheel_nccl():
            import importlib

            nccl = importlib.reload(nccl)
    except ImportError:
        if not _preload_wheel_nccl():
            return ("CuPy's NCCL bindings cannot be imported and no NCCL wheel is installed "
                    "(pip install nvidia-nccl-cu12)")
        try:
            from cupy.cuda import nccl
        except Exception as exc:  # noqa: BLE001
            return f"CuPy's NCCL bindings cannot be imported ({type(exc).__name__}: {exc})"
    except Exception as exc:  # noqa: BLE001 - any import problem means "not usable"
        return f"CuPy's NCCL bindings cannot be imported ({type(exc).__name__}: {exc})"
    if not getattr(nccl, "available", True):
        return "CuPy was built without NCCL (pip install nvidia-nccl-cu12 / -cu13 next to CuPy)"
    return None


#: the CTAs (channels) NCCL may use per communicator, unless the user chose (NCCL_MAX_CTAS, or
#: NCCL_MAX_NCHANNELS before NCCL 2.17).  Creating a communicator and its first collective, which
#: connects every channel, cost about 0.06 s a channel: 2.3 s with NCCL's own choice on two H200s,
#: 1.1-1.3 s with 8.  Eight channels still carry 260 GB/s (against 330), more than the panels
#: need: under ``mpiexec -n 2 ... -a gpu-2d`` the setup fell from 1.24-1.39 s to 0.66-0.79 s and
#: the rounds' compute and comm stayed the same (bench/results/mpi-nccl-h200x2-s15/).
MAX_CTAS = 8


def apply_settings(version: int, environ=os.environ):
    """NCCL's settings for the panel broadcasts, where the user set none: NVLink multicast (NVLS)
    off, and at most MAX_CTAS channels (named as NCCL ``version``, e.g. 22803, reads it).  They
    must be set before NCCL's first communicator."""
    environ.setdefault("NCCL_NVLS_ENABLE", "0")
    if "NCCL_MAX_CTAS" not in environ and "NCCL_MAX_NCHANNELS" not in environ:
        environ["NCCL_MAX_CTAS" if version >= 21700 else "NCCL_MAX_NCHANNELS"] = str(MAX_CTAS)


class GridComms:
    """NCCL communicators of one process: its process row and its process column.

    Unique ids are made on rank 0 and travel over the control plane (host data only)."""

    def __init__(self, control: Control, grid: ProcessGrid):
        reason = probe()
        if reason:
            raise FloydwarpError(f"the multi-GPU engines move panels through NCCL: {reason}")
        from cupy.cuda import nccl

        apply_settings(nccl.get_version())

        ids = None
        if control.rank == 0:
            ids = {"rows": [nccl.get_unique_id() if grid.cols > 1 else None for _ in range(grid.rows)],
                   "cols": [nccl.get_unique_id() if grid.rows > 1 else None for _ in range(grid.cols)]}
        ids = control.bcast(ids, root=0)
        # every process creates its row communicator first, then its column one: no cycle of waits
        self.row = nccl.NcclCommunicator(grid.cols, ids["rows"][grid.my_row], grid.my_col) if grid.cols > 1 else None
        self.col = nccl.NcclCommunicator(grid.rows, ids["cols"][grid.my_col], grid.my_row) if grid.rows > 1 else None

    def close(self):
        for comm in (self.row, self.col):
            if comm is not None:
                comm.destroy()
        self.row = self.col = None


#: this process's communicators by grid: made once, reused by later runs on the same grid
#: (an MPI job's later solves; NCCL's setup is a second or two)
_COMMS: dict = {}


def grid_comms(control: Control, grid: ProcessGrid) -> GridComms:
    """This process's communicators for ``grid``, made on first use (collectively: every
    process of a run asks for the same grid at the same point)."""
    key = (grid.rows, grid.cols, grid.rank)
    comms = _COMMS.get(key)
    if comms is None:
        comms = _COMMS[key] = GridComms(control, grid)
    return comms


def drop_comms(grid: ProcessGrid) -> None:
    """Forget (and destroy) the communicators of ``grid``: a run on them broke off."""
    comms = _COMMS.pop((grid.rows, grid.cols, grid.rank), None)
    if comms is not None:
        try:
            comms.close()
        except Exception:  # noqa: BLE001 - a broken communicator may not even destroy cleanly
            pass


def bcast(comm, array, root: int, stream):
    """Broadcast a contiguous device array in place (bytes, so every dtype goes)."""
    from cupy.cuda import nccl

    if comm is None or array.size == 0:
        return
    if not array.flags.c_contiguous:
        raise FloydwarpError("NCCL broadcasts need contiguous buffers")
    comm.bcast(array.data.ptr, array.nbytes, nccl.NCCL_INT8, root, stream.ptr)
