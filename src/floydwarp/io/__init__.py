"""File formats in and out.

>>> import floydwarp as fw, floydwarp.io as fio
>>> sorted(fio.GRAPH_FORMATS), sorted(fio.RESULT_FORMATS)
(['dimacs', 'edgelist', 'mtx', 'npy', 'nthu'], ['npy', 'npz', 'nthu'])

Graphs: ``read_graph(path)`` / ``write_graph(graph, path)``; results:
``write_result(result, path)`` / ``read_result(path)``.  The format comes from the
extension (``.gz`` is looked through for text formats) or from ``format=`` (a format
name or an extension).  Every write goes to a temporary file renamed into place, and
refuses to overwrite the files named in ``inputs``.  Every read error is a
:class:`~floydwarp.FloydwarpError` naming the file and the line (or byte offset).

=========  ===================================  =========================================
format     extensions                           notes
=========  ===================================  =========================================
nthu       ``.in`` (graph), ``.out`` (result)   homework binaries, little-endian int32
dimacs     ``.gr``                              ``p sp n m`` / ``a u v w``; labels = ids
mtx        ``.mtx``                             Matrix Market coordinate
edgelist   ``.csv .tsv .txt .edges .el ...``    ``src dst [w]``; names become labels
npy        ``.npy`` (graph and result)          dense matrix / memory-mappable result
npz        ``.npz`` (result)                    :meth:`Result.save` / :meth:`Result.load`
=========  ===================================  =========================================
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from ..errors import FloydwarpError
from . import dimacs, edgelist, mtx, npy, nthu, result_files
from .atomic import atomic_path, check_writable


def _one_file(path: Path) -> tuple:
    return (path,)


@dataclass(frozen=True)
class Format:
    """One file format: its name, extensions and reader / writer."""

    name: str
    extensions: tuple
    description: str
    read: Callable
    write: Callable
    #: the files a write to a path makes (the .npy result layout makes three)
    files: Callable = _one_file


#: Graph formats by name.
GRAPH_FORMATS: dict[str, Format] = {f.name: f for f in (
    Format("nthu", nthu.IN_EXTENSIONS, "NTHU homework input (int32 V, E, E x (src, dst, w))", nthu.read, nthu.write),
    Format("dimacs", dimacs.EXTENSIONS, "DIMACS shortest-path graph (p sp n m / a u v w)", dimacs.read, dimacs.write),
    Format("mtx", mtx.EXTENSIONS, "Matrix Market coordinate matrix", mtx.read, mtx.write),
    Format("edgelist", edgelist.EXTENSIONS, "edge list: source target [weight] (CSV, TSV, whitespace)",
           edgelist.read, edgelist.write),
    Format("npy", npy.EXTENSIONS, "dense n x n NumPy matrix, inf = no edge", npy.read, npy.write),
)}

#: Result formats by name.
RESULT_FORMATS: dict[str, Format] = {f.name: f for f in (
    Format("npz", result_files.NPZ_EXTENSIONS, "floydwarp result archive (Result.save)",
           result_files.read_npz, result_files.write_npz),
    Format("npy", result_files.NPY_EXTENSIONS, "raw .npy distances (+ .pred.npy) and a .json sidecar; memory-mapped",
           result_files.read_npy, result_files.write_npy, result_files.npy_paths),
    Format("nthu", nthu.OUT_EXTENSIONS, "NTHU homework output (V x V int32, 2**30-1 = unreachable)",
           nthu.read_result, nthu.write_result),
)}

#: Other names accepted by ``format=``.
ALIASES = {"homework": "nthu", "gr": "dimacs", "matrixmarket": "mtx", "csv": "edgelist", "tsv": "edgelist",
           "txt": "edgelist", "edges": "edgelist", "in": "nthu", "out": "nthu"}

_GRAPH_BY_EXT = {ext: f for f in GRAPH_FORMATS.values() for ext in f.extensions}
_RESULT_BY_EXT = {ext: f for f in RESULT_FORMATS.values() for ext in f.extensions}
_BINARY = {"nthu", "npy", "npz"}


def _extension(path: Path) -> str:
    suffixes = [s.lower() for s in path.suffixes]
    if suffixes and suffixes[-1] == ".gz" and len(suffixes) > 1:
        return suffixes[-2]
    return suffixes[-1] if suffixes else ""


def _choose(path, format, table: dict, by_ext: dict, kind: str) -> Format:
    path = Path(path)
    if format is not None:
        key = str(format).lower().lstrip(".")
        key = ALIASES.get(key, key)
        if key in table:
            return table[key]
        if "." + key in by_ext:
            return by_ext["." + key]
        raise FloydwarpError(f"unknown {kind} format {format!r}; choose one of {', '.join(table)}")
    ext = _extension(path)
    fmt = by_ext.get(ext)
    if fmt is None:
        known = ", ".join(sorted(by_ext))
        raise FloydwarpError(
            f"{path}: cannot tell the {kind} format from the extension {ext or '(none)'!r}; "
            f"use one of {known} or name the format (format= / --format: {', '.join(table)})")
    if path.suffix.lower() == ".gz" and fmt.name in _BINARY:
        raise FloydwarpError(f"{path}: gzip-compressed {fmt.name} files are not supported; decompress it first")
    return fmt


def graph_format(path, format=None) -> Format:
    """The graph format for a path (by extension) or a ``format=`` name."""
    return _choose(path, format, GRAPH_FORMATS, _GRAPH_BY_EXT, "graph")


def result_format(path, format=None) -> Format:
    """The result format for a path (by extension) or a ``format=`` name."""
    return _choose(path, format, RESULT_FORMATS, _RESULT_BY_EXT, "result")


def check_graph_path(path, format=None, *, inputs=()) -> Format:
    """Refuse, before any work, a path :func:`write_graph` would refuse (an input file, a missing or
    read-only folder, an unknown format); returns the format."""
    return _check_writable(path, inputs, lambda: graph_format(path, format))


def check_result_path(path, format=None, *, inputs=()) -> Format:
    """Refuse, before any work, a path :func:`write_result` would refuse (an input file among the
    files it writes, a missing or read-only folder, an unknown format); returns the format."""
    return _check_writable(path, inputs, lambda: result_format(path, format))


def _check_writable(path, inputs, choose) -> Format:
    check_writable(path, inputs=inputs)          # first: "-o INPUT" is refused as the input, not as a format
    fmt = choose()
    for target in fmt.files(Path(path)):
        check_writable(target, inputs=inputs)
    return fmt


def read_graph(path, format=None, **options):
    """Read a graph file; ``options`` go to the format's reader (e.g. ``labels=True`` for edge lists)."""
    fmt = graph_format(path, format)
    path = Path(path)
    if not path.exists():
        raise FloydwarpError(f"{path}: no such file")
    return fmt.read(path, **options)


def write_graph(graph, path, format=None, *, inputs=(), **options):
    """Write a graph (anything :func:`floydwarp.solve` accepts) to a file, atomically."""
    from ..inputs import as_graph

    fmt = graph_format(path, format)
    return fmt.write(as_graph(graph), Path(path), inputs=inputs, **options)


def write_result(result, path, format=None, inputs=()):
    """Write a :class:`~floydwarp.Result` to a file, atomically; returns the path written."""
    fmt = result_format(path, format)
    return fmt.write(result, Path(path), inputs=inputs)


def read_result(path, format=None):
    """Read a result written by :func:`write_result` (``.npy`` layouts are memory-mapped)."""
    fmt = result_format(path, format)
    return fmt.read(Path(path))


__all__ = [
    "ALIASES", "Format", "GRAPH_FORMATS", "RESULT_FORMATS", "atomic_path", "check_graph_path", "check_result_path",
    "check_writable", "graph_format", "read_graph", "read_result", "result_format", "write_graph", "write_result",
]
