"""Shared machinery for the text formats: fast vectorized record parsing with exact error locations.

Every text reader turns its file into "records": lines of ``ncols`` whitespace-separated
tokens (comment and header lines blanked out with spaces first, so that byte offsets --
and therefore line numbers -- stay those of the file).  A file of number records is read by
the Numba passes of _records.py, on every core; any other is parsed here in chunks of
a few MiB, each chunk in three vectorized passes:

1. a structure pass over the bytes (``uint8`` masks) that counts the tokens of every
   line, so a line with a missing or extra field is reported by number;
2. ``np.fromstring(chunk, sep=" ")`` -- NumPy's C parser -- as int64, or float64 when
   a token is not an integer;
3. only when the C parser refuses a chunk, a Python pass over that chunk's lines to
   name the offending line and token.

A delimited file with quoted fields is read by :func:`quoted_rows`, line by line in Python.
Writers use :func:`format_rows`, which formats integer columns digit by digit with
NumPy (no Python loop per line) and floats with ``repr`` (round-trip exact).
"""
from __future__ import annotations

import gzip
import re
import warnings
from pathlib import Path
from typing import Callable, Iterable, Sequence

import numpy as np

from ..errors import FloydwarpError
from ..graph import MAX_VERTICES

#: Bytes per parsing chunk: large enough to amortize NumPy call overhead, small enough
#: to keep the per-chunk masks (a few bytes per input byte) modest.
CHUNK_BYTES = 1 << 23

_NUMBER = re.compile(rb"^[+-]?(?:\d+\.?\d*(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?|inf|infinity|nan)$",
                     re.IGNORECASE)
_INTEGER = re.compile(rb"^[+-]?\d+$")


# ---------------------------------------------------------------------- files
def read_bytes(path: Path) -> bytes:
    """The file's bytes (transparently gunzipped for ``.gz``), or a FloydwarpError naming it."""
    try:
        if path.suffix.lower() == ".gz":
            with gzip.open(path, "rb") as fh:
                data = fh.read()
        else:
            data = path.read_bytes()
    except FileNotFoundError:
        raise FloydwarpError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise FloydwarpError(f"{path}: is a folder, not a file") from None
    except (OSError, EOFError) as exc:
        raise FloydwarpError(f"{path}: cannot read ({exc})") from exc
    if data.startswith(b"\xef\xbb\xbf"):          # a UTF-8 byte order mark (spreadsheet CSVs)
        data = b"   " + data[3:]                    # blanked, so offsets stay those of the file
    return data


def open_for_write(tmp: Path, target: Path):
    """A binary file handle on ``tmp``; gzip-compressed when ``target`` ends in ``.gz``."""
    if target.suffix.lower() == ".gz":
        return gzip.open(tmp, "wb", compresslevel=6)
    return open(tmp, "wb")


def line_of(data: bytes, offset: int) -> int:
    """1-based line number of a byte offset."""
    return data.count(b"\n", 0, max(offset, 0)) + 1


def is_number(token: bytes) -> bool:
    return bool(_NUMBER.match(token))


def is_integer(token: bytes) -> bool:
    return bool(_INTEGER.match(token))


def show(token: bytes) -> str:
    """A token for an error message."""
    text = token.decode("utf-8", "replace")
    return repr(text if len(text) <= 40 else text[:37] + "...")


# ---------------------------------------------------------------------- blanking
def blank_lines(data: bytes, pattern: bytes) -> bytes:
    """Replace every line matching the regular expression ``pattern`` (anchored at a line
    start) with spaces of the same length, so byte offsets and line numbers are unchanged."""
    regex = re.compile(rb"(?m)^" + pattern + rb"[^\n]*")
    return regex.sub(lambda m: b" " * len(m.group()), data)


def blank_span(data: bytes, start: int, end: int) -> bytes:
    return data[:start] + b" " * (end - start) + data[end:]


def next_line(data: bytes, pos: int = 0):
    """``(start, end)`` of the first line at or after ``pos`` with a non-blank character,
    or None (``end`` excludes the newline)."""
    n = len(data)
    while pos < n:
        end = data.find(b"\n", pos)
        if end < 0:
            end = n
        if data[pos:end].strip():
            return pos, end
        pos = end + 1
    return None


# ---------------------------------------------------------------------- records
class BadToken(Exception):
    """Raised inside parse_records: a token of a given column is not a number."""

    def __init__(self, offset, column, token):
        super().__init__(offset, column, token)
        self.offset, self.column, self.token = offset, column, token


def _chunks(data: bytes, size: int = CHUNK_BYTES) -> Iterable[tuple[int, int]]:
    """Split ``data`` at newlines into pieces of about ``size`` bytes: ``(start, end)``."""
    n = len(data)
    start = 0
    while start < n:
        end = min(start + size, n)
        if end < n:
            nl = data.rfind(b"\n", start, end)
            if nl < 0:
                nl = data.find(b"\n", end)
                end = n if nl < 0 else nl + 1
            else:
                end = nl + 1
        yield start, end
        start = end


def _line_structure(buf: np.ndarray):
    """Per line of ``buf``: byte offset of its start and number of whitespace-separated tokens."""
    ws = buf <= 32                       # space, tab, newline, CR and other controls
    nl = buf == 10
    start = ~ws
    start[1:] &= ws[:-1]                 # a token starts after whitespace (or at the chunk start)
    events = np.flatnonzero(start | nl)
    is_nl = nl[events]
    nl_at = np.flatnonzero(is_nl)
    bounds = np.empty(nl_at.size + 2, dtype=np.int64)
    bounds[0] = -1
    bounds[1:-1] = nl_at
    bounds[-1] = events.size
    counts = np.diff(bounds) - 1         # tokens between consecutive newlines
    line_starts = np.empty(nl_at.size + 1, dtype=np.int64)
    line_starts[0] = 0
    line_starts[1:] = events[nl_at] + 1
    token_starts = events[~is_nl]
    return line_starts, counts, token_starts


def _chunk_lines(data: bytes, lo: int, hi: int, ncols: int, columns: Sequence[str], path: Path):
    """``data[lo:hi]``, its token count per line and its token starts, refusing the first
    line that holds neither 0 nor ``ncols`` tokens (naming its line in ``path``)."""
    chunk = data[lo:hi]
    line_starts, counts, token_starts = _line_structure(np.frombuffer(chunk, dtype=np.uint8))
    bad = np.flatnonzero((counts != 0) & (counts != ncols))
    if bad.size:
        k = int(bad[0])
        raise FloydwarpError(
            f"{path}: line {line_of(data, lo + int(line_starts[k]))}: expected {ncols} fields "
            f"({' '.join(columns[:ncols])}), found {int(counts[k])}")
    return chunk, counts, token_starts


def parse_records(data: bytes, ncols: int, columns: Sequence[str], path: Path,
                  *, integer_columns: Sequence[int] = ()) -> np.ndarray:
    """Parse every non-blank line of ``data`` as ``ncols`` numbers: an ``(L, ncols)`` array.

    int64 when every token is an integer, else float64.  Raises FloydwarpError naming the
    line of the first record with the wrong number of fields, and :class:`BadToken` (the
    caller words it) for the first token that is not a number.  A file of numbers is read by
    the Numba passes of io/_records.py, on every core; anything else by the chunks below.
    """
    from . import _records             # imports Numba: only when a text file is read

    records = _records.read(data, ncols, [lo for lo, _ in _chunks(data)])
    if records is not None:
        return records
    parts = []
    integral = True
    for lo, hi in _chunks(data):
        chunk, counts, _ = _chunk_lines(data, lo, hi, ncols, columns, path)
        expected = int(np.count_nonzero(counts)) * ncols
        if expected == 0:                # blank lines only (NumPy's parser refuses those)
            continue
        values = None
        try:
            values = _numbers(chunk, np.int64)
            # the C parser saturates on overflow: re-read such chunks as floats
            if values.size and (values.max() == np.iinfo(np.int64).max or values.min() == np.iinfo(np.int64).min):
                values = None
        except ValueError:
            values = None
        if values is None:
            integral = False
            try:
                values = _numbers(chunk, np.float64)
            except ValueError:
                _locate_bad_token(chunk, lo, ncols)
                raise FloydwarpError(f"{path}: could not parse lines {line_of(data, lo)}-{line_of(data, hi)}")
        if values.size != expected:
            # our tokenizer and NumPy's disagree (odd control characters): find the line
            _locate_bad_token(chunk, lo, ncols)
            raise FloydwarpError(f"{path}: could not parse lines {line_of(data, lo)}-{line_of(data, hi)}")
        parts.append(values.reshape(-1, ncols))
    if not parts:
        return np.zeros((0, ncols), dtype=np.int64)
    if not integral:
        parts = [p.astype(np.float64, copy=False) for p in parts]
    return np.concatenate(parts) if len(parts) > 1 else parts[0]


def _numbers(chunk, dtype) -> np.ndarray:
    """``np.fromstring(chunk, sep=" ")``, refusing (ValueError) a chunk it cannot read to its
    end: NumPy 2 raises there, NumPy 1 only warns and returns the prefix it could read."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        try:
            return np.fromstring(chunk, dtype=dtype, sep=" ")
        except DeprecationWarning as exc:
            raise ValueError(str(exc)) from None


def _locate_bad_token(chunk: bytes, base: int, ncols: int):
    """Raise BadToken for the first token of ``chunk`` that is not a number."""
    pos = 0
    for line in chunk.split(b"\n"):
        toks = line.split()
        if toks:
            col_pos = pos
            for c, tok in enumerate(toks):
                if not is_number(tok):
                    off = chunk.find(tok, col_pos, pos + len(line))
                    raise BadToken(base + (off if off >= 0 else pos), c, tok)
                col_pos = chunk.find(tok, col_pos, pos + len(line)) + len(tok)
        pos += len(line) + 1


def record_offsets(data: bytes, ncols: int, records: np.ndarray) -> list[int]:
    """Byte offsets of the lines holding the given record numbers (for error messages)."""
    want = sorted(set(int(r) for r in records))
    out = {}
    seen = 0
    for lo, hi in _chunks(data):
        buf = np.frombuffer(data[lo:hi], dtype=np.uint8)
        line_starts, counts, _ = _line_structure(buf)
        nonblank = line_starts[counts != 0]
        for r in want:
            if seen <= r < seen + nonblank.size and r not in out:
                out[r] = lo + int(nonblank[r - seen])
        seen += nonblank.size
        if len(out) == len(want):
            break
    return [out.get(int(r), 0) for r in records]


def record_line(data: bytes, ncols: int, record: int) -> int:
    """1-based line number of record number ``record``."""
    return line_of(data, record_offsets(data, ncols, np.array([record]))[0])


def record_tokens(data: bytes, ncols: int, columns: Sequence[str], path: Path) -> list[np.ndarray]:
    """The tokens of every record as ``ncols`` NumPy byte-string arrays (one per column).

    Used for vertex names: each chunk's tokens are gathered into a fixed-width ``S``
    array with fancy indexing, no Python loop per token.
    """
    cols = [[] for _ in range(ncols)]
    for lo, hi in _chunks(data):
        chunk, _, token_starts = _chunk_lines(data, lo, hi, ncols, columns, path)
        if token_starts.size == 0:
            continue
        buf = np.frombuffer(chunk, dtype=np.uint8)
        ws = np.empty(buf.size + 1, dtype=bool)
        ws[:-1] = buf <= 32
        ws[-1] = True
        # token end: first whitespace at or after the start
        ends_mask = ws[1:] & ~ws[:-1]
        token_ends = np.flatnonzero(ends_mask) + 1
        lengths = token_ends - token_starts
        width = int(lengths.max())
        padded = np.concatenate([buf, np.zeros(width, dtype=np.uint8)])
        for c in range(ncols):
            starts = token_starts[c::ncols]
            lens = lengths[c::ncols]
            grid = padded[starts[:, None] + np.arange(width)]
            grid[np.arange(width)[None, :] >= lens[:, None]] = 0
            cols[c].append(grid.view(f"S{width}").ravel())
    return [np.concatenate(parts) if parts else np.zeros(0, dtype="S1") for parts in cols]


# ---------------------------------------------------------------------- quoted fields
_NEWLINE = re.compile(r"\r\n|\r|\n")


def quoted_rows(path, text, delimiter):
    """``(fields, line)`` of every non-blank row of a delimited text with quoted fields: a quoted
    field exactly as quoted (``""`` a quote; delimiters, spaces and newlines kept), an unquoted
    one stripped of the spaces around it.  The csv module strips both alike, so labels
    ``" a"`` and ``"a"`` were one vertex.  A quote inside an unquoted field, or one never
    closed, is refused naming its line."""
    d, blank = re.escape(delimiter), r"[^\S\r\n]*"
    field = re.compile(rf'{blank}(?:"((?:[^"]|"")*)"{blank}|([^{d}"\r\n]*?){blank})({d}|\r\n|\r|\n|\Z)')
    pos, line, first, row, quoted_any = 0, 1, 1, [], False
    while pos < len(text):
        m = field.match(text, pos)
        if m is None:
            raise FloydwarpError(f"{path}: line {line}: a quote inside an unquoted field, or a quoted field "
                                 "never closed")
        quoted, plain, end = m.groups()
        row.append(plain if quoted is None else quoted.replace('""', '"'))
        quoted_any |= quoted is not None
        line += len(_NEWLINE.findall(m.group(0)))
        pos = m.end()
        if end != delimiter:
            if quoted_any or any(row):                      # not a blank line, nor delimiters alone
                yield row, first
            row, first, quoted_any = [], line, False
    if row:                                     # the text ends just after a delimiter
        yield [*row, ""], first


# ---------------------------------------------------------------------- writing
_POW10 = np.array([10 ** k for k in range(20)], dtype=np.uint64)
#: integral floats below this magnitude are written as integers (int64 holds them)
_INT64_SAFE = 2.0 ** 63
_FORMAT_ROWS = 1 << 20


def _int_grid(values: np.ndarray):
    """Right-aligned ASCII digits of integer values (any NumPy integer dtype, uint64 included):
    ``(grid uint8 (m, w), keep bool (m, w))``."""
    if values.dtype == np.uint64:
        neg, mag = np.zeros(values.size, dtype=bool), values
    else:
        v = values.astype(np.int64, copy=False)
        neg = v < 0
        mag = np.where(neg, -(v + 1), v).astype(np.uint64) + neg.astype(np.uint64)   # |v| without overflow
    ndig = np.maximum(np.searchsorted(_POW10, mag, side="right"), 1)
    width = int((ndig + neg).max()) if mag.size else 1
    grid = np.empty((mag.size, width), dtype=np.uint8)
    rest = mag.copy()
    for p in range(width - 1, -1, -1):
        grid[:, p] = (rest % 10).astype(np.uint8) + 48
        rest //= 10
    pos_from_right = np.arange(width - 1, -1, -1)[None, :]
    keep = pos_from_right < ndig[:, None]
    sign_col = width - 1 - ndig                   # column just left of the digits
    has_sign = np.flatnonzero(neg)
    grid[has_sign, sign_col[has_sign]] = ord("-")
    keep[has_sign, sign_col[has_sign]] = True
    return grid, keep


def _text_grid(strings: Sequence[str]):
    enc = np.array([s.encode() for s in strings], dtype=object)
    width = max((len(s) for s in enc), default=1) or 1
    arr = np.array(list(enc), dtype=f"S{width}")
    grid = arr.view(np.uint8).reshape(len(enc), width)
    lens = np.array([len(s) for s in enc], dtype=np.int64)
    keep = np.arange(width)[None, :] < lens[:, None]
    return grid, keep


def format_rows(columns: Sequence[np.ndarray], sep: bytes = b" ", prefix: bytes = b"") -> Iterable[bytes]:
    """Lines ``prefix col0 sep col1 sep ... \\n`` as byte blocks.

    Integer columns are formatted with vectorized digit arithmetic; float columns use
    ``repr`` (shortest round-trip form); integral floats that int64 holds are written as
    integers (a larger one, cast, would wrap: 1e20 was written as -9223372036854775808).
    """
    m = len(columns[0]) if columns else 0
    for lo in range(0, m, _FORMAT_ROWS):
        hi = min(lo + _FORMAT_ROWS, m)
        pieces = []
        rows = hi - lo
        if prefix:
            pieces.append((np.broadcast_to(np.frombuffer(prefix, np.uint8), (rows, len(prefix))),
                           np.ones((rows, len(prefix)), dtype=bool)))
        for c, col in enumerate(columns):
            part = np.asarray(col[lo:hi])
            if part.dtype.kind == "f" and not (np.all(part == np.round(part)) and np.all(np.abs(part) < _INT64_SAFE)):
                pieces.append(_text_grid([repr(float(x)) for x in part.tolist()]))
            else:
                pieces.append(_int_grid(part if part.dtype.kind in "iu" else part.astype(np.int64)))
            tail = sep if c < len(columns) - 1 else b"\n"
            pieces.append((np.broadcast_to(np.frombuffer(tail, np.uint8), (rows, len(tail))),
                           np.ones((rows, len(tail)), dtype=bool)))
        grid = np.concatenate([g for g, _ in pieces], axis=1)
        keep = np.concatenate([k for _, k in pieces], axis=1)
        yield grid[keep].tobytes()


def write_blocks(fh, blocks: Iterable[bytes]):
    for block in blocks:
        fh.write(block)


def refuse_nonfinite(values: np.ndarray, path: Path, where: Callable[[int], int], what: str):
    """Refuse NaN / inf among ``values`` (float arrays) naming the line of the first."""
    if values.dtype.kind != "f" or values.size == 0:
        return
    bad = ~np.isfinite(values)
    if bad.any():
        k = int(np.flatnonzero(bad)[0])
        raise FloydwarpError(f"{path}: line {where(k)}: {what} {values[k]} is not a finite number")


def integer_ids(ids: np.ndarray, path: Path, where: Callable[[int], int], what: str) -> np.ndarray:
    """``ids`` (records x columns) as int64, refusing the first record with a fraction."""
    if ids.dtype.kind != "f":
        return ids
    frac = np.flatnonzero(np.any(ids != np.floor(ids), axis=1))
    if frac.size:
        r = int(frac[0])
        raise FloydwarpError(f"{path}: line {where(r)}: {what} must be integers, found {ids[r].tolist()}")
    # ids past int64 (read as floats) would wrap in the cast; no graph has that many vertices
    huge = np.flatnonzero(np.any(np.abs(ids) > MAX_VERTICES, axis=1))
    if huge.size:
        r = int(huge[0])
        raise FloydwarpError(f"{path}: line {where(r)}: {what} {ids[r].tolist()} are out of range "
                             f"(a graph has at most {MAX_VERTICES} vertices)")
    return ids.astype(np.int64)
