"""floydwarp.checksum: seed 002's Fletcher-16 over the canonical int64 distances."""
from __future__ import annotations

import numpy as np
import pytest

import floydwarp as fw
from floydwarp import checksum as ck


def naive_fletcher16(data: bytes) -> int:
    s1 = s2 = 0
    for b in data:
        s1 = (s1 + b) % 255
        s2 = (s2 + s1) % 255
    return (s2 << 8) | s1


def test_known_vectors():
    # the test vectors usually quoted for Fletcher-16
    assert ck.fletcher16(b"abcde") == 0xC8F0
    assert ck.fletcher16(b"abcdef") == 0x2057
    assert ck.fletcher16(b"abcdefgh") == 0x0627
    assert ck.fletcher16(b"") == 0


@pytest.mark.parametrize("length", [1, 2, 254, 255, 256, 2039, 2040, 2041, 4080, 6123, 20000])
def test_matches_the_byte_loop(length):
    data = np.random.default_rng(length).integers(0, 256, length, dtype=np.uint8).tobytes()
    assert ck.fletcher16(data) == naive_fletcher16(data)
    assert ck.fletcher16(b"\xff" * length) == naive_fletcher16(b"\xff" * length)


def test_streaming_in_pieces_equals_one_shot(monkeypatch):
    data = np.random.default_rng(0).integers(0, 256, 50_000, dtype=np.uint8)
    state = ck.Fletcher16()
    for cut in np.array_split(data, 7):
        state.update(cut)
    assert state.value == ck.fletcher16(data) == naive_fletcher16(data.tobytes())
    monkeypatch.setattr(ck, "_MAX_ROWS", 3)           # many internal pieces
    assert ck.fletcher16(data) == naive_fletcher16(data.tobytes())


def _canonical_bytes(dist, inf):
    c = np.where(dist >= inf, 0, dist).astype("<i8")
    c[dist >= inf] = np.iinfo(np.int64).max
    return c.tobytes()


def test_definition_on_a_matrix(monkeypatch):
    d = np.array([[0, 5, 1073741823], [3, 0, 1], [1073741823, 1073741823, 0]], dtype=np.int32)
    expected = naive_fletcher16(_canonical_bytes(d, 1073741823))
    assert ck.checksum(d) == expected
    monkeypatch.setattr(ck, "_BLOCK_BYTES", 8)          # one row per block
    assert ck.checksum(d) == expected


def test_same_for_every_dtype_and_backend():
    g = fw.generate.erdos_renyi(60, 8, seed=3)          # sparse: some pairs unreachable
    sums = {ck.checksum(fw.solve(g, dtype=dt, backend="reference")) for dt in fw.DTYPES}
    assert len(sums) == 1
    r = fw.solve(g, backend="reference")
    assert np.any(r.dist >= r.inf)
    assert ck.checksum(r) == ck.checksum(r.dist) == ck.checksum(r.to_dense(), inf=np.inf)


def test_sensitive_to_one_entry_and_to_unreachable():
    r = fw.solve(fw.generate.erdos_renyi(40, 20, seed=1), dtype="int32", backend="reference")
    base = ck.checksum(r)
    d = r.dist.copy()
    d[7, 9] += 1
    assert ck.checksum(d) != base
    d = r.dist.copy()
    d[7, 9] = r.inf
    assert ck.checksum(d) != base


def test_negative_cycles_are_canonical():
    g = fw.generate.erdos_renyi(30, 15, seed=2, weights=(-4, 6))
    results = [fw.solve(g, dtype=dt, backend="reference") for dt in ("int16", "int32", "float64")]
    assert results[0].has_negative_cycle
    assert len({ck.checksum(r) for r in results}) == 1


def test_non_integral_floats_hash_as_float64():
    w = np.array([[0, 0.5, np.inf], [np.inf, 0, 0.25], [1.5, np.inf, 0]])
    r = fw.solve(w, backend="reference", dtype="float64")
    c = r.dist.astype("<f8").tobytes()
    assert ck.checksum(r) == naive_fletcher16(c)
    assert ck.format_checksum(ck.checksum(r)) == f"0x{ck.checksum(r):04x}"


def test_empty():
    assert ck.checksum(np.zeros((0, 0), dtype=np.int32)) == 0
