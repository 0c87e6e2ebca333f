"""Panel products and the out-of-core GPU engine on a real device, against independent references.

Skipped cleanly without CuPy or a CUDA GPU.  Run with ``pytest -m gpu``.
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from conftest import require_gpu

cp = require_gpu()

import floydwarp as fw  # noqa: E402
from floydwarp.errors import DtypeError, FloydwarpError  # noqa: E402
from floydwarp.generate import erdos_renyi  # noqa: E402
from floydwarp.gpu import ooc, panel, tiles  # noqa: E402
from floydwarp.numeric import inf_of  # noqa: E402

pytestmark = pytest.mark.gpu

DTYPES = ["int16", "int32", "int64", "float32", "float64"]


def _minplus_ref(c, a, b, clamp_at=None):
    """min(c, a (x) b) by broadcasting, in int64 / float64."""
    wide = np.int64 if np.dtype(c.dtype).kind == "i" else np.float64
    s = (a.astype(wide)[:, :, None] + b.astype(wide)[None, :, :]).min(axis=1)
    if clamp_at is not None:
        s = np.maximum(s, clamp_at)
    return np.minimum(c.astype(wide), s).astype(c.dtype)


def _random(rng, shape, dtype, lo=-50, hi=100):
    return rng.integers(lo, hi, size=shape).astype(dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("m,n,k", [(64, 64, 64), (128, 192, 64), (192, 64, 256), (320, 256, 128)])
def test_minplus_matches_broadcast(dtype, m, n, k):
    rng = np.random.default_rng(m * 7 + n * 3 + k)
    a, b, c = _random(rng, (m, k), dtype), _random(rng, (k, n), dtype), _random(rng, (m, n), dtype, 0, 300)
    # operands as views into larger pitched buffers, as the engines pass them
    big_c = cp.zeros((m + 64, n + 128), dtype)
    big_c[:m, 64:64 + n] = cp.asarray(c)
    big_b = cp.zeros((k, n + 64), dtype)
    big_b[:, :n] = cp.asarray(b)
    at = panel.to_words(cp.asarray(a))
    panel.minplus(big_c[:m, 64:64 + n], at, big_b[:, :n], panel.Arith(0))
    np.testing.assert_array_equal(cp.asnumpy(big_c[:m, 64:64 + n]), _minplus_ref(c, a, b))
    assert (cp.asnumpy(big_c[:, :64]) == 0).all() and (cp.asnumpy(big_c[m:]) == 0).all()


def _nonneg_floats(rng, shape):
    """Non-negative float32 entries with fractions, zeros of both signs and +inf."""
    x = (rng.random(shape) * 100).astype(np.float32)
    x.flat[rng.choice(x.size, x.size // 10, replace=False)] = np.inf
    x.flat[rng.choice(x.size, x.size // 20, replace=False)] = 0.0
    x.flat[rng.choice(x.size, x.size // 20, replace=False)] = -0.0
    return x


@pytest.mark.parametrize("m,n,k", [(64, 64, 64), (192, 320, 128), (256, 128, 448)])
def test_nonneg_float32_products(m, n, k):
    """The non-negative float32 kernel (two sums per three-way integer min) gives the
    signed kernel's floats and the reference's, inf and signed zeros included."""
    rng = np.random.default_rng(m + n + k)
    a, b, c = _nonneg_floats(rng, (m, k)), _nonneg_floats(rng, (k, n)), _nonneg_floats(rng, (m, n))
    at = panel.to_words(cp.asarray(a))
    got = {}
    for nonneg in (False, True):
        dc = cp.asarray(c)
        panel.minplus(dc, at, cp.asarray(b), panel.Arith(np.float32(-np.inf), nonneg=nonneg), blocks=5)
        got[nonneg] = cp.asnumpy(dc)
    want = _minplus_ref(c, a, b)
    np.testing.assert_array_equal(got[True], want)
    np.testing.assert_array_equal(got[True], got[False])


def test_fast_float32_with_fractional_weights():
    """Whole runs with non-negative fractional weights: the non-negative products and
    the signed ones give the same floats, equal to the float64 reference within rounding."""
    rng = np.random.default_rng(11)
    n = 700
    w = np.where(rng.random((n, n)) < 0.05, rng.random((n, n)) * 10, np.inf)
    np.fill_diagonal(w, 0)
    g = fw.Graph.from_dense(w)
    runs = [fw.solve(g, backend="gpu", algorithm="fast", dtype="float32", fast_variant="wide", wide_width=192,
                     nonneg_products=x)
            for x in (True, False)]
    np.testing.assert_array_equal(runs[0].to_dense(), runs[1].to_dense())
    ref = fw.solve(g, backend="reference", dtype="float64").to_dense()
    np.testing.assert_allclose(runs[0].to_dense(), ref, rtol=1e-5)


@pytest.mark.parametrize("dtype", ["int16", "int32", "float32"])
def test_minplus_skips_rows_and_columns(dtype):
    rng = np.random.default_rng(5)
    m, n, k = 256, 320, 64
    a, b, c = _random(rng, (m, k), dtype), _random(rng, (k, n), dtype), _random(rng, (m, n), dtype, 0, 300)
    dc = cp.asarray(c)
    panel.minplus(dc, panel.to_words(cp.asarray(a)), cp.asarray(b), panel.Arith(0),
                  skip_rows=(1, 2), skip_cols=(3, 1), blocks=3)
    want = _minplus_ref(c, a, b)
    want[64:192] = c[64:192]
    want[:, 192:256] = c[:, 192:256]
    np.testing.assert_array_equal(cp.asnumpy(dc), want)


@pytest.mark.parametrize("dtype", ["int16", "int32", "int64"])
def test_minplus_clamps_at_minus_inf(dtype):
    inf = inf_of(dtype)
    a = np.full((64, 64), -inf + 1, dtype)
    b = np.full((64, 64), -inf + 1, dtype)
    c = np.zeros((64, 64), dtype)
    dc = cp.asarray(c)
    panel.minplus(dc, panel.to_words(cp.asarray(a)), cp.asarray(b), panel.Arith(-inf, clamp=True))
    assert (cp.asnumpy(dc) == -inf).all()


@pytest.mark.parametrize("dtype", ["int16", "int32", "float64"])
def test_row_panel_in_place_equals_out_of_place(dtype):
    """C aliasing B (the pivot row panel): the same result as with a separate copy of B,
    and the closed pivot block equals the reference on the first 64 vertices."""
    from floydwarp.plan import Plan

    inf = inf_of(dtype)
    g = erdos_renyi(192, 20.0, seed=4, potential=10)
    d = g.to_matrix(dtype, inf)
    plan = Plan(n=192, dtype=np.dtype(dtype), inf=inf, clamp=True, backend="gpu", algorithm="fast")
    full = cp.asarray(d)
    tiles.close_block(full[:64, :64], plan)
    row = full[:64]
    pt = panel.to_words(full[:64, :64].copy())
    separate = row.copy()
    panel.minplus(separate, pt, row.copy(), panel.Arith(-inf, clamp=True), skip_cols=(0, 1))
    panel.minplus(row, pt, row, panel.Arith(-inf, clamp=True), skip_cols=(0, 1))
    np.testing.assert_array_equal(cp.asnumpy(row), cp.asnumpy(separate))
    sub = fw.solve(fw.Graph.from_dense(g.to_matrix("float64", np.inf)[:64, :64]),
                   backend="reference", dtype="float64").to_dense()
    got = cp.asnumpy(full[:64, :64]).astype(np.float64)
    got[got >= inf] = np.inf
    np.testing.assert_array_equal(got, sub)


# ---------------------------------------------------------------------- the engine
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", [0, 1, 2, 63, 65, 200, 333])
@pytest.mark.parametrize("kind", ["pos", "neg"])
def test_out_of_core_matches_reference(dtype, n, kind):
    g = erdos_renyi(n, 10.0, seed=n + 17, potential=20 if kind == "neg" else 0)
    ref = fw.solve(g, backend="reference", dtype="float64").to_dense()
    try:
        r = fw.solve(g, backend="gpu", algorithm="out-of-core", dtype=dtype, panel_width=64)
    except DtypeError as exc:  # int16 cannot hold this graph's paths: not this test's business
        pytest.skip(f"{dtype}: {exc}")
    assert r.metadata["out_of_core"] and r.metadata["panel_width"] == 64
    np.testing.assert_array_equal(r.to_dense(), ref)


@pytest.mark.parametrize("width", [64, 128, 192])
def test_panel_widths_that_do_not_divide_n(width):
    g = erdos_renyi(700, 3.0, seed=width, potential=30)
    ref = fw.solve(g, backend="cpu", dtype="int32").dist
    r = fw.solve(g, backend="gpu", algorithm="out-of-core", dtype="int32", panel_width=width)
    np.testing.assert_array_equal(r.dist, ref)
    assert r.metadata["rounds"] == -(-700 // width)


def test_negative_cycles_out_of_core():
    g = erdos_renyi(300, 5.0, seed=9, weights=(-5, 10))
    ref = fw.solve(g, backend="reference", dtype="float64")
    r = fw.solve(g, backend="gpu", algorithm="out-of-core", dtype="int32", panel_width=128)
    assert r.has_negative_cycle == ref.has_negative_cycle
    np.testing.assert_array_equal(r.negative_cycle_vertices, ref.negative_cycle_vertices)


def test_fast_goes_out_of_core_under_a_memory_cap():
    n = 3000
    g = erdos_renyi(n, 0.3, seed=3)
    ref = fw.solve(g, backend="cpu", dtype="int32").dist
    cap = 30 << 20          # in core needs about 36 MB
    r = fw.solve(g, backend="gpu", dtype="int32", max_gpu_memory=cap)
    assert r.algorithm == "fast" and r.metadata["out_of_core"]
    assert r.metadata["gpu_bytes"] <= cap and r.metadata["panel_width"] < n
    np.testing.assert_array_equal(r.dist, ref)


def test_cap_too_small_is_refused():
    with pytest.raises(FloydwarpError, match="max_gpu_memory|may be used"):
        fw.solve(erdos_renyi(3000, 0.3, seed=3), backend="gpu", dtype="int32", max_gpu_memory=1 << 20)


def test_predecessors_are_refused_out_of_core():
    with pytest.raises(FloydwarpError, match="out-of-core cannot compute predecessors"):
        fw.solve(erdos_renyi(100, 5.0, seed=1), backend="gpu", algorithm="out-of-core", predecessors=True)


def test_memory_mapped_matrix(tmp_path):
    g = erdos_renyi(500, 2.0, seed=8, potential=10)
    ref = fw.solve(g, backend="cpu", dtype="int32").dist
    r = fw.solve(g, backend="gpu", algorithm="out-of-core", dtype="int32", panel_width=128, workdir=tmp_path)
    assert r.metadata["host_memory"] == "memory-mapped" and isinstance(r.dist, np.memmap)
    np.testing.assert_array_equal(r.dist, ref)
    assert (tmp_path / "dist.npy").exists()


class _Stop(Exception):
    pass


def _stopped_then_resumed(g, folder, stop_at, **kw):
    """Stop when round ``stop_at`` reports (rounds before it are checkpointed), then resume."""
    def stop(done, total):
        if done == stop_at:
            raise _Stop

    with pytest.raises(_Stop):
        fw.solve(g, backend="gpu", dtype="int32", checkpoint=folder, checkpoint_every=0, progress=stop, **kw)
    return fw.solve(g, backend="gpu", dtype="int32", resume=folder, **kw)


def test_checkpoint_and_resume_bit_identical(tmp_path):
    g = erdos_renyi(640, 2.0, seed=12, potential=15)
    kw = dict(algorithm="out-of-core", panel_width=128)
    whole = fw.solve(g, backend="gpu", dtype="int32", **kw).dist
    np.testing.assert_array_equal(_stopped_then_resumed(g, tmp_path, 2, **kw).dist, whole)
    with pytest.raises(FloydwarpError, match="dtype"):
        fw.solve(g, backend="gpu", dtype="int64", resume=tmp_path, **kw)


def test_pcie_probe_reports_rates():
    rates = ooc.pcie_bandwidth(cp.cuda.Device().id)
    assert rates["h2d"] > 1e9 and rates["d2h"] > 1e9


def test_fast_checkpoints_through_host_memory(tmp_path):
    g = erdos_renyi(700, 2.0, seed=21, potential=10)
    whole = fw.solve(g, backend="gpu", dtype="int32").dist
    r = _stopped_then_resumed(g, tmp_path, 2, panel_width=192)
    assert r.algorithm == "fast" and r.metadata["out_of_core"]
    np.testing.assert_array_equal(r.dist, whole)


def test_other_gpu_algorithms_refuse_to_checkpoint(tmp_path):
    with pytest.raises(TypeError, match=r"'checkpoint' \(gpu/blocked does not take it; .*gpu/fast, gpu/out-of-core"):
        fw.solve(erdos_renyi(100, 5.0, seed=1), backend="gpu", algorithm="blocked", checkpoint=tmp_path)


#: a process of out-of-core solves checked against the CPU (its exit status: how many were wrong)
_OOC_RUNS = r"""
import sys, numpy as np, floydwarp as fw
from floydwarp.generate import erdos_renyi
wrong = 0
for i in range(int(sys.argv[1])):
    n = (1, 2, 63, 65, 200, 333)[i % 6]
    g = erdos_renyi(n, 10.0, seed=i, potential=20 * (i % 2))
    for dtype in ("int16", "int32", "float32", "float64"):
        try:
            r = fw.solve(g, backend="gpu", algorithm="out-of-core", dtype=dtype, panel_width=64)
        except fw.DtypeError:
            continue
        want = fw.solve(g, backend="cpu", dtype=dtype).dist
        wrong += not np.array_equal(r.dist, want)
sys.exit(min(wrong, 100))
"""
#: a process that keeps the GPU's SMs busy (in-core solves, the result left on the device)
_BUSY = r"""
import floydwarp as fw
from floydwarp.generate import erdos_renyi
g = erdos_renyi(4096, 5.0, seed=1)
while True:
    fw.solve(g, backend="gpu", dtype="int32", output="device")
"""


def test_out_of_core_beside_other_processes():
    """Issue 35, item 1: out-of-core runs on a GPU that other processes keep busy came back all
    INF.  Four processes of out-of-core solves beside two that keep the SMs busy: every result
    right (a lost copy would also fail solve()'s diagonal check, exit status 1)."""
    env = {**os.environ, "PYTHONPATH": str(Path(fw.__file__).resolve().parents[1])}
    busy = [subprocess.Popen([sys.executable, "-c", _BUSY], env=env) for _ in range(2)]
    try:
        runs = [subprocess.Popen([sys.executable, "-c", _OOC_RUNS, "24"], env=env) for _ in range(4)]
        codes = [p.wait(timeout=400) for p in runs]
    finally:
        for p in busy:
            p.kill()
            p.wait()
    assert codes == [0, 0, 0, 0]
