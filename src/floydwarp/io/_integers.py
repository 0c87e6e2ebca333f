"""Numba passes that read text records of decimal integers, on every core.

Most edge lists hold integer ids and integer weights.  These passes read such a file's
records in two passes over its bytes, each split into parts at line ends and run by
cpu/team.py: the first checks every line (blank, or ``ncols`` tokens ``[+-]digits`` of at
most 18 digits, so no int64 overflows) and counts the records of each part, the second
writes them into their places.  Anything else -- a real number, a name, a line with the
wrong number of fields, a control byte that is not ASCII whitespace -- makes :func:`read`
answer None, and _text.py's NumPy reader then reads the file and words the error.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from ..cpu import team

#: The most digits an int64 token may have here (10^18 - 1 < 2^63).
MAX_DIGITS = 18


def read(data: bytes, ncols: int) -> np.ndarray | None:
    """The ``(L, ncols)`` int64 records of ``data`` (every non-blank line), or None when some
    line is not ``ncols`` integer tokens."""
    buf = np.frombuffer(data, np.uint8)
    parts = team.shares(buf.size, buf.size)
    bounds = _line_bounds(data, parts)
    counts = np.empty(parts, np.int64)
    team.run(count_records, parts, buf, ncols, bounds, counts, threads=parts)
    if counts.min(initial=0) < 0:
        return None
    at = np.cumsum(counts) - counts
    out = np.empty((int(counts.sum()), ncols), np.int64)
    team.run(write_records, parts, buf, ncols, bounds, at, out, threads=parts)
    return out


def _line_bounds(data: bytes, parts: int) -> np.ndarray:
    """Where ``parts`` pieces of ``data`` of about equal size begin, each just after a line
    end (or at 0), and the end."""
    bounds = [0]
    for p in range(1, parts):
        cut = data.find(b"\n", max(bounds[-1], len(data) * p // parts))
        bounds.append(len(data) if cut < 0 else cut + 1)
    bounds.append(len(data))
    return np.asarray(bounds, np.int64)


@njit(cache=True, nogil=True)
def _space(c):
    """ASCII whitespace: space, tab, line feed, vertical tab, form feed, carriage return."""
    return c == 32 or 9 <= c <= 13


@njit(cache=True, nogil=True)
def count_records(buf, ncols, bounds, counts, first, stop):
    """``counts[t]``: the records of part t (``buf[bounds[t]:bounds[t + 1]]``), or -1 when one
    of its lines is neither blank nor ``ncols`` integer tokens, for ``t = first .. stop - 1``."""
    for t in range(first, stop):
        records, tokens, digits = 0, 0, -1         # digits: -1 between tokens
        counts[t] = -1
        for e in range(bounds[t], bounds[t + 1] + 1):
            c = buf[e] if e < bounds[t + 1] else 10          # the last line may lack its newline
            if _space(c):
                if digits == 0 or digits > MAX_DIGITS:           # a sign alone, or too long
                    break
                digits = -1
                if c == 10:
                    if tokens != 0 and tokens != ncols:
                        break
                    if tokens != 0:
                        records += 1
                    tokens = 0
            elif 48 <= c <= 57:
                if digits < 0:
                    tokens += 1
                    digits = 0
                digits += 1
            elif (c == 43 or c == 45) and digits < 0:            # a sign starts a token
                tokens += 1
                digits = 0
            else:
                break
        else:
            counts[t] = records


@njit(cache=True, nogil=True)
def write_records(buf, ncols, bounds, at, out, first, stop):
    """The records of parts ``first .. stop - 1``, which :func:`count_records` accepted, into
    rows ``at[t] ..`` of ``out``."""
    for t in range(first, stop):
        row, col = at[t], 0
        value, negative, in_token = 0, False, False
        for e in range(bounds[t], bounds[t + 1] + 1):
            c = buf[e] if e < bounds[t + 1] else 10
            if _space(c):
                if in_token:
                    out[row, col] = -value if negative else value
                    col += 1
                    if col == ncols:
                        row, col = row + 1, 0
                    value, negative, in_token = 0, False, False
            elif c == 45:
                negative, in_token = True, True
            elif c == 43:
                in_token = True
            else:
                value = value * 10 + (c - 48)
                in_token = True
