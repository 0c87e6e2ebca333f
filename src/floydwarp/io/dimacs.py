"""DIMACS 9th implementation challenge shortest-path graphs (``.gr``).

::

    c comment lines (anywhere)
    p sp <n> <m>        problem line: n vertices, m arcs (once, before the arcs)
    a <u> <v> <w>       one arc u -> v of weight w; ids are 1..n

Vertex ``i`` of the Graph is DIMACS id ``i + 1``, and the labels are the DIMACS ids,
so queries name vertices as the file does.
"""
from __future__ import annotations

import re
from pathlib import Path

import numpy as np

from ..errors import FloydwarpError
from ..graph import Graph, check_vertex_count
from . import _text
from .atomic import atomic_path

EXTENSIONS = (".gr", ".dimacs")
COLUMNS = ("u", "v", "w")
_PROBLEM = re.compile(rb"p\s+(\S+)\s+(\S+)\s+(\S+)\s*$")
_A_TO_SPACE = bytes.maketrans(b"a", b" ")


def read(path) -> Graph:
    path = Path(path)
    data = _text.read_bytes(path)
    n, m, p_line, body = _problem_line(path, data)
    # comments can appear anywhere; blank them (keeping offsets) when there are any after p
    if b"c" in data[body:]:                       # no 'c' byte can occur in an arc line
        data = data[:body] + _text.blank_lines(data[body:], rb"[ \t]*c(?:[ \t]|$)")
    arcs = data[body:]
    stripped = arcs.translate(_A_TO_SPACE)       # the 'a' of every arc line (offsets unchanged)
    try:
        values = _text.parse_records(stripped, 3, COLUMNS, path)
    except (_text.BadToken, FloydwarpError) as exc:
        raise _explain(path, data, body) or _generic(path, data, body, exc) from None
    arc_count = values.shape[0]
    # every record must have come from an 'a' line: as many 'a' bytes as arcs
    if arcs.count(b"a") != arc_count:
        raise _explain(path, data, body) or FloydwarpError(
            f"{path}: found {arcs.count(b'a')} 'a' markers for {arc_count} arcs")
    if arc_count != m:
        raise FloydwarpError(
            f"{path}: line {p_line}: the problem line says m = {m} arcs but the file has {arc_count}")

    def where(r):
        return _text.line_of(data, body + _text.record_offsets(stripped, 3, np.array([r]))[0])

    ids = _text.integer_ids(values[:, :2], path, where, "vertex ids")
    bad = np.flatnonzero(np.any((ids < 1) | (ids > n), axis=1))
    if bad.size:
        r = int(bad[0])
        vid = int(ids[r, 0] if not 1 <= ids[r, 0] <= n else ids[r, 1])
        raise FloydwarpError(
            f"{path}: line {where(r)}: vertex id {vid} is out of range 1..{n} (p sp {n} {m}; "
            f"{bad.size} arc(s) out of range)")
    w = values[:, 2]
    _text.refuse_nonfinite(w, path, where, "weight")
    return Graph.from_edges(ids[:, 0] - 1, ids[:, 1] - 1, w, n=n, labels=range(1, n + 1))


def _problem_line(path, data):
    """``(n, m, line number, byte offset just after the p line)``; only comments may precede it."""
    pos = 0
    while True:
        span = _text.next_line(data, pos)
        if span is None:
            raise FloydwarpError(f"{path}: no problem line 'p sp n m' (is this a DIMACS .gr file?)")
        start, end = span
        line = data[start:end].strip()
        lineno = _text.line_of(data, start)
        if line[:1] == b"c" and (len(line) == 1 or line[1:2].isspace()):
            pos = end + 1
            continue
        if line[:1] != b"p":
            raise FloydwarpError(
                f"{path}: line {lineno}: expected the problem line 'p sp n m' before any arc, "
                f"found {_text.show(line[:30])}")
        match = _PROBLEM.match(line)
        if not match or match.group(1) != b"sp":
            raise FloydwarpError(f"{path}: line {lineno}: malformed problem line {_text.show(line)}; "
                                 "expected 'p sp n m'")
        if not (_text.is_integer(match.group(2)) and _text.is_integer(match.group(3))):
            raise FloydwarpError(f"{path}: line {lineno}: n and m in {_text.show(line)} must be integers")
        n, m = int(match.group(2)), int(match.group(3))
        if n < 0 or m < 0:
            raise FloydwarpError(f"{path}: line {lineno}: n and m must be >= 0 in {_text.show(line)}")
        check_vertex_count(n, f"{path}: line {lineno}: p sp {n} {m}")
        return n, m, lineno, end


def _explain(path, data, body):
    """The first malformed line after the problem line, in words (slow path: errors only)."""
    pos = body
    while True:
        span = _text.next_line(data, pos)
        if span is None:
            return None
        start, end = span
        toks = data[start:end].split()
        where = f"{path}: line {_text.line_of(data, start)}"
        if toks[0] == b"c":
            pos = end + 1
            continue
        if toks[0] != b"a":
            kind = "a second problem line" if toks[0] == b"p" else f"line type {_text.show(toks[0])}"
            return FloydwarpError(
                f"{where}: unexpected {kind} (after the problem line, DIMACS .gr lines are "
                "'a u v w' or comments 'c ...')")
        if len(toks) != 4:
            return FloydwarpError(f"{where}: an arc line needs 'a u v w', found {len(toks) - 1} field(s)")
        for name, tok in zip(("source id", "target id", "weight"), toks[1:]):
            if not _text.is_number(tok):
                return FloydwarpError(f"{where}: {name} {_text.show(tok)} is not a number")
            if not np.isfinite(float(tok)):
                return FloydwarpError(f"{where}: {name} {_text.show(tok)} is not a finite number")
        pos = end + 1


def _generic(path, data, body, exc):
    if isinstance(exc, _text.BadToken):
        return FloydwarpError(
            f"{path}: line {_text.line_of(data, body + exc.offset)}: {_text.show(exc.token)} is not a number")
    return exc


def write(graph: Graph, path, *, inputs=()):
    """Write ``graph`` as a DIMACS ``.gr`` file (vertex i is written as id i + 1)."""
    path = Path(path)
    src, dst, w = graph.edges()
    with atomic_path(path, inputs=inputs) as tmp, _text.open_for_write(tmp, path) as fh:
        fh.write(b"c written by floydwarp\n")
        fh.write(f"p sp {graph.n} {src.size}\n".encode())
        _text.write_blocks(fh, _text.format_rows([src + 1, dst + 1, w], b" ", prefix=b"a "))
    return path
