"""Dense weight matrices in NumPy ``.npy`` files: n x n, ``inf`` = no edge.

Files are opened memory-mapped (``np.load(mmap_mode="r")``), so a large matrix is
read once, when the solver builds its start matrix.
"""
from __future__ import annotations

import zipfile
from pathlib import Path

import numpy as np

from ..errors import FloydwarpError
from ..graph import Graph
from ..numeric import exact_limit
from .atomic import atomic_path

EXTENSIONS = (".npy",)
#: what ``np.load`` of an ``.npz`` and reading its members raise for a file that is not a whole
#: ``.npz`` of the arrays asked for: EOFError when empty, BadZipFile when cut or foreign, KeyError
#: for a missing member
NPZ_ERRORS = (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile)


def load_array(path: Path, what: str = "array"):
    """``np.load(path, mmap_mode="r")`` with errors that name the file."""
    try:
        with np.errstate(over="ignore"):          # a huge header's byte count: the OverflowError below says it
            return np.load(path, mmap_mode="r", allow_pickle=False)
    except FileNotFoundError:
        raise FloydwarpError(f"{path}: no such file") from None
    except (ValueError, OSError, EOFError) as exc:
        raise FloydwarpError(f"{path}: not a readable .npy {what} ({exc})") from None
    except OverflowError:                # the header's shape needs more bytes than a file can have
        raise FloydwarpError(f"{path}: not a readable .npy {what} (its header declares a shape of more "
                             "bytes than any file holds)") from None


def save(fh, array) -> None:
    """``np.save(fh, array)`` for a NumPy or CuPy array: a device array's bytes go from the
    device through pinned buffers straight into the file, never whole into host memory."""
    from ..arrays import device_helper, is_device_array, to_host

    if not is_device_array(array) or array.size == 0:
        np.save(fh, to_host(array), allow_pickle=False)
        return
    array = array if array.flags.c_contiguous else array.copy()
    header = {"descr": np.lib.format.dtype_to_descr(np.dtype(array.dtype)), "fortran_order": False,
              "shape": tuple(array.shape)}
    np.lib.format.write_array_header_1_0(fh, header)
    fh.flush()
    device_helper("to_file")(array, fh.fileno(), fh.tell())


def read(path) -> Graph:
    path = Path(path)
    matrix = load_array(path, "matrix")
    if matrix.ndim != 2 or matrix.shape[0] != matrix.shape[1]:
        raise FloydwarpError(f"{path}: a weight matrix must be square (n x n); the file holds shape {matrix.shape}")
    if matrix.dtype.kind not in "biuf":
        raise FloydwarpError(f"{path}: weight matrix has non-numeric dtype {matrix.dtype}")
    try:
        return Graph.from_dense(matrix, missing=np.inf)
    except FloydwarpError as exc:
        raise FloydwarpError(f"{path}: {exc}") from None


def write(graph: Graph, path, *, inputs=()):
    """Write the graph's n x n float64 weight matrix (``inf`` = no edge, 0 diagonal); integer
    weights float64 would round (beyond 2**53) are refused, never written rounded."""
    path = Path(path)
    stats = graph.weight_stats()
    if max(abs(stats.min_weight), abs(stats.max_weight)) > exact_limit(np.float64):   # rare: read every weight
        w = graph.edges()[2]
        if w.dtype.kind in "iu":
            rounded = np.flatnonzero(w.astype(np.float64).astype(object) != w.astype(object))
            if rounded.size:
                raise FloydwarpError(f"{path}: a .npy graph holds float64 weights, which round integer weight "
                                     f"{int(w[rounded[0]])} (beyond 2**53); write a .in, .gr, .mtx or edge-list "
                                     "file instead")
    matrix = graph.to_matrix(np.float64, np.inf)
    with atomic_path(path, inputs=inputs) as tmp, open(tmp, "wb") as fh:
        save(fh, matrix)
    return path
