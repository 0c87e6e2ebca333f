"""The gpu backend's host-side logic: runs everywhere, CuPy or not, GPU or not."""
from __future__ import annotations

import re
import sys

import numpy as np
import pytest

import floydwarp as fw
from floydwarp import registry
from floydwarp.errors import BackendUnavailableError
from floydwarp.gpu import device, engine, layout, modules, seed, tiles, traffic
from floydwarp.gpu.layout import Layout, pitch_elements

EXPECTED = {"sequential", "naive", "naive-shared-k", "naive-vec", "pseudo-blocked", "work-per-thread",
            "grid-sync", "blocked", "blocked-vec", "fast", "out-of-core", "bfs"}


# ---------------------------------------------------------------------- layout
@pytest.mark.parametrize("itemsize", [2, 4, 8])
@pytest.mark.parametrize("n", [1, 2, 31, 32, 33, 63, 64, 65, 100, 1000, 1025])
def test_rows_start_on_128_bytes(n, itemsize):
    p = pitch_elements(n, itemsize)
    assert p >= n and (p * itemsize) % 128 == 0 and (p - n) * itemsize < 128


def test_pitch_examples():
    assert pitch_elements(1, 2) == 64
    assert pitch_elements(32, 4) == 32
    assert pitch_elements(33, 4) == 64
    assert pitch_elements(1000, 2) == 1024
    assert pitch_elements(17, 8) == 32


@pytest.mark.parametrize("tile", [1, 16, 64, 128])
def test_layout_padding(tile):
    lay = Layout.make(65, 4, tile, predecessors=True)
    assert lay.N % tile == 0 and lay.N >= 65 and lay.N - 65 < tile
    assert lay.pitch >= lay.N and (lay.pitch * 4) % 128 == 0
    assert lay.pred_pitch >= lay.N and (lay.pred_pitch * 4) % 128 == 0
    assert lay.dist_bytes == lay.N * lay.pitch * 4 and lay.pred_bytes == lay.N * lay.pred_pitch * 4
    assert lay.tiles == lay.N // tile


def test_layout_unpadded_and_memory():
    lay = Layout.make(256, 4, 64)
    assert not lay.padded and lay.pred_pitch == 0
    assert lay.device_bytes() == 256 * 256 * 4
    lay = Layout.make(100, 4, 64, predecessors=True)
    assert lay.padded
    assert lay.device_bytes(output_copy=True) == lay.dist_bytes + lay.pred_bytes + 100 * 100 * 8
    assert lay.device_bytes(staging=10 ** 9) == lay.dist_bytes + lay.pred_bytes + 10 ** 9
    assert Layout.make(0, 2).N == 1


def test_format_bytes():
    assert layout.format_bytes(512) == "512 B"
    assert layout.format_bytes(3 * 1024 ** 3) == "3.00 GiB"


# ---------------------------------------------------------------------- kernels and modules
def test_ctypes_and_name_expressions():
    assert modules.ctype("int16") == "short" and modules.ctype(np.float64) == "double"
    assert modules.ctype("int64") == "long long"
    assert modules.name_expression("fw_blocked_p3", np.dtype("int32"), 64, True, False) == \
        "fw_blocked_p3<int, 64, true, false>"
    assert modules.name_expression("ceil_addmin_s16x2") == "ceil_addmin_s16x2"
    assert modules.ctype("uint8") == "unsigned char"          # hop counts (gpu/bfs, batches)
    with pytest.raises(ValueError):
        modules.ctype("int8")


@pytest.mark.parametrize("name", ["simple.cu", "blocked.cu", "fast.cu", "pipe.cu", "ceilings.cu", "bfs.cu",
                                  "checks.cu", "start.cu"])
def test_sources_inline_their_headers(name):
    src = modules.source(name)
    assert '#include "' not in src
    assert "FLOYDWARP_COMMON_CUH" in src


def test_no_kernel_hard_codes_a_sentinel():
    sentinels = ["16383", "1073741823", "4611686018427387903", "0x3fff", "0x3FFF", "INT_MAX", "SHRT_MAX",
                 "32767", "INFINITY", "HUGE_VAL"]
    files = sorted(modules.KERNEL_DIR.glob("*.cu")) + sorted(modules.KERNEL_DIR.glob("*.cuh"))
    assert len(files) >= 5
    for f in files:
        text = f.read_text()
        for s in sentinels:
            assert s not in text, f"{f.name} hard-codes {s}"


def test_group_expressions_cover_every_launch():
    for dt in map(np.dtype, seed.ALL_DTYPES):
        simple = seed.simple_group(dt)
        assert modules.name_expression("fw_naive", dt) in simple
        assert all(modules.name_expression("fw_pseudo", dt, r) in simple for r in seed.PSEUDO_R)
        for b in seed.BLOCK_SIZES:
            for clamp in (False, True):
                for pred in (False, True):
                    group = seed.blocked_group(dt, b, clamp, pred)
                    assert all(modules.name_expression(f"fw_blocked_p{ph}", dt, b, clamp, pred) in group
                               for ph in (1, 2, 3))
                    vec = modules.name_expression("fw_blockedvec_p3", dt, b, clamp)
                    assert (vec in group) == (not pred) and len(set(group)) == len(group) == 3 + (not pred)
        for optin in (None, 99 * 1024, 48 * 1024):
            for variant in tiles.FAST_VARIANTS:
                cfg = tiles.fast_config(dt, optin, variant)
                for clamp in (False, True):
                    # a run's module: its own clamp only
                    group = tiles.fast_group(dt, cfg, clamp)
                    assert not any(e.endswith(f"{'false' if clamp else 'true'}>") for e in group)
                    if cfg["p3"] == "fw_pipe_p3":
                        assert modules.name_expression("fw_pipe_p12", dt, cfg["b"], clamp) in group
                        assert tiles.fast_expr(dt, cfg, clamp) in group
                        continue
                    assert modules.name_expression("fw_fast_p1", dt, cfg["b"], clamp) in group
                    assert modules.name_expression("fw_fast_p2", dt, cfg["b"], clamp) in group
                    expr = tiles.fast_expr(dt, cfg, clamp)
                    if cfg["p3"] == "fw_blockedvec_p3":
                        assert expr in seed.blocked_group(dt, cfg["b"], clamp, False)
                    else:
                        assert expr in group


def _plan(dtype, weights, **options):
    from floydwarp.numeric import WeightStats, inf_of
    from floydwarp.plan import Plan

    stats = WeightStats(n=10, min_weight=min(weights), max_weight=max(weights), integral=True)
    dt = np.dtype(dtype)
    return Plan(n=10, dtype=dt, inf=inf_of(dt), clamp=dt.kind == "i" and stats.has_negative, backend="gpu",
                algorithm="fast", options=options, stats=stats)


def test_wide_width_per_dtype():
    from floydwarp.gpu import wide

    assert wide.width(_plan("int16", [1])) == 3072
    assert wide.width(_plan("int32", [1])) == wide.width(_plan("float32", [1])) == 2048
    assert wide.width(_plan("int16", [1], wide_width=128)) == 128
    with pytest.raises(fw.FloydwarpError, match="wide_width"):
        wide.width(_plan("int32", [1], wide_width=100))


@pytest.mark.parametrize("dtype", ["int16", "int32", "int64", "float32", "float64"])
def test_product_arithmetic_follows_the_weights(dtype):
    from floydwarp.gpu import panel

    dt = np.dtype(dtype)
    pos, neg = panel.Arith.of(_plan(dt, [0, 5])), panel.Arith.of(_plan(dt, [-3, 5]))
    assert pos.nonneg and not pos.clamp and not neg.nonneg
    assert neg.clamp == (dt.kind == "i")
    assert pos.ninf == (-fw.numeric.inf_of(dt) if dt.kind == "i" else -np.inf)
    assert not panel.Arith.of(_plan(dt, [0, 5], nonneg_products=False)).nonneg
    # only float32 has a non-negative kernel
    assert panel.variant(dt, pos) == (False, dt == np.float32)
    assert panel.variant(dt, neg) == (neg.clamp, False)
    assert panel.variant(dt, panel.Arith(0, clamp=True, nonneg=True)) == (True, False)


def test_pipe_config():
    for dt in ("int16", "int32", "float32"):
        assert tiles.fast_variant(dt) == tiles.WIDE and tiles.fast_variant(dt, "pipe") == "pipe"
        tm, tn, nt, minb, ku = tiles.pipe_shape(dt)
        words = tiles.PIPE_B // (2 if dt == "int16" else 1)
        assert nt == (tiles.PIPE_B // tm) * (words // tn) and 1 <= minb <= 8
        s12, s3 = tiles.pipe_smem(dt)
        assert s3 * minb <= 228 * 1024 and s12 * 4 <= 228 * 1024
        c = tiles.fast_config(dt, variant="pipe")
        assert c["b"] == tiles.PIPE_B and c["threads"] == (nt, 1)
    for dt in ("int64", "float64"):
        assert tiles.fast_variant(dt, "pipe") == "vec"
    assert tiles.pipe_shape("int32", (8, 4))[2] == 128
    assert tiles.pipe_shape("int32", (8, 4), 8)[4] == 8
    with pytest.raises(fw.FloydwarpError, match="pipe_unroll"):
        tiles.pipe_shape("int32", None, 3)
    with pytest.raises(fw.FloydwarpError, match="pipe_shape"):
        tiles.pipe_shape("int32", (3, 4))


def test_fast_config():
    c = tiles.fast_config("int32", variant="tiled")
    assert (c["b"], c["tm"], c["tn"], c["bk"], c["p3"]) == (128, 8, 8, 32, "fw_fast_p3")
    assert tiles.fast_config("float32", variant="async")["smem3"] == tiles.fast_async_smem("float32", c)
    assert tiles.fast_config("int16", variant="tiled")["p3"] == "fw_fast_p3_s16"
    assert tiles.fast_config("int16", variant="async")["variant"] == "tiled"
    assert tiles.fast_config("int16", variant="vec")["p3"] == "fw_vec_p3_s16"
    assert tiles.fast_config("float64", variant="tiled")["p3"] == "fw_blockedvec_p3"
    assert tiles.fast_config("int64")["b"] == 64
    assert tiles.fast_config("int32", 48 * 1024, "tiled")["b"] == 64   # a 128 x 128 tile does not fit
    assert tiles.fast_config("int32", 48 * 1024, "async")["smem3"] <= 48 * 1024
    assert tiles.fast_config("int32", 32 * 1024, "async")["variant"] == "tiled"
    for dt in seed.ALL_DTYPES:
        assert tiles.fast_variant(dt) in (*tiles.FAST_VARIANTS, tiles.WIDE)
        for v in tiles.FAST_VARIANTS:
            cfg = tiles.fast_config(dt, variant=v)
            assert cfg["threads"][0] * cfg["threads"][1] in (128, 256)
    assert tiles.fast_smem(4, 128) == (65536, 65536 + 1024)
    with pytest.raises(fw.FloydwarpError, match="fast_variant"):
        tiles.fast_variant("int32", "warp")


def test_blocked_shapes():
    assert seed.blocked_smem(4, 64, False) == (16384, 32768, 32768)
    assert seed.blocked_smem(4, 64, True) == (32768, 49152, 49152)
    bv, ty, smem = seed.blockedvec_shape(4, 64)
    assert (bv, ty) == (16, 16) and smem == (64 * 68 + 64 * 64) * 4
    bv, ty, _ = seed.blockedvec_shape(2, 16)
    assert bv * ty >= 32 and ty <= 16


# ---------------------------------------------------------------------- registry
def test_registry_entries():
    impls = {i.algorithm: i for i in registry.algorithms("gpu")}
    assert set(impls) == EXPECTED
    assert [a for a, i in impls.items() if i.default] == ["fast"]
    assert impls["sequential"].max_n == 512
    for a in ("naive", "blocked", "fast"):
        assert impls[a].predecessors
    assert not impls["blocked-vec"].predecessors and not impls["out-of-core"].predecessors
    for i in impls.values():
        if i.accepts is None:             # the Floyd-Warshall algorithms: every graph, every dtype
            assert set(fw.DTYPES) <= set(i.dtypes)
            assert callable(i.bytes_moved) and i.description
    bfs = impls["bfs"]
    assert bfs.preferred and bfs.predecessors and bfs.accepts is not None and bfs.description
    assert set(bfs.dtypes) == {"int16", "int32", "int64"}
    backend = registry.backend("gpu") if hasattr(registry, "backend") else registry._load("gpu")
    cpu = registry.backend("cpu")
    assert backend.auto_priority > cpu.auto_priority > 0 and backend.auto_min_n() == engine.AUTO_MIN_N


def test_traffic_models():
    assert traffic.per_k_sweep(100, 4) == 100 ** 3 * 4
    m64 = traffic.blocked_model(64)
    assert m64(4096, 4) == m64(4096, 4, 64)
    assert m64(4096, 4, 32) > m64(4096, 4, 64) > m64(4096, 4, 128)
    assert traffic.fast_model(4096, 8) == traffic.blocked_model(64)(4096, 8)
    wide = traffic.panel_model(2048)
    assert traffic.fast_model(4096, 4) == wide(4096, 4) == (2 * 4096 ** 3 / 64 + 2 * 4096 ** 3 / 2048) * 4
    assert traffic.out_of_core_model(4096, 4, 1024) == wide(4096, 4, 1024) > wide(4096, 4)
    assert m64(4096, 4) == (2 * 4096 ** 3 / 64 + 6 * 4096 ** 2) * 4


# ---------------------------------------------------------------------- probe and messages
def test_probe_without_cupy(monkeypatch):
    monkeypatch.setitem(sys.modules, "cupy", None)   # import cupy -> ImportError
    reason = device.find()
    assert reason == device.NO_CUPY
    assert "pip install 'floydwarp[gpu]'" in reason and "backend='cpu'" in reason


def test_solve_without_cupy_names_the_fallback(monkeypatch):
    monkeypatch.setitem(sys.modules, "cupy", None)
    device.probe.cache_clear()
    try:
        with pytest.raises(BackendUnavailableError, match=re.escape("pip install 'floydwarp[gpu]'")):
            fw.solve(np.zeros((3, 3)), backend="gpu")
    finally:
        device.probe.cache_clear()


def test_memory_message_names_bytes():
    msg = device.memory_message(10 ** 12, 8 * 10 ** 10, 500_000, "int32", "Some GPU", predecessors=True)
    assert "1000000000000 bytes" in msg and "80000000000 bytes" in msg
    assert "n = 500000" in msg and "backend='cpu'" in msg and "predecessors" in msg


def test_importing_engine_does_not_import_cupy():
    import subprocess

    code = ("import sys, floydwarp, floydwarp.gpu.engine, floydwarp.gpu.ceilings; "
            "from floydwarp import registry; registry.algorithms('gpu'); "
            "print('cupy' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


# ---------------------------------------------------------------------- "pipe" algorithm, emulated
def _fw(m):
    m = m.copy()
    for k in range(len(m)):
        m = np.minimum(m, m[:, k:k + 1] + m[k:k + 1, :])
    return m


def _closed_by_squaring(p):
    """fw_pipe_p12's pivot closure: min-plus squarings until nothing changes, at most
    enough of them for a walk through every vertex of the tile."""
    for _ in range((len(p) - 1).bit_length()):
        q = np.minimum(p, (p[:, :, None] + p[None, :, :]).min(axis=1))
        if (q == p).all():
            break
        p = q
    return p


def _pipe_emulated(w, b):
    """pipe.cu's round structure in NumPy: fused phases 1-2 (each block closes the pivot
    by squaring, then updates its row tile R = min(R, P (x) R) or its column tile
    C = min(C, C (x) P)), then phase 3 from the column panel and the row panel."""
    d = w.copy()
    t = len(d) // b
    for r in range(t):
        o = slice(r * b, (r + 1) * b)
        nd = d.copy()
        piv = _closed_by_squaring(d[o, o])
        nd[o, o] = piv
        for j in range(t):
            if j == r:
                continue
            row, col = d[o, j * b:(j + 1) * b], d[j * b:(j + 1) * b, o]
            nd[o, j * b:(j + 1) * b] = np.minimum(row, (piv[:, :, None] + row[None]).min(axis=1))
            nd[j * b:(j + 1) * b, o] = np.minimum(col, (col[:, :, None] + piv[None]).min(axis=1))
        d = nd.copy()
        for i in range(t):
            for j in range(t):
                if i != r and j != r:
                    a, c = d[i * b:(i + 1) * b, o], d[o, j * b:(j + 1) * b]
                    blk = nd[i * b:(i + 1) * b, j * b:(j + 1) * b]
                    nd[i * b:(i + 1) * b, j * b:(j + 1) * b] = np.minimum(blk, (a[:, :, None] + c[None]).min(axis=1))
        d = nd
    return d


@pytest.mark.parametrize("n,b", [(4, 4), (12, 4), (16, 4), (24, 8)])
def test_pipe_round_structure_is_floyd_warshall(n, b):
    rng = np.random.default_rng(n * 31 + b)
    big = 10 ** 6
    for _ in range(10):
        w = np.where(rng.random((n, n)) < 0.3, rng.integers(1, 17, (n, n)), big)
        h = rng.integers(0, 20, n)
        w = np.where(w < big, w + h[:, None] - h[None, :], big).astype(np.int64)
        np.fill_diagonal(w, 0)
        want, got = _fw(w), _pipe_emulated(w, b)
        np.testing.assert_array_equal(np.where(want > big // 2, big, want), np.where(got > big // 2, big, got))
    path = np.full((n, n), big, dtype=np.int64)     # one path through every vertex, in random order
    order = rng.permutation(n)
    path[order[:-1], order[1:]] = rng.integers(1, 5, n - 1)
    np.fill_diagonal(path, 0)
    np.testing.assert_array_equal(_fw(path), _pipe_emulated(path, b))


def test_fast_falls_back_where_shared_memory_is_short(monkeypatch):
    """'wide' (80 KiB per block for 4-byte types) and 'pipe' need more shared memory than a
    Turing GPU allows (64 KiB): 'fast' then runs 'vec' there."""
    from floydwarp.gpu import panel

    assert panel.minplus_shape("int32")[3] == 80 * 1024 and panel.minplus_shape("int16")[3] == 56 * 1024
    turing = {"name": "Turing", "smem_optin": 64 * 1024, "cc": 75, "sm_count": 40}
    hopper = dict(turing, name="Hopper", smem_optin=227 * 1024, cc=90)
    monkeypatch.setattr(device, "current", lambda: turing)
    assert tiles.variant_fits("int32", None) == "vec"
    assert tiles.variant_fits("int16", None) is None          # int16's 56 KiB fit: "wide" stays
    assert tiles.variant_fits("float64", None) is None        # "vec" already
    c = np.zeros((64, 64), np.int32)
    with pytest.raises(fw.FloydwarpError, match="shared memory"):
        panel.minplus(c, c.copy(), c.copy(), panel.Arith(0))
    monkeypatch.setattr(device, "current", lambda: hopper)
    assert tiles.variant_fits("int32", None) is None and tiles.fast_variant("int32") == tiles.WIDE


# ---------------------------------------------------------------------- transfers and stages
@pytest.mark.parametrize("rows,row_bytes", [(1, 4096), (10, 6), (5000, 2 * 30001), (32768, 131072),
                                            (70000, 4 * 70000), (3, 8191)])
def test_pieces_cover_the_rows_and_start_on_pages(monkeypatch, rows, row_bytes):
    from floydwarp.gpu import transfer

    monkeypatch.setattr(transfer, "PIECE_BYTES", 1 << 20)
    pieces = transfer._pieces(rows, row_bytes)
    assert pieces[0][0] == 0 and pieces[-1][1] == rows
    assert all(a[1] == b[0] for a, b in zip(pieces, pieces[1:]))
    assert all(r0 * row_bytes % transfer.PAGE_BYTES == 0 for r0, _ in pieces)
    # pieces are near PIECE_BYTES where a row allows it (at most one page-step of rows more)
    step = transfer.PAGE_BYTES // np.gcd(row_bytes, transfer.PAGE_BYTES)
    assert all((r1 - r0) <= max(step, (1 << 20) // row_bytes) for r0, r1 in pieces)


@pytest.mark.parametrize("r0,rows", [(0, 100), (10, 30), (0, 5), (95, 20), (40, 60), (120, 5), (0, 0)])
def test_a_fill_splits_its_rows_into_locked_and_staged(r0, rows):
    """Pieces lock rows 10..100 (20..40 not in time): a fill of any rows takes the locked ones
    by DMA, every other row (outside the pieces too) through staging, each row once."""
    from floydwarp.gpu import transfer

    pieces, locked = [(10, 20), (20, 40), (40, 100)], [True, False, True]
    direct, staged = transfer._split_rows(r0, rows, pieces, locked)
    covered = [r for a, b in direct + staged for r in range(a, b)]
    assert sorted(covered) == list(range(rows))
    assert all(any(p0 <= r0 + r < p1 and lk for (p0, p1), lk in zip(pieces, locked))
               for a, b in direct for r in range(a, b))
    assert not any(any(p0 <= r0 + r < p1 and lk for (p0, p1), lk in zip(pieces, locked))
                   for a, b in staged for r in range(a, b))


@pytest.mark.parametrize("rows,row_bytes,first", [(32768, 131072, 0), (1000, 8192, 2048), (5000, 60000, 96),
                                                  (3000, 4 * 30001, 4), (7, 4096, 100), (0, 4096, 0),
                                                  (20000, 2 * 30000, 1024)])
def test_pieces_of_rows_that_start_inside_a_page(monkeypatch, rows, row_bytes, first):
    """Rows of a shared mapping, row 0 at byte ``first`` of a page: the inner boundaries start
    pages (no page in two pieces); one piece where no row starts a page."""
    from floydwarp.gpu import transfer

    monkeypatch.setattr(transfer, "PIECE_BYTES", 1 << 20)
    pieces = transfer._pieces(rows, row_bytes, first)
    if not rows:
        assert pieces == []
        return
    assert pieces[0][0] == 0 and pieces[-1][1] == rows
    assert all(a[1] == b[0] for a, b in zip(pieces, pieces[1:]))
    assert all((first + r0 * row_bytes) % transfer.PAGE_BYTES == 0 for r0, _ in pieces[1:])
    starts = any((first + r * row_bytes) % transfer.PAGE_BYTES == 0 for r in range(rows))
    assert (len(pieces) > 1) == (starts and rows * row_bytes > (2 << 20))


def test_a_stage_gives_its_kernel_compiles_to_compile(monkeypatch):
    clock = {"s": 1.0}
    monkeypatch.setattr(modules, "compile_seconds", lambda: clock["s"])
    timings = {}
    before = modules.compile_seconds()
    clock["s"] = 1.25                                # 0.25 s of compiling inside the stage
    after = modules.record_stage(timings, "compute", 2.0, before)
    assert after == 1.25 and timings == {"compute": 1.75, "compile": 0.25}
    modules.record_stage(timings, "d2h", 0.5, after)  # nothing compiled: no change to "compile"
    assert timings == {"compute": 1.75, "compile": 0.25, "d2h": 0.5}


def test_stage_events_leave_out_the_kernels_compiled_between_them():
    # a phase timed by CUDA events holds the kernels compiled inside it (the device idles), as the
    # run's "compute" does; both leave them out, so a phase never exceeds "compute" (seen under
    # pytest -n 12 on one GPU, where each process compiles its first kernels inside a phase)
    from floydwarp.schedule import Stages

    now = {"gpu": 0.0, "compiled": 0.0}

    class Event:
        def record(self):
            self.at = now["gpu"]

    cuda = type("Cuda", (), {"Event": Event, "get_elapsed_time": staticmethod(lambda a, b: (b.at - a.at) * 1000)})
    stages = Stages(modules.EventClock(cuda, lambda: now["compiled"]))
    with stages("keys"):
        now["gpu"] += 0.5                     # 0.5 s of device time, 0.2 s of it idle while a kernel compiled
        now["compiled"] += 0.2
    with stages("phase3"):
        now["gpu"] += 1.0
    with stages("keys"):
        now["gpu"] += 0.25
    assert stages.timings() == pytest.approx({"keys": 0.55, "phase3": 1.0})
