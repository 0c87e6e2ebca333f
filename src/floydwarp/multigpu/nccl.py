"""NCCL for the multi-GPU engines: loading the library, one communicator per process row
and column, and in-place broadcasts of device arrays.

Unique ids are made on rank 0 and travel over the control plane (host data only).
"""
from __future__ import annotations

import os
import threading

from ..errors import FloydwarpError
from .control import Control
from ..grid import ProcessGrid


def _wheel_library():
    """libnccl from the nvidia-nccl-cu12/-cu13 wheel (where pip put it, off the loader's path),
    loaded so that CuPy's bindings find it; None where no wheel has one that loads."""
    import ctypes
    import glob

    try:
        import nvidia.nccl as wheel
    except ImportError:
        return None
    for folder in getattr(wheel, "__path__", []):
        for lib in sorted(glob.glob(os.path.join(folder, "lib", "libnccl.so*"))):
            try:
                return ctypes.CDLL(lib, mode=ctypes.RTLD_GLOBAL)
            except OSError:
                continue
    return None


def probe() -> str | None:
    """None when CuPy's NCCL bindings load here, else why not."""
    try:
        from cupy.cuda import nccl
        if not getattr(nccl, "available", True) and _wheel_library() is not None:
            import importlib

            nccl = importlib.reload(nccl)
    except ImportError:
        if _wheel_library() is None:
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


#: NCCL's memory through legacy CUDA IPC rather than cuMem handles ("0"), unless the user chose.
#: Under ``mpiexec -n 4`` on four H200s (NCCL 2.28.9) a new communicator's first broadcast, which
#: connects its channels, took 0.23 s with cuMem and 0.01 s without, and destroying the row and
#: column communicators 0.85 s against 0.42 s; the broadcasts after were as fast
#: (bench/results/mpi-start-h200x4-s17/).  NVLS, which needs cuMem, is off anyway.
CUMEM = "0"


def apply_settings(version: int, environ=os.environ):
    """NCCL's settings for the panel broadcasts, where the user set none: NVLink multicast (NVLS)
    off, legacy IPC (:data:`CUMEM`) and at most MAX_CTAS channels (named as NCCL ``version``,
    e.g. 22803, reads it).  They must be set before NCCL's first communicator."""
    environ.setdefault("NCCL_NVLS_ENABLE", "0")
    environ.setdefault("NCCL_CUMEM_ENABLE", CUMEM)
    if "NCCL_MAX_CTAS" not in environ and "NCCL_MAX_NCHANNELS" not in environ:
        environ["NCCL_MAX_CTAS" if version >= 21700 else "NCCL_MAX_NCHANNELS"] = str(MAX_CTAS)


#: the thread of :func:`begin`, if one was started: every communicator waits for it
_STARTED: list = []
#: the one-GPU communicator :func:`begin` made, kept for the process's life: destroying it would
#: cost its time again at the end, and what it loaded serves every later communicator
_KEPT: list = []


def begin(ordinal: int) -> threading.Thread:
    """NCCL's start in this process, in a thread of its own, ahead of its first real
    communicator: the library loaded and a communicator of one GPU (``ordinal``) made, which
    loads NCCL's kernels into the GPU's context and sets up what every later communicator of the
    process shares.  That was 0.55-0.6 s of the first of an MPI rank's communicators, against
    0.03-0.07 s for its second ("kernels 0.27-0.41, alloc 0.07-0.12" in NCCL's init timings on
    four H200s), paid while the GPUs waited.  Begun before the command line is parsed
    (:func:`floydwarp.launch.start_named_gpus`), it runs while the interpreter imports CuPy:
    ctypes releases the GIL.  Nothing here fails: without NCCL (or a GPU) the thread ends, and
    :class:`GridComms` meets the problem with its own message."""
    thread = threading.Thread(target=_one_gpu_communicator, args=(ordinal,), name="floydwarp-nccl-start",
                              daemon=True)
    _STARTED.append(thread)
    thread.start()
    return thread


def _one_gpu_communicator(ordinal: int) -> None:
    import ctypes

    try:
        lib = ctypes.CDLL("libnccl.so.2", mode=ctypes.RTLD_GLOBAL)    # the soname CuPy's bindings link
    except OSError:
        lib = _wheel_library()
        if lib is None:
            return
    try:
        version, comm = ctypes.c_int(), ctypes.c_void_p()
        if lib.ncclGetVersion(ctypes.byref(version)) != 0:
            return
        apply_settings(version.value)
        if lib.ncclCommInitAll(ctypes.byref(comm), 1, (ctypes.c_int * 1)(ordinal)) == 0:
            _KEPT.append(comm)
    except AttributeError:           # a library without these functions is not NCCL
        return


def _started() -> None:
    """Wait for :func:`begin`'s thread, if any: the communicators are made after it (a
    minute at most: a start that hangs is left to itself, and the communicators are made)."""
    while _STARTED:
        _STARTED.pop().join(timeout=60)


class GridComms:
    """NCCL communicators of one process: its process row and its process column.

    Unique ids are made on rank 0 and travel over the control plane (host data only)."""

    def __init__(self, control: Control, grid: ProcessGrid):
        reason = probe()
        if reason:
            raise FloydwarpError(f"the multi-GPU engines move panels through NCCL: {reason}")
        from cupy.cuda import nccl

        _started()
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
