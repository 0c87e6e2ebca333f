"""io/_integers.py: text records of integers read by Numba passes split over threads, against
Python's own reading and _text.py's NumPy reader, which takes over for anything else."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from floydwarp.cpu import team
from floydwarp.io import _integers, _text

pytest.importorskip("numba")


@pytest.fixture(params=[1, 3], ids=["one-part", "three-parts"])
def parts(request, monkeypatch):
    """Read in one part, or split into three parts whatever the size."""
    monkeypatch.setattr(team, "GRAIN", 1 if request.param > 1 else 1 << 40)
    monkeypatch.setattr(team, "default_threads", lambda: request.param)
    return request.param


def python_records(data: bytes, ncols: int):
    rows = [line.split() for line in data.split(b"\n")]
    return np.array([[int(t) for t in r] for r in rows if r], np.int64).reshape(-1, ncols)


_SPACE = st.sampled_from([b" ", b"  ", b"\t", b" \r", b"\x0b", b"\x0c"])
_TOKEN = st.builds(lambda sign, digits: sign + digits, st.sampled_from([b"", b"-", b"+"]),
                   st.from_regex(rb"\A[0-9]{1,18}\Z", fullmatch=True))


@st.composite
def integer_files(draw):
    ncols = draw(st.sampled_from([2, 3]))
    lines = []
    for _ in range(draw(st.integers(0, 40))):
        if draw(st.booleans()) and draw(st.booleans()):
            lines.append(draw(_SPACE) if draw(st.booleans()) else b"")        # a blank line
            continue
        tokens = [draw(_TOKEN) for _ in range(ncols)]
        lead, trail = draw(st.sampled_from([b"", b" ", b"\t"])), draw(st.sampled_from([b"", b" ", b"\r"]))
        lines.append(lead + b"".join(t + draw(_SPACE) for t in tokens[:-1]) + tokens[-1] + trail)
    end = draw(st.sampled_from([b"", b"\n"]))                # the last line may lack its newline
    return b"\n".join(lines) + end, ncols


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(case=integer_files())
def test_integer_records_are_pythons(parts, case):
    data, ncols = case
    got = _integers.read(data, ncols)
    assert got is not None and got.dtype == np.int64
    assert np.array_equal(got, python_records(data, ncols))


@pytest.mark.parametrize("text", [
    b"1 2 3\n4 5\n",                  # a line with too few fields
    b"1 2 3\n4 5 6 7\n",              # too many
    b"1 2 3.5\n",                     # a real weight
    b"1 2 1e3\n",
    b"1 2 inf\n",
    b"a b 1\n",                       # names
    b"1 2 -\n",                       # a sign alone
    b"1 2 3-4\n",
    b"1 2 +-3\n",
    b"1 2 1234567890123456789\n",     # 19 digits: past what int64 surely holds
    b"1 2 3\x00\n",                   # a control byte that is not whitespace
])
def test_anything_but_integer_records_goes_to_the_numpy_reader(parts, text):
    assert _integers.read(text * 50, 3) is None


def test_numpy_reader_answers_alike_where_both_read(tmp_path, monkeypatch):
    """parse_records gives the same records either way: the Numba passes, or _text.py's chunks."""
    rng = np.random.default_rng(3)
    rows = rng.integers(-10**12, 10**12, (5000, 3))
    data = b"\n".join(b" ".join(b"%d" % v for v in row) for row in rows) + b"\n\n  \n"
    fast = _text.parse_records(data, 3, ("source", "target", "weight"), tmp_path / "f.txt")
    monkeypatch.setattr(_integers, "read", lambda data, ncols: None)
    slow = _text.parse_records(data, 3, ("source", "target", "weight"), tmp_path / "f.txt")
    assert fast.dtype == slow.dtype == np.int64 and np.array_equal(fast, slow) and np.array_equal(fast, rows)
