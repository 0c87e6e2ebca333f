"""Result files: ``.npz`` (one file), the raw ``.npy`` layout (memory-mappable) and the
homework ``.out`` (see :mod:`floydwarp.io.nthu`).

The raw layout, for results too large to read whole::

    NAME.npy        n x n distances in the result's dtype (np.save format)
    NAME.pred.npy   n x n int32 predecessors (only when the result has them)
    NAME.json       {"format": "floydwarp-result-npy", "dtype", "inf", "n", "labels",
                     "pred": "NAME.pred.npy" | null, "backend", "algorithm", "timings",
                     "num_edges", "metadata"}

:func:`read_npy` opens both matrices with ``np.load(mmap_mode="r")``: only the pages a
query touches are read.  All files are written to temporary names and renamed into
place, the JSON sidecar last.
"""
from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path

import numpy as np

from ..errors import FloydwarpError
from .atomic import atomic_path
from ..dynamic import cycles_from_distances
from .npy import load_array, save

NPZ_EXTENSIONS = (".npz",)
NPY_EXTENSIONS = (".npy", ".json")
_NPY_FORMAT = "floydwarp-result-npy"
_VERSION = 1


# ---------------------------------------------------------------------- .npz
def write_npz(result, path, *, inputs=()):
    path = Path(path)
    with atomic_path(path, inputs=inputs) as tmp:
        try:
            result.save(tmp)
        except TypeError as exc:        # labels that JSON cannot hold
            raise FloydwarpError(f"cannot write {path}: vertex labels must be numbers, strings or tuples "
                                 f"({exc})") from None
    return path


def read_npz(path):
    from ..result import Result

    path = Path(path)
    if not path.exists():
        raise FloydwarpError(f"{path}: no such file")
    return Result.load(path)


# ---------------------------------------------------------------------- raw .npy layout
def npy_paths(path) -> tuple[Path, Path, Path]:
    """``(NAME.npy, NAME.pred.npy, NAME.json)`` for ``NAME.npy`` or ``NAME.json``."""
    path = Path(path)
    name = path.name
    for suffix in (".npy", ".json"):
        if name.lower().endswith(suffix):
            name = name[: -len(suffix)]
            break
    return (path.with_name(name + ".npy"), path.with_name(name + ".pred.npy"), path.with_name(name + ".json"))


def npy_sidecar(meta_path, *, n, dtype, inf, has_pred, labels=None, backend="", algorithm="", timings=None,
                num_edges=None, metadata=None) -> str:
    """The JSON text of ``NAME.json``; shared by :func:`write_npy` and the MPI ranks' parallel writer."""
    from ..result import jsonable_labels

    dist_path, pred_path, _ = npy_paths(meta_path)
    dtype = np.dtype(dtype)
    meta = {
        "format": _NPY_FORMAT, "version": _VERSION, "n": int(n), "dtype": dtype.name,
        "inf": None if dtype.kind == "f" else int(inf),
        "dist": dist_path.name, "pred": pred_path.name if has_pred else None,
        "labels": jsonable_labels(labels), "backend": backend, "algorithm": algorithm,
        "timings": timings or {}, "num_edges": num_edges, "metadata": metadata or {},
    }
    try:
        return json.dumps(meta, indent=1)
    except TypeError as exc:
        raise FloydwarpError(f"cannot write {meta_path}: labels or metadata are not JSON-serializable "
                             f"({exc})") from None


@contextlib.contextmanager
def npy_temp_files(path, *, has_pred, inputs=()):
    """Temporary ``(dist, pred or None, sidecar)`` paths for the layout of ``path``, renamed into
    place on success (the sidecar last: it commits the set) and removed on failure."""
    dist_path, pred_path, meta_path = npy_paths(path)
    with contextlib.ExitStack() as stack:
        # entered first = renamed last
        meta_tmp = stack.enter_context(atomic_path(meta_path, inputs=inputs))
        dist_tmp = stack.enter_context(atomic_path(dist_path, inputs=inputs))
        pred_tmp = stack.enter_context(atomic_path(pred_path, inputs=inputs)) if has_pred else None
        yield dist_tmp, pred_tmp, meta_tmp
    if not has_pred and pred_path.exists():
        with contextlib.suppress(OSError):
            os.unlink(pred_path)            # a stale file from an earlier result


def write_npy(result, path, *, inputs=()):
    """The raw layout of ``result``; a result on the device streams into the files (npy.save)."""
    has_pred = result.pred is not None
    dist_path, _, meta_path = npy_paths(path)
    text = npy_sidecar(meta_path, n=result.n, dtype=result.dtype, inf=result.inf, has_pred=has_pred,
                       labels=result.labels, backend=result.backend, algorithm=result.algorithm,
                       timings=result.timings, num_edges=result.num_edges, metadata=result.metadata)
    with npy_temp_files(path, has_pred=has_pred, inputs=inputs) as (dist_tmp, pred_tmp, meta_tmp):
        with open(dist_tmp, "wb") as fh:
            save(fh, result.dist)
        if has_pred:
            with open(pred_tmp, "wb") as fh:
                save(fh, result.pred.astype(np.int32, copy=False))
        meta_tmp.write_text(text)
    return dist_path


def read_npy(path):
    from ..result import Result, labels_from_json, stored_inf

    dist_path, pred_path, meta_path = npy_paths(path)
    if not meta_path.exists():
        if dist_path.exists():
            raise FloydwarpError(
                f"{dist_path}: no sidecar {meta_path.name} beside it; a floydwarp .npy result is "
                f"written as {dist_path.name} + {meta_path.name} (+ {pred_path.name})")
        raise FloydwarpError(f"{dist_path}: no such file")
    try:
        meta = json.loads(meta_path.read_text())
    except (OSError, ValueError) as exc:
        raise FloydwarpError(f"{meta_path}: not a readable JSON sidecar ({exc})") from None
    if not isinstance(meta, dict) or meta.get("format") != _NPY_FORMAT:
        raise FloydwarpError(f"{meta_path}: not a floydwarp result sidecar")
    dtype = np.dtype(meta["dtype"])
    n = int(meta["n"])
    dist = load_array(dist_path, "distance matrix")
    if dist.shape != (n, n) or dist.dtype != dtype:
        raise FloydwarpError(f"{dist_path}: holds {dist.dtype} {dist.shape}, "
                             f"but {meta_path.name} says {dtype} ({n}, {n})")
    pred = None
    if meta.get("pred"):
        pred_file = meta_path.with_name(meta["pred"])
        pred = load_array(pred_file, "predecessor matrix")
        if pred.shape != (n, n):
            raise FloydwarpError(f"{pred_file}: holds shape {pred.shape}, but {meta_path.name} says ({n}, {n})")
    inf = stored_inf(meta_path, dtype, meta["inf"])
    return Result(dist, pred, inf=inf, labels=labels_from_json(meta.get("labels")),
                  backend=meta.get("backend", ""), algorithm=meta.get("algorithm", ""),
                  timings=meta.get("timings"), num_edges=meta.get("num_edges"), metadata=meta.get("metadata"),
                  negative_cycles=cycles_from_distances(dist, inf))
