"""Edge lists: ``source target [weight]`` per line, CSV, TSV or whitespace separated.

Reading
-------
* The separator is taken from the first data line: comma, tab, semicolon, else whitespace.
* Lines starting with ``#`` or ``%`` are comments; blank lines are skipped.
* An optional header line (``source,target,weight``, ``src dst w``, ...) is recognized
  by its non-numeric weight column or by its column names.
* Without a weight column every edge weighs 1.
* Integer vertex ids are vertex indices (``n`` = largest id + 1).  Any other vertex
  name makes every name a label, numbered in order of first appearance
  (``labels=True`` forces this for integer ids too -- e.g. SNAP files with sparse ids --
  and the labels are then the integers themselves).
* A first line ``# floydwarp edgelist n=N m=M`` (written by :func:`write`) gives the
  vertex count, so isolated vertices survive a round trip, and the count of edge lines,
  so a file cut short (or grown) is refused rather than read as another graph.
* Quoted fields are read line by line in Python (slower, but exact: a quoted field keeps its
  spaces).

Writing
-------
``.csv`` and ``.tsv`` files get a ``source,target,weight`` header (for other tools),
other extensions a ``# floydwarp edgelist n=N m=M`` comment line; labels are written
as vertex names, quoted in CSV where they hold a space, a quote or a separator, and refused
in a whitespace-separated file that cannot say them.  Every vertex survives the round trip,
in every one of these forms: a vertex that the reader would not otherwise recover -- one
that no edge names, where the graph is labelled, or the last vertex, where it is not -- is
written as a self-loop of weight 0, an ordinary row for other tools, which Graph's rules
keep as a vertex and drop as an edge.
"""
from __future__ import annotations

import re
from pathlib import Path

import numpy as np

from ..errors import FloydwarpError
from ..graph import MAX_VERTICES, Graph, check_vertex_count
from . import _text
from .atomic import atomic_path

EXTENSIONS = (".csv", ".tsv", ".txt", ".edges", ".edgelist", ".el", ".wel", ".ssv")
COLUMNS = ("source", "target", "weight")
_HEADER_WORDS = {
    "source", "target", "weight", "src", "dst", "dest", "destination", "from", "to",
    "cost", "length", "distance", "dist", "tail", "head", "node1", "node2", "start", "end",
    "weights", "value", "id1", "id2", "from_node", "to_node", "source_id", "target_id", "vertex1", "vertex2",
}
_MAGIC = re.compile(rb"\A[ \t]*#[ \t]*floydwarp edgelist n=(\d+)(?: m=(\d+))?( labels)?")
_SEPARATORS = (b",", b"\t", b";")
#: what a written label is quoted for (or refused, in a whitespace-separated file)
_QUOTED = '",;'
_QUOTED_FIELD = re.compile(rb'"(?:[^"]|"")*"')


class _NamesFound(Exception):
    """Internal: a vertex id column holds a non-integer token; switch to labels."""


def read(path, *, labels: bool | None = None, header: bool | None = None,
         delimiter: str | None = None, undirected: bool = False, n: int | None = None) -> Graph:
    """Read an edge list.

    Parameters
    ----------
    labels : bool, optional
        ``None`` (default): integer ids are indices, other names become labels.
        ``True``: every id is a label (in order of first appearance).
        ``False``: ids must be integers.
    header : bool, optional
        Whether the first data line is a header (default: detect it).
    delimiter : str, optional
        Field separator (default: detect comma, tab, semicolon or whitespace).
    undirected : bool
        Add every edge in both directions.
    n : int, optional
        Vertex count for integer ids (default: largest id + 1, or the file's
        ``# floydwarp edgelist n=N`` line).
    """
    path = Path(path)
    data = _text.read_bytes(path)
    magic = _MAGIC.match(data)
    if magic and magic.group(3) and labels is None:
        labels = True                      # written from a labelled graph: names are labels
    if magic and n is None and labels is not True:
        n = check_vertex_count(int(magic.group(1)), f"{path}: line 1: n={int(magic.group(1))}")
    src, dst, weight, n, names = _records(path, data, labels, header, delimiter, n)
    if magic and magic.group(2) is not None and src.size != int(magic.group(2)):
        # a file cut short (or grown) reads as another graph: refuse it
        raise FloydwarpError(f"{path}: line 1 declares m={int(magic.group(2))} edges, the file holds {src.size}")
    if undirected:
        src, dst = np.concatenate([src, dst]), np.concatenate([dst, src])
        weight = np.concatenate([weight, weight])
    return Graph.from_edges(src, dst, weight, n=n, labels=names)


def _records(path, data, labels, header, delimiter, n):
    """``(src, dst, weight, n, labels)`` of the file's records, one edge a record."""
    if b"#" in data or b"%" in data:
        data = _text.blank_lines(data, rb"[ \t]*[#%]")
    first = _text.next_line(data)
    if first is None:
        return _empty(n, labels)
    line = data[first[0]:first[1]]
    sep = _detect_separator(line) if delimiter is None else (delimiter.encode() if delimiter.strip() else None)
    if b'"' in data and sep is not None:
        return _read_quoted(path, data, sep.decode(), labels, header, n)
    try:
        return _read_fast(path, data, first, sep, labels, header, n)
    except FloydwarpError:
        if sep is None:
            raise
        # names with spaces inside comma/tab/semicolon fields: the quoted reader takes those
        # (and words its own error when the file really is malformed)
        return _read_quoted(path, data, sep.decode(), labels, header, n)


def _empty(n, labels):
    e = np.zeros(0, np.int64)
    return e, e, e, 0 if labels else (n or 0), [] if labels else None


def _read_fast(path, data, first, sep, labels, header, n):
    """The vectorized reader: separators become spaces, then NumPy parses the records."""
    line = data[first[0]:first[1]]
    tokens = line.split(sep) if sep is not None else line.split()
    tokens = [t.strip() for t in tokens]
    if header is None:
        header = _looks_like_header(tokens)
    if header:
        data = _text.blank_span(data, first[0], first[1])
        first = _text.next_line(data, first[1])
        if first is None:
            return _empty(n, labels)
        line = data[first[0]:first[1]]
        tokens = [t.strip() for t in (line.split(sep) if sep is not None else line.split())]
    ncols = len(tokens)
    where = f"{path}: line {_text.line_of(data, first[0])}"
    if ncols not in (2, 3):
        raise FloydwarpError(f"{where}: expected 'source target [weight]', found {ncols} fields")
    if sep is not None or b"\r" in data:
        table = bytes.maketrans((sep or b"") + b"\r", b" " * (len(sep or b"") + 1))
        data = data.translate(table)
    want_labels = labels is True or (labels is None and not all(_text.is_integer(t) for t in tokens[:2]))
    if not want_labels:
        try:
            return _read_numeric(path, data, ncols, n, labels)
        except _NamesFound:
            if labels is False:
                raise
    return _read_labelled(path, data, ncols, force_int=labels is True)


def _detect_separator(line: bytes):
    line = _QUOTED_FIELD.sub(b"", line)        # a quoted label may hold any of them
    for sep in _SEPARATORS:
        if sep in line:
            return sep
    return None


def _looks_like_header(tokens) -> bool:
    # a non-numeric weight beside two integer ids is a bad edge (a stray byte), not a header
    if len(tokens) == 3 and not _text.is_number(tokens[2]) and not all(_text.is_integer(t) for t in tokens[:2]):
        return True
    words = [t.decode("utf-8", "replace").strip().strip('"').lower() for t in tokens]
    return len(words) in (2, 3) and all(w in _HEADER_WORDS for w in words)


def _read_numeric(path, data, ncols, n, labels):
    try:
        values = _text.parse_records(data, ncols, COLUMNS, path)
    except _text.BadToken as bad:
        if bad.column < 2 and labels is None:
            raise _NamesFound() from None
        what = "weight" if bad.column == 2 else f"{COLUMNS[bad.column]} vertex id"
        raise FloydwarpError(
            f"{path}: line {_text.line_of(data, bad.offset)}: {what} {_text.show(bad.token)} is not a number") from None
    ids = values[:, :2]
    if ids.dtype.kind == "f":
        frac = np.flatnonzero(np.any(ids != np.floor(ids), axis=1) | np.any(~np.isfinite(ids), axis=1))
        if frac.size:
            if labels is None:
                raise _NamesFound()
            r = int(frac[0])
            raise FloydwarpError(
                f"{path}: line {_text.record_line(data, ncols, r)}: vertex ids must be integers, "
                f"found {values[r, 0]!r} {values[r, 1]!r}")
    # one reduction each for the common case, the offending record looked for only when there is one
    highest, lowest = ids.max(initial=-1), ids.min(initial=0)
    if highest >= MAX_VERTICES:  # before the cast: ids past int64 arrive as floats
        r = int(np.flatnonzero(np.any(ids >= MAX_VERTICES, axis=1))[0])
        check_vertex_count(int(ids[r].max()) + 1, f"{path}: line {_text.record_line(data, ncols, r)}: "
                                                   f"vertex id {int(ids[r].max())}")
    ids = ids.astype(np.int64, copy=False)
    src, dst = ids[:, 0], ids[:, 1]
    if lowest < 0:
        r = int(np.flatnonzero((src < 0) | (dst < 0))[0])
        raise FloydwarpError(
            f"{path}: line {_text.record_line(data, ncols, r)}: vertex id "
            f"{int(min(src[r], dst[r]))} is negative (ids are indices 0..n-1)")
    top = int(highest) + 1
    if n is None:
        n = top
    elif top > n:
        r = int(np.flatnonzero((src >= n) | (dst >= n))[0])
        raise FloydwarpError(
            f"{path}: line {_text.record_line(data, ncols, r)}: vertex id {int(max(src[r], dst[r]))} "
            f"is out of range 0..{n - 1} (the file declares n={n})")
    weight = _weights(path, data, ncols, values)
    return src, dst, weight, n, None


def _weights(path, data, ncols, values):
    if ncols == 2:
        return np.ones(values.shape[0], dtype=np.int64)
    w = values[:, 2]
    _text.refuse_nonfinite(w, path, lambda r: _text.record_line(data, ncols, r), "weight")
    return w


def _read_labelled(path, data, ncols, force_int):
    cols = _text.record_tokens(data, ncols, COLUMNS, path)
    m = cols[0].size
    names = np.empty(2 * m, dtype=np.result_type(cols[0].dtype, cols[1].dtype))
    names[0::2] = cols[0]
    names[1::2] = cols[1]                    # interleaved: order of first appearance
    uniq, first, inverse = np.unique(names, return_index=True, return_inverse=True)
    order = np.argsort(first, kind="stable")
    rank = np.empty(order.size, dtype=np.int64)
    rank[order] = np.arange(order.size)
    ids = rank[inverse.ravel()]
    try:
        label_list = [s.decode("utf-8") for s in uniq[order].tolist()]
    except UnicodeDecodeError:
        raise _not_utf8(path, data) from None
    if force_int and all(re.fullmatch(r"[+-]?\d+", s) for s in label_list):
        label_list = [int(s) for s in label_list]
        if len(set(label_list)) != len(label_list):     # "01" and "1"
            raise FloydwarpError(f"{path}: vertex ids {sorted(label_list)[:5]}... name the same integer twice")
    if ncols == 3:
        weight = _token_weights(path, data, ncols, cols[2])
    else:
        weight = np.ones(m, dtype=np.int64)
    return ids[0::2], ids[1::2], weight, len(label_list), label_list


def _token_weights(path, data, ncols, tokens):
    """The weight column of a labelled edge list: int64 when every token is an integer int64
    holds (read exactly: float64 rounds those above 2**53), else float64, integral values
    below 2**53 as int64; the first token that is not a number is refused naming its line
    (Python's int() and float(), which NumPy's casts call, also take ``1_000``)."""
    where = lambda r: _text.record_line(data, ncols, r)  # noqa: E731
    try:
        if (np.char.find(tokens, b"_") >= 0).any():
            raise ValueError
        try:
            return tokens.astype(np.int64)
        except (ValueError, OverflowError):
            weight = tokens.astype(np.float64)
    except ValueError:
        r = next(i for i, t in enumerate(tokens.tolist()) if not _text.is_number(t))
        raise FloydwarpError(f"{path}: line {where(r)}: weight {_text.show(tokens[r])} is not a number") from None
    _text.refuse_nonfinite(weight, path, where, "weight")
    if np.all(weight == np.round(weight)) and np.all(np.abs(weight) < 2 ** 53):
        weight = weight.astype(np.int64)
    return weight


def _not_utf8(path, data) -> FloydwarpError:
    """The error for the first byte of ``data`` that is not UTF-8, with its line."""
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return FloydwarpError(f"{path}: line {_text.line_of(data, exc.start)}: byte {data[exc.start]:#04x} "
                              "is not UTF-8 text (vertex names and fields must be UTF-8)")
    return FloydwarpError(f"{path}: not UTF-8 text")


def _read_quoted(path, data, delimiter, labels, header, n):
    """Quoted CSV (line-by-line Python, :func:`floydwarp.io._text.quoted_rows`)."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise _not_utf8(path, data) from None
    rows, lines = [], []
    for row, line in _text.quoted_rows(path, text, delimiter):
        rows.append(row)
        lines.append(line)
    if not rows:
        return _empty(n, labels)
    if header is None:
        header = _looks_like_header([f.encode() for f in rows[0]])
    if header:
        rows, lines = rows[1:], lines[1:]
    ncols = len(rows[0]) if rows else 2
    if ncols not in (2, 3):
        raise FloydwarpError(f"{path}: line {lines[0]}: expected 'source target [weight]', found {ncols} fields")
    for row, ln in zip(rows, lines):
        if len(row) != ncols:
            raise FloydwarpError(f"{path}: line {ln}: expected {ncols} fields ({' '.join(COLUMNS[:ncols])}), "
                                 f"found {len(row)}")
    names = [f for row in rows for f in row[:2]]
    numeric_ids = labels is not True and all(re.fullmatch(r"[+-]?\d+", f) for f in names)
    if labels is False and not numeric_ids:
        bad = next(i for i, f in enumerate(names) if not re.fullmatch(r"[+-]?\d+", f))
        raise FloydwarpError(f"{path}: line {lines[bad // 2]}: vertex id {names[bad]!r} is not an integer")
    weights = []
    for row, ln in zip(rows, lines):
        if ncols == 3:
            if not _text.is_number(row[2].encode()):       # int() and float() also take 1_000 and "１２"
                raise FloydwarpError(f"{path}: line {ln}: weight {row[2]!r} is not a number")
            w = int(row[2]) if _text.is_integer(row[2].encode()) else float(row[2])
            if isinstance(w, float) and not np.isfinite(w):
                raise FloydwarpError(f"{path}: line {ln}: weight {w} is not a finite number")
            weights.append(w)
        else:
            weights.append(1)
    weight = np.asarray(weights)
    if numeric_ids:
        huge = next((i for i, f in enumerate(names) if int(f) >= MAX_VERTICES), None)
        if huge is not None:
            check_vertex_count(int(names[huge]) + 1, f"{path}: line {lines[huge // 2]}: vertex id {names[huge]}")
        ids = np.asarray([int(f) for f in names], dtype=np.int64)
        if ids.size and ids.min() < 0:
            bad = int(np.flatnonzero(ids < 0)[0])
            raise FloydwarpError(f"{path}: line {lines[bad // 2]}: vertex id {ids[bad]} is negative "
                                 "(ids are indices 0..n-1)")
        top = int(ids.max(initial=-1)) + 1
        if n is not None and top > n:
            bad = int(np.flatnonzero(ids >= n)[0])
            raise FloydwarpError(f"{path}: line {lines[bad // 2]}: vertex id {ids[bad]} is out of range 0..{n - 1} "
                                 f"(the file declares n={n})")
        return ids[0::2], ids[1::2], weight, max(top, n or 0), None
    index: dict = {}
    conv = int if labels is True and all(re.fullmatch(r"[+-]?\d+", f) for f in names) else str
    ids = np.asarray([index.setdefault(conv(f), len(index)) for f in names], dtype=np.int64)
    return ids[0::2], ids[1::2], weight, len(index), list(index)


# ---------------------------------------------------------------------- writing
def write(graph: Graph, path, *, delimiter: str | None = None, header: bool | None = None, inputs=()):
    """Write ``graph`` as an edge list (atomically)."""
    path = Path(path)
    base = path.name.lower().removesuffix(".gz")
    if delimiter is None:
        delimiter = "," if base.endswith(".csv") else "\t" if base.endswith(".tsv") else " "
    tabular = base.endswith((".csv", ".tsv"))
    if header is None:
        header = tabular
    _refuse_integer_twins(graph.labels, path)
    src, dst, w = _with_every_vertex(graph, *graph.edges())
    sep = delimiter.encode()
    with atomic_path(path, inputs=inputs) as tmp, _text.open_for_write(tmp, path) as fh:
        if header:
            fh.write(sep.join(c.encode() for c in COLUMNS) + b"\n")
        else:
            flag = "" if graph.labels is None else " labels"
            fh.write(f"# floydwarp edgelist n={graph.n} m={src.size}{flag}\n".encode())
        if graph.labels is None:
            _text.write_blocks(fh, _text.format_rows([src, dst, w], sep))
        else:
            names = [_name(lab, delimiter, header) for lab in graph.labels]
            weights = np.asarray(w)
            wtext = ([str(int(x)) for x in weights.tolist()] if weights.dtype.kind in "iu"
                     or np.all(weights == np.round(weights)) else [repr(float(x)) for x in weights.tolist()])
            out = [f"{names[a]}{delimiter}{names[b]}{delimiter}{c}\n"
                   for a, b, c in zip(src.tolist(), dst.tolist(), wtext)]
            fh.write("".join(out).encode())
    return path


def _refuse_integer_twins(labels, path):
    """Labels that are all integers as text ("01", "1", "2") are read back as integers (vertex
    indices, or integer labels): two naming the same integer would come back as one vertex."""
    if labels is None:
        return
    texts = [str(lab) for lab in labels]
    if not all(_text.is_integer(t.encode()) for t in texts):
        return
    seen = {}
    for t in texts:
        twin = seen.setdefault(int(t), t)
        if twin != t:
            raise FloydwarpError(f"{path}: vertex labels {twin!r} and {t!r} name the same integer, which an edge "
                                 "list reads back as one vertex; give them other names")


def _with_every_vertex(graph: Graph, src, dst, w):
    """The edges, plus a zero-weight self-loop for each vertex the reader would otherwise not
    recover.  Labels are read in order of first appearance, so a labelled graph needs one for
    every vertex that no edge names; integer ids are indices (``n`` = largest id + 1), so an
    unlabelled graph needs one for its last vertex only, where no edge names it (a CSV file
    has no other room for ``n``)."""
    named = np.zeros(graph.n, bool)
    named[src] = True
    named[dst] = True
    unnamed = np.flatnonzero(~named)
    if graph.labels is None:
        unnamed = unnamed[unnamed == graph.n - 1]
    if not unnamed.size:
        return src, dst, w
    return (np.concatenate([src, unnamed]), np.concatenate([dst, unnamed]),
            np.concatenate([w, np.zeros(unnamed.size, w.dtype)]))


def _name(label, delimiter, header) -> str:
    """A label as a field: quoted where it holds a space, a quote or a character the reader
    could take for the separator (:func:`_detect_separator`, from the first line: the header
    where there is one); refused where the file is whitespace-separated, which has no quotes."""
    text = str(label)
    risky = '"' if header and delimiter.isspace() else _QUOTED
    if not text or any(ch.isspace() or ch in risky for ch in text) or text[0] in "#%":
        if delimiter.isspace():
            raise FloydwarpError(
                f"vertex label {text!r} cannot be written to a whitespace-separated edge list; "
                "write a .csv file instead")
        return '"' + text.replace('"', '""') + '"'
    return text
