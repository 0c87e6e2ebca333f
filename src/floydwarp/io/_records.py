"""Numba passes that read text records of decimal numbers, on every core.

Edge lists hold integer ids and integer or decimal weights.  These passes read a file's
records in two passes over its bytes, each split into parts at line ends and run by
team.py: the first checks every line (blank, or ``ncols`` number tokens) and counts the
records of each part, noting whether any token is a real; the second writes the values into
their places, int64 when every token is an integer, else float64 -- what _text.py's NumPy
reader returns.

Exactness: an integer token has at most 18 digits (no int64 overflows); a real token
(``[+-]digits[.digits][(e|E)[+-]digits]``) has digits that make an integer below 2^53 and a
decimal exponent within +-22 once its fraction is counted in, so that its value is one exact
integer times or over one exact power of ten: one IEEE multiplication or division, which
rounds correctly (Clinger's fast path), the value ``strtod`` and NumPy give.  Anything else --
a longer number, ``inf``, a name, a line with the wrong number of fields, a control byte
that is not ASCII whitespace -- makes :func:`read` answer None, and _text.py's NumPy reader
then reads the file and words the error.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .. import team

#: The most digits an integer token may have here (10^18 - 1 < 2^63).
MAX_DIGITS = 18
#: A real token's digits, read as one integer, must stay below this to be exact as a float64.
_EXACT = 2 ** 53
#: The exact powers of ten of a float64 (10^22 is the last).
_POW10 = np.array([10.0 ** k for k in range(23)])
#: what :func:`_value` says of a token
_BAD, _INTEGER, _REAL = 0, 1, 2
#: the counting pass's places and output: none
_NO_PLACES, _NO_RECORDS = np.zeros(1, np.int64), np.zeros((0, 1), np.int64)


def read(data: bytes, ncols: int, starts) -> np.ndarray | None:
    """The ``(L, ncols)`` records of ``data`` (every non-blank line), int64 when every token
    is an integer and float64 otherwise, or None when some line is not ``ncols`` number
    tokens this module reads exactly.  ``starts``: where the parts begin (line starts, the
    first 0), which the cores share out."""
    buf = np.frombuffer(data, np.uint8)
    threads = team.shares(buf.size, buf.size)
    bounds = np.asarray([*starts, buf.size], np.int64)
    parts = bounds.size - 1
    counts, reals = np.empty(parts, np.int64), np.zeros(parts, np.bool_)
    team.run(scan_records, parts, buf, ncols, bounds, counts, reals, _NO_PLACES, _NO_RECORDS, False, False,
             threads=threads)
    if counts.min(initial=0) < 0:
        return None
    at = np.cumsum(counts) - counts
    out = np.empty((int(counts.sum()), ncols), np.float64 if reals.any() else np.int64)
    team.run(scan_records, parts, buf, ncols, bounds, counts, reals, at, out, True, out.dtype.kind == "f",
             threads=threads)
    return out


@njit(inline="always")
def _space(c):
    """ASCII whitespace: space, tab, line feed, vertical tab, form feed, carriage return."""
    return c == 32 or 9 <= c <= 13


@njit(inline="always")
def _value(negative, mantissa, big, digits, fraction, real, exponent):
    """``(kind, integer, real)`` of a token read as its parts: kind ``_INTEGER`` (its value in
    ``integer``, and as a float64 in ``real``, ``-0`` as ``-0.0`` as strtod reads it), ``_REAL``
    (its value in ``real``) or ``_BAD`` (not a number read exactly here)."""
    if digits + fraction == 0:
        return _BAD, 0, 0.0
    if not real:
        if digits > MAX_DIGITS:
            return _BAD, 0, 0.0
        return _INTEGER, -mantissa if negative else mantissa, -float(mantissa) if negative else float(mantissa)
    power = exponent - fraction
    if big or mantissa >= _EXACT or power < -22 or power > 22:
        return _BAD, 0, 0.0
    x = mantissa * _POW10[power] if power >= 0 else mantissa / _POW10[-power]
    return _REAL, 0, -x if negative else x


@njit(cache=True, nogil=True)
def scan_records(buf, ncols, bounds, counts, reals, at, out, write, real_out, first, stop):
    """Parts ``first .. stop - 1`` of the records (part t: ``buf[bounds[t]:bounds[t + 1]]``),
    read byte by byte, each token as it goes.  Without ``write``: ``counts[t]`` is the part's
    record count, or -1 when one of its lines is neither blank nor ``ncols`` number tokens,
    and ``reals[t]`` whether a token is a real.  With ``write`` (on parts that count
    accepted): the values into rows ``at[t] ..`` of ``out`` (float64 values when ``real_out``)."""
    for t in range(first, stop):
        records, tokens, row, col = 0, 0, at[t] if write else 0, 0
        any_real = False                   # kept here: a store per token into reals[t], beside
        if not write:                      # the other parts' entries, would ping-pong a cache line
            counts[t] = -1
        # the token being read: phase -1 between tokens, 0 its number, 1 right after its 'e',
        # 2 its exponent's digits
        phase, negative, mantissa, big, digits, fraction, real = -1, False, 0, False, 0, 0, False
        exponent, exponent_digits, exponent_negative = 0, 0, False
        failed = False
        for e in range(bounds[t], bounds[t + 1] + 1):
            c = buf[e] if e < bounds[t + 1] else 10          # the last line may lack its newline
            if _space(c):
                if phase >= 0:
                    if phase == 1 or (phase == 2 and exponent_digits == 0):
                        failed = True
                        break
                    kind, integer, value = _value(negative, mantissa, big, digits, fraction, real,
                                                  -exponent if exponent_negative else exponent)
                    if kind == _BAD:
                        failed = True
                        break
                    any_real = any_real or kind == _REAL
                    if write:
                        if real_out:
                            out[row, col] = value
                        else:
                            out[row, col] = integer
                        col += 1
                        if col == ncols:
                            row, col = row + 1, 0
                    tokens += 1
                    phase = -1
                if c == 10:
                    if tokens != 0 and tokens != ncols:
                        failed = True
                        break
                    if tokens != 0:
                        records += 1
                    tokens = 0
            elif phase == -1:                                # a token starts
                phase, mantissa, big, digits, fraction, real = 0, 0, False, 0, 0, False
                exponent, exponent_digits, exponent_negative = 0, 0, False
                negative = c == 45
                if 48 <= c <= 57:
                    mantissa, digits = c - 48, 1
                elif c == 46:
                    real = True
                elif c != 43 and c != 45:
                    failed = True
                    break
            elif phase == 0:
                if 48 <= c <= 57:
                    if mantissa >= 10 ** 17:
                        big = True
                    else:
                        mantissa = mantissa * 10 + (c - 48)
                    if real:
                        fraction += 1
                    else:
                        digits += 1
                elif c == 46 and not real:
                    real = True
                elif c == 101 or c == 69:                       # 'e' or 'E'
                    real, phase = True, 1
                else:
                    failed = True
                    break
            elif phase == 1:
                phase = 2
                if c == 43 or c == 45:
                    exponent_negative = c == 45
                elif 48 <= c <= 57:
                    exponent, exponent_digits = c - 48, 1
                else:
                    failed = True
                    break
            elif 48 <= c <= 57 and exponent_digits < 3:
                exponent, exponent_digits = exponent * 10 + (c - 48), exponent_digits + 1
            else:
                failed = True
                break
        if not write and not failed:
            counts[t] = records
            reals[t] = any_real
