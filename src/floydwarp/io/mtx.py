"""Matrix Market coordinate files (``.mtx``).

::

    %%MatrixMarket matrix coordinate <real|integer|pattern> <general|symmetric|skew-symmetric>
    % comments
    <rows> <cols> <entries>
    <i> <j> [<value>]        1-based, one entry per line

Entry ``(i, j, v)`` is the edge ``i-1 -> j-1`` of weight ``v`` (explicit zeros are
zero-weight edges, as in :meth:`Graph.from_scipy`); ``pattern`` entries weigh 1;
``symmetric`` entries are edges both ways, ``skew-symmetric`` ones ``v`` and ``-v``.
The parser is floydwarp's own (vectorized), so every error names its line.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from ..errors import FloydwarpError
from ..graph import Graph, check_vertex_count
from . import _text
from .atomic import atomic_path

EXTENSIONS = (".mtx", ".mm")
_FIELDS = ("real", "integer", "pattern", "double")
_SYMMETRIES = ("general", "symmetric", "skew-symmetric")


def read(path) -> Graph:
    path = Path(path)
    data = _text.read_bytes(path)
    nl = data.find(b"\n")
    banner = (data if nl < 0 else data[:nl]).strip()
    parts = banner.lower().split()
    if not parts or parts[0] != b"%%matrixmarket":
        raise FloydwarpError(f"{path}: line 1: expected the banner '%%MatrixMarket matrix coordinate ...', "
                             f"found {_text.show(banner[:40])}")
    if len(parts) != 5 or parts[1] != b"matrix":
        raise FloydwarpError(f"{path}: line 1: malformed banner {_text.show(banner)}; expected "
                             "'%%MatrixMarket matrix coordinate <field> <symmetry>'")
    # ASCII with escapes: a stray byte (a non-UTF-8 banner) is named in the error, not a decode failure
    layout, field, symmetry = (p.decode("ascii", "backslashreplace") for p in parts[2:])
    if layout != "coordinate":
        raise FloydwarpError(f"{path}: line 1: '{layout}' Matrix Market files are dense matrices; only 'coordinate' "
                             "(sparse) files are graphs here -- save a dense matrix as .npy instead")
    if field not in _FIELDS:
        raise FloydwarpError(f"{path}: line 1: field '{field}' is not supported (use real, integer or pattern)")
    if symmetry not in _SYMMETRIES:
        raise FloydwarpError(f"{path}: line 1: symmetry '{symmetry}' is not supported "
                             "(use general, symmetric or skew-symmetric)")
    body = len(data) if nl < 0 else nl + 1
    data = data[:body] + _text.blank_lines(data[body:], rb"[ \t]*%") if b"%" in data[body:] else data
    span = _text.next_line(data, body)
    if span is None:
        raise FloydwarpError(f"{path}: no size line '<rows> <cols> <entries>' after the banner")
    size_tokens = data[span[0]:span[1]].split()
    size_line = _text.line_of(data, span[0])
    if len(size_tokens) != 3 or not all(_text.is_integer(t) for t in size_tokens):
        raise FloydwarpError(f"{path}: line {size_line}: expected the size line '<rows> <cols> <entries>', "
                             f"found {_text.show(data[span[0]:span[1]].strip())}")
    rows, cols, nnz = (int(t) for t in size_tokens)
    if rows != cols:
        raise FloydwarpError(f"{path}: line {size_line}: the matrix is {rows} x {cols}; a graph needs a square matrix")
    if min(rows, nnz) < 0:
        raise FloydwarpError(f"{path}: line {size_line}: sizes must be >= 0")
    check_vertex_count(rows, f"{path}: line {size_line}: a {rows} x {cols} matrix")
    n = rows
    entries_at = span[1]
    entries = data[entries_at:]
    ncols = 2 if field == "pattern" else 3
    names = ("row", "column", "value")
    try:
        values = _text.parse_records(entries, ncols, names, path)
    except _text.BadToken as bad:
        raise FloydwarpError(
            f"{path}: line {_text.line_of(data, entries_at + bad.offset)}: {names[bad.column]} "
            f"{_text.show(bad.token)} is not a number") from None
    except FloydwarpError as exc:
        # line numbers counted within the entries: re-anchor them
        raise _reanchor(exc, path, data, entries_at) from None
    count = values.shape[0]
    if count != nnz:
        raise FloydwarpError(f"{path}: line {size_line}: the size line says {nnz} entries but the file has {count}")

    def where(r):
        return _text.line_of(data, entries_at + _text.record_offsets(entries, ncols, np.array([r]))[0])

    ij = _text.integer_ids(values[:, :2], path, where, "row and column")
    bad = np.flatnonzero(np.any((ij < 1) | (ij > n), axis=1))
    if bad.size:
        r = int(bad[0])
        raise FloydwarpError(f"{path}: line {where(r)}: entry ({int(ij[r, 0])}, {int(ij[r, 1])}) is outside "
                             f"the {n} x {n} matrix (indices are 1..{n})")
    if field == "pattern":
        w = np.ones(count, dtype=np.int64)
    else:
        w = values[:, 2]
        _text.refuse_nonfinite(w, path, where, "value")
        if field == "integer" and w.dtype.kind == "f" and np.any(w != np.round(w)):
            r = int(np.flatnonzero(w != np.round(w))[0])
            raise FloydwarpError(f"{path}: line {where(r)}: value {w[r]!r} is not an integer (field 'integer')")
    src, dst = ij[:, 0] - 1, ij[:, 1] - 1
    if symmetry != "general":
        off = src != dst
        mirror_w = -w[off] if symmetry == "skew-symmetric" else w[off]
        src, dst, w = (np.concatenate([src, dst[off]]), np.concatenate([dst, src[off]]),
                       np.concatenate([w, mirror_w]))
    return Graph.from_edges(src, dst, w, n=n)


def _reanchor(exc, path, data, entries_at):
    import re

    msg = str(exc)
    match = re.match(re.escape(str(path)) + r": line (\d+): (.*)", msg, re.S)
    if not match:
        return exc
    local = int(match.group(1))
    line = _text.line_of(data, entries_at) + local - 1
    return FloydwarpError(f"{path}: line {line}: {match.group(2)}")


def write(graph: Graph, path, *, inputs=()):
    """Write ``graph`` as a general coordinate Matrix Market file (1-based)."""
    path = Path(path)
    src, dst, w = graph.edges()
    w = np.asarray(w)
    field = "integer" if w.dtype.kind in "iu" or np.all(w == np.round(w)) else "real"
    with atomic_path(path, inputs=inputs) as tmp, _text.open_for_write(tmp, path) as fh:
        fh.write(f"%%MatrixMarket matrix coordinate {field} general\n% written by floydwarp\n".encode())
        fh.write(f"{graph.n} {graph.n} {src.size}\n".encode())
        _text.write_blocks(fh, _text.format_rows([src + 1, dst + 1, w], b" "))
    return path
