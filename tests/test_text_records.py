"""io/_records.py: text records of numbers read by Numba passes split over threads, against
Python's own reading (``int``, and ``float``, which rounds correctly as strtod does) and
_text.py's NumPy reader, which takes over for anything else."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from floydwarp import team
from floydwarp.io import _records, _text

pytest.importorskip("numba")

SETTINGS = dict(deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@pytest.fixture(params=[1, 3], ids=["one-part", "three-parts"])
def parts(request, monkeypatch):
    """Read in one part, or in about three parts over three threads whatever the size."""
    monkeypatch.setattr(team, "GRAIN", 1 if request.param > 1 else 1 << 40)
    monkeypatch.setattr(team, "default_threads", lambda: request.param)
    return request.param


def read(data: bytes, ncols: int, parts: int):
    """_records.read over about ``parts`` pieces of ``data`` split at line starts."""
    return _records.read(data, ncols, [lo for lo, _ in _text._chunks(data, max(1, -(-len(data) // parts)))])


def python_records(data: bytes, ncols: int):
    rows = [line.split() for line in data.split(b"\n")]
    tokens = [t for r in rows for t in r]
    real = any(not t.lstrip(b"+-").isdigit() for t in tokens)
    kind = float if real else int
    return np.array([[kind(t) for t in r] for r in rows if r], np.float64 if real else np.int64).reshape(-1, ncols)


_SPACE = st.sampled_from([b" ", b"  ", b"\t", b" \r", b"\x0b", b"\x0c"])
_SIGN = st.sampled_from([b"", b"-", b"+"])


def _digits(least: int, most: int):
    """``least``..``most`` ASCII digits, leading zeros too.  (``st.text`` draws them as one
    string; ``st.from_regex`` drew them digit by digit, and made these tests 2.5 times slower.)"""
    return st.text("0123456789", min_size=least, max_size=most).map(str.encode)


_INTEGER = st.builds(lambda sign, digits: sign + digits, _SIGN, _digits(1, 18))
# reals within the exact fast path: <= 15 significant digits, |exponent| small enough
_REAL = st.one_of(
    st.builds(lambda sign, a, b: sign + a + b"." + b, _SIGN, _digits(0, 7), _digits(1, 7)),
    st.builds(lambda sign, a, f, e: sign + a + f + e, _SIGN, _digits(1, 6),
              st.one_of(st.just(b""), _digits(0, 6).map(lambda f: b"." + f)),
              st.sampled_from([b"e5", b"E-3", b"e+12", b"e-9", b"E0", b"e-10"])),
    st.sampled_from([b"0.1", b"0.2", b"0.3", b"-0.0", b"5.", b".5", b"1e22", b"1e-22", b"123456789012345.0",
                     b"0.000000000000001"]))


@st.composite
def number_files(draw, token):
    ncols = draw(st.sampled_from([2, 3]))
    lines = []
    for _ in range(draw(st.integers(0, 40))):
        if draw(st.booleans()) and draw(st.booleans()):
            lines.append(draw(_SPACE) if draw(st.booleans()) else b"")        # a blank line
            continue
        tokens = [draw(token) for _ in range(ncols)]
        lead, trail = draw(st.sampled_from([b"", b" ", b"\t"])), draw(st.sampled_from([b"", b" ", b"\r"]))
        lines.append(lead + b"".join(t + draw(_SPACE) for t in tokens[:-1]) + tokens[-1] + trail)
    end = draw(st.sampled_from([b"", b"\n"]))                # the last line may lack its newline
    return b"\n".join(lines) + end, ncols


@settings(max_examples=150, **SETTINGS)
@given(case=number_files(_INTEGER))
def test_integer_records_are_pythons(parts, case):
    data, ncols = case
    got = read(data, ncols, parts)
    assert got is not None and got.dtype == np.int64
    assert np.array_equal(got, python_records(data, ncols))


@settings(max_examples=200, **SETTINGS)
@given(case=number_files(st.one_of(_INTEGER.filter(lambda t: len(t.lstrip(b"+-")) <= 15), _REAL)))
def test_real_records_are_correctly_rounded(parts, case):
    """Any real token makes every value float64, each the correctly rounded value of its token
    (the sign of zero too), as strtod -- and NumPy's reader -- give it."""
    data, ncols = case
    got = read(data, ncols, parts)
    want = python_records(data, ncols)
    assert got is not None and got.dtype == want.dtype
    assert got.tobytes() == want.tobytes()


@pytest.mark.parametrize("text", [
    b"1 2 3\n4 5\n",                  # a line with too few fields
    b"1 2 3\n4 5 6 7\n",              # too many
    b"1 2 inf\n",                     # not finite: NumPy's reader words the refusal
    b"1 2 nan\n",
    b"a b 1\n",                       # names
    b"1 2 -\n",                       # a sign alone
    b"1 2 .\n",
    b"1 2 1e\n",
    b"1 2 3-4\n",
    b"1 2 +-3\n",
    b"1 2 1.5.5\n",
    b"1 2 1234567890123456789\n",     # 19 digits: past what int64 surely holds
    b"1 2 1234567890.1234567\n",      # 17 significant digits: past the exact fast path
    b"1 2 1e23\n",                    # 10^23 is not an exact float64
    b"1 2 3\x00\n",                   # a control byte that is not whitespace
    "1 2 3\u00a0\n".encode(),         # nor is a non-ASCII one
])
def test_anything_else_goes_to_the_numpy_reader(parts, text):
    assert read(text * 50, 3, parts) is None


@pytest.mark.parametrize("real", [False, True])
def test_numpy_reader_answers_alike_where_both_read(tmp_path, monkeypatch, real):
    """parse_records gives the same records either way: the Numba passes, or _text.py's chunks."""
    rng = np.random.default_rng(3)
    rows = rng.integers(-10**12, 10**12, (5000, 3))
    weights = [b"%.4f" % x for x in rng.uniform(-50, 50, 5000)] if real else [b"%d" % v for v in rows[:, 2]]
    data = b"\n".join(b"%d %d " % (a, b) + w for (a, b, _), w in zip(rows, weights)) + b"\n\n  \n"
    fast = _text.parse_records(data, 3, ("source", "target", "weight"), tmp_path / "f.txt")
    monkeypatch.setattr(_records, "read", lambda data, ncols, starts: None)
    slow = _text.parse_records(data, 3, ("source", "target", "weight"), tmp_path / "f.txt")
    assert fast.dtype == slow.dtype == (np.float64 if real else np.int64)
    assert fast.tobytes() == slow.tobytes()
