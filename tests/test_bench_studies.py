"""floydwarp bench STUDY (CPU only, small sizes) and floydwarp report: files, fields, plots, Markdown."""
from __future__ import annotations

import csv
import json
import re
import shutil
from pathlib import Path

import numpy as np
import pytest

from floydwarp import registry
from floydwarp.bench import STUDIES, BenchConfig, results, view
from floydwarp.bench.studies import budget as budget_study
from floydwarp.bench.studies import ceilings as C
from floydwarp.bench.studies import common, sizes
from floydwarp.cli.app import app
from floydwarp.cpu.reference import numpy_loop

from cli_runner import cli_runner

pytest.importorskip("matplotlib")
runner = cli_runner()
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
REPRODUCIBILITY = ("command", "argv", "seed", "floydwarp", "python", "numpy", "scipy", "numba", "cpu", "cpu_mhz",
                   "gpus", "gpu_clocks", "memory", "timestamp")


def bench(*args):
    r = runner.invoke(app, ["bench", *[str(a) for a in args]])
    assert r.exit_code == 0, r.stdout + r.stderr
    return r


def load(folder: Path, study: str) -> dict:
    return json.loads((folder / f"{study}.json").read_text())


def assert_png(path: Path):
    import matplotlib.image

    assert path.read_bytes()[:8] == PNG_MAGIC
    img = matplotlib.image.imread(path)
    assert img.ndim == 3 and img.shape[0] > 200 and img.shape[1] > 300
    assert float(np.std(img)) > 0.01                         # not a blank canvas


def assert_folder(folder: Path, study: str, min_plots: int = 1) -> dict:
    """JSON with the reproducibility fields, CSV of the same records, valid PNGs, Markdown embedding them."""
    data = load(folder, study)
    assert data["format"] == "floydwarp-bench" and data["study"] == study and data["complete"] is True
    env = data["environment"]
    for key in REPRODUCIBILITY:
        assert key in env, key
    assert env["command"].startswith(f"floydwarp bench {study}") and env["seed"] == data["config"]["seed"]
    with open(folder / f"{study}.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == len(data["records"]) > 0
    pngs = sorted(folder.glob("*.png"))
    assert len(pngs) >= min_plots
    for p in pngs:
        assert_png(p)
    md = (folder / "report.md").read_text()
    embedded = re.findall(r"!\[[^\]]*\]\(([^)]+)\)", md)
    assert sorted(embedded) == sorted(p.name for p in pngs)
    assert f"floydwarp bench {study}" in md and "| " in md
    return data


@pytest.fixture(scope="module")
def results_root(tmp_path_factory):
    return tmp_path_factory.mktemp("results")


@pytest.fixture(scope="module")
def ceilings_file(results_root):
    out = results_root / "ceilings"
    r = bench("ceilings", "--out", out)
    assert "copy" in r.stdout and "add-min" in r.stdout
    return out / "ceilings.json"


@pytest.fixture
def fake_backend(monkeypatch):
    """A backend that declares bytes_moved (as the gpu algorithms do) and remembers its plan options."""
    seen = []

    def run(graph, plan):
        seen.append(dict(plan.options, block_size=plan.block_size))
        return numpy_loop(graph, plan)

    monkeypatch.setattr(registry, "_BACKENDS", dict(registry._BACKENDS))
    monkeypatch.setattr(registry, "_IMPLS", dict(registry._IMPLS))
    monkeypatch.setitem(registry.BACKEND_MODULES, "fake", "floydwarp.cpu.reference")
    registry.register_backend("fake", "stand-in")
    registry.register("fake", "naive", default=True, bytes_moved=lambda n, isz, b: 2.0 * n ** 3 * isz,
                      options={"R": "cells a thread updates"})(run)
    registry.register("fake", "tiled", bytes_moved=lambda n, isz, b: 4.0 * n ** 3 / (b or 8) * isz)(run)
    return seen


# ---------------------------------------------------------------- ceilings
def test_ceilings_cpu(ceilings_file):
    data = assert_folder(ceilings_file.parent, "ceilings", min_plots=2)
    (cpu,) = data["records"]
    assert cpu["backend"] == "cpu" and cpu["device"] == data["environment"]["cpu"]
    assert cpu["copy_bytes_per_s"] > 1e8
    assert cpu["addmin_per_s"]["int32"] > 1e7 and cpu["addmin_per_s"]["float32"] > 1e7
    loaded = C.load(ceilings_file)
    c = C.lookup(loaded, "cpu", "int32")
    assert c["addmin"] == cpu["addmin_per_s"]["int32"] and c["copy"] == cpu["copy_bytes_per_s"]
    assert C.lookup(loaded, "gpu", "int32") is None
    # the bare dict floydwarp.gpu.ceilings.measure() returns is a gpu ceilings file
    bare = C.from_data({"device": "H100", "copy_bytes_per_s": 3e12, "addmin_per_s": {"int16x2": 9e13, "int32": 5e13}})
    assert C.lookup(bare, "gpu", "int16") == {"copy": 3e12, "addmin": 9e13, "device": "H100", "key": "int16x2"}


# ---------------------------------------------------------------- sizes
def test_sizes(results_root, ceilings_file):
    out = results_root / "sizes"
    r = bench("sizes", "--backend", "cpu", "--sizes", "32,64,128", "-r", 1, "--out", out)
    assert f"ceilings: {ceilings_file}" in r.stdout                    # found beside --out
    data = assert_folder(out, "sizes", min_plots=3)
    recs = data["records"]
    algos = {r["algorithm"] for r in recs if r["backend"] == "cpu"}
    assert {"blocked", "rows", "serial"} <= algos                      # -a all by default
    assert {r["n"] for r in recs if r["backend"] == "scipy"} == {32, 64, 128}
    blocked = [r for r in recs if r["algorithm"] == "blocked"]
    assert all(r["matches_scipy"] and r["relaxations_per_s"] > 0 and r["gb_per_s"] > 0 for r in blocked)
    assert all("pct_addmin" in r for r in blocked)                     # ceilings applied
    assert {p.name for p in out.glob("*.png")} == {"sizes-time.png", "sizes-rate.png", "sizes-vs-scipy.png"}


def test_sizes_with_real_weights(tmp_path):
    out = tmp_path / "real"
    bench("sizes", "--backend", "cpu", "-a", "blocked", "--sizes", "48", "--dtype", "float32,float64",
          "--real-weights", "-r", 1, "--out", out, "--no-plots")
    data = json.loads((out / "sizes.json").read_text())
    assert data["config"]["real_weights"] is True
    recs = [r for r in data["records"] if r["backend"] == "cpu"]
    assert len(recs) == 2 and all(r["matches_scipy"] for r in recs)     # within float32's rounding
    with pytest.raises(AssertionError, match="--real-weights is for"):
        bench("run", "--backend", "cpu", "--sizes", "32", "--real-weights")


def test_sizes_caps_slow_algorithms():
    cfg = BenchConfig(backends=["reference"], sizes=[16, 24, 32], repeats=1, max_seconds=1e-9, scipy=False)
    data = STUDIES["sizes"](cfg)
    recs = data["records"]
    assert [r["status"] for r in recs] == ["ok", "skipped", "skipped"]
    assert "predicted" in recs[1]["note"] and "--max-seconds" in recs[1]["note"]


def test_crossover():
    def rec(backend, algorithm, n, t):
        return {"backend": backend, "algorithm": algorithm, "dtype": "int32", "n": n, "time_s": t, "status": "ok"}

    recs = [rec("cpu", "blocked", 256, 1e-3), rec("gpu", "fast", 256, 4e-3), rec("gpu", "naive", 256, 9e-3),
            rec("cpu", "blocked", 512, 8e-3), rec("gpu", "fast", 512, 8e-3 * 1.5),
            rec("cpu", "blocked", 1024, 64e-3), rec("gpu", "fast", 1024, 16e-3),
            rec("cpu", "blocked", 2048, 512e-3), rec("gpu", "fast", 2048, 50e-3)]
    (c,) = sizes.crossover(recs)
    assert c["bounds"] == [512, 1024] and 512 < c["crossover_n"] < 1024
    assert c["gpu_best"][256] == [4e-3, "fast"]
    assert "faster from n ~" in c["text"]
    only_cpu = [r for r in recs if r["backend"] == "cpu"]
    assert sizes.crossover(only_cpu) == []


def test_sizes_summary_prints_the_ratios():
    def rec(backend, algorithm, n, wall, compute, dtype="int32", **extra):
        return {"backend": backend, "algorithm": algorithm, "dtype": dtype, "n": n, "time_s": wall,
                "compute_s": compute, "relaxations_per_s": n ** 3 / compute, "status": "ok", **extra}

    recs = [rec("scipy", "floyd_warshall", 1024, 2.0, 2.0, "float64"),
            rec("gpu", "fast", 1024, 2e-3, 1e-3), rec("gpu", "blocked", 1024, 4e-3, 3e-3),
            rec("gpu", "fast", 4096, 0.1, 0.08), rec("gpu", "blocked", 4096, 0.4, 0.32),
            rec("cpu", "blocked", 4096, 9.0, 9.0),
            rec("cpu", "blocked", 1024, 0.5, 0.5, "float32", speedup_vs_scipy=3.0),
            rec("cpu", "rows", 1024, 1.0, 1.0, "float32", speedup_vs_scipy=2.0)]
    lines = sizes.summary_lines({"records": recs})
    assert "at n = 4,096 (int32): gpu/fast 4x the rate of gpu/blocked (compute)" in lines
    assert not any("the rate of cpu/blocked" in ln for ln in lines)     # against its own backend only
    assert ("vs SciPy at n = 1,024 (int32): gpu/fast 1,000x faster (wall time, SciPy on the host graph of "
            "that n and density)") in lines
    assert "vs SciPy at n = 1,024 (float32): cpu/blocked 3x faster (wall time)" in lines
    assert "at n = 1,024 (float32): cpu/blocked 2x the rate of cpu/rows (compute)" in lines


# ---------------------------------------------------------------- kernels
def test_kernels_without_gpu_is_one_line_error():
    if common.usable("gpu"):
        pytest.skip("a GPU is present")
    r = runner.invoke(app, ["bench", "kernels", "--n", "64"])
    assert r.exit_code == 2
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: backend 'gpu' is not available")


def test_kernels_cpu(results_root, ceilings_file):
    out = results_root / "kernels"
    bench("kernels", "--backend", "cpu", "--n", 96, "-r", 1, "--out", out, "--ceilings", ceilings_file)
    data = assert_folder(out, "kernels", min_plots=3)
    recs = {r["algorithm"]: r for r in data["records"]}
    assert set(recs) >= {"blocked", "rows", "serial"}
    for r in recs.values():
        assert r["n"] == 96 and 0 < r["pct_addmin"] and 0 < r["pct_copy"] and r["relaxations_per_byte"] > 0
    assert (out / "kernels-roofline-cpu-int32.png").exists()


def test_kernels_uses_registered_bytes_moved(fake_backend):
    ceil = [{"backend": "cpu", "device": "x", "copy_bytes_per_s": 1e10, "addmin_per_s": {"int32": 1e9}}]
    data = STUDIES["kernels"](BenchConfig(backends=["fake"], n=12, repeats=1, ceilings=ceil))
    recs = {r["algorithm"]: r for r in data["records"]}
    naive = recs["naive"]
    assert naive["bytes_moved"] == 2.0 * 12 ** 3 * 4 and naive["traffic_model"] == "registered"
    assert naive["gb_per_s"] == pytest.approx(naive["bytes_moved"] / naive["compute_s"] / 1e9)
    assert naive["pct_copy"] == pytest.approx(naive["gb_per_s"] * 1e9 / 1e10)
    assert naive["pct_addmin"] == pytest.approx(naive["relaxations_per_s"] / 1e9)


# ---------------------------------------------------------------- block-size
def test_block_size_cpu(results_root):
    out = results_root / "block-size"
    bench("block-size", "--backend", "cpu", "--n", 96, "-b", "16,32,64", "-r", 1, "--out", out)
    data = assert_folder(out, "block-size", min_plots=1)
    recs = data["records"]
    assert [(r["sweep"], r["value"], r["block_size"]) for r in recs] == [("block_size", b, b) for b in (16, 32, 64)]
    assert data["summary"]["best"][0]["value"] in (16, 32, 64)


def test_block_size_sweeps_plan_options(fake_backend):
    cfg = BenchConfig(backends=["fake"], algorithms=["naive"], n=16, repeats=1, warmup=False,
                      sweep={"name": "R", "values": [1, 2, 4]})
    data = STUDIES["block-size"](cfg)
    assert [r["value"] for r in data["records"]] == [1, 2, 4]
    assert [o["R"] for o in fake_backend] == [1, 2, 4]                  # solve(..., R=...) -> plan.options


# ---------------------------------------------------------------- budget
def test_budget_tiny(results_root):
    out = results_root / "budget"
    bench("budget", "--backend", "cpu", "--budgets", "0.05,0.02", "--n", 32, "--out", out)
    data = assert_folder(out, "budget", min_plots=1)
    limits = {lim["budget_s"]: lim for lim in data["summary"]["limits"]}
    assert set(limits) == {0.02, 0.05}
    for lim in limits.values():
        if lim["n"]:                                        # found: within the budget, the next size over it
            assert lim["time_s"] <= lim["budget_s"]
            assert lim["next_n"] is None or (lim["next_n"] > lim["n"] and lim["next_time_s"] > lim["budget_s"])
    assert limits[0.05]["n"] is None or limits[0.02]["n"] is None or limits[0.05]["n"] >= limits[0.02]["n"] * 0.8
    assert {r["phase"] for r in data["records"]} <= {"doubling", "bisection", "halving"}
    (mem,) = data["summary"]["memory"]
    assert mem["pool"].startswith("host RAM") and mem["max_n"] > 1000 and mem["bytes_per_entry"] > 4


def test_budget_search_logic():
    """Doubling, then bisection guided by the n^3 model, on a synthetic clock."""
    calls = []

    def measure(n, budget, phase):
        calls.append((n, phase))
        return 1e-9 * n ** 3

    s = budget_study.Search(measure, 64, cap=None)
    found = s.run(1.0)                                          # exact answer: n = 1000
    assert 980 <= found["n"] <= 1000 < found["next_n"] <= 1024
    assert calls[0] == (64, "doubling") and any(p == "bisection" for _, p in calls) and len(calls) < 20
    capped = budget_study.Search(measure, 64, cap=300).run(1.0)
    assert capped["n"] == 300 and capped["limited_by"] == "memory"


# ---------------------------------------------------------------- threads
def test_threads(results_root):
    import numba

    out = results_root / "threads"
    bench("threads", "--n", 96, "-r", 1, "--out", out)
    data = assert_folder(out, "threads", min_plots=2)
    counts = list(range(1, numba.config.NUMBA_NUM_THREADS + 1))
    for algorithm in ("blocked", "rows"):
        mine = [r for r in data["records"] if r["algorithm"] == algorithm]
        assert [r["threads"] for r in mine] == counts
        assert mine[0]["speedup"] == pytest.approx(1.0) and mine[0]["efficiency"] == pytest.approx(1.0)


# ---------------------------------------------------------------- breakdown
def test_breakdown(results_root, tmp_path):
    out = results_root / "breakdown"
    bench("breakdown", "--backend", "cpu", "--sizes", "48,96", "-r", 1, "--out", out)
    data = assert_folder(out, "breakdown", min_plots=3)
    for r in data["records"]:
        assert set(r["steps_s"]) == {"generate", "write graph", "read graph", "solve", "write result"}
        assert "compute" in r["stages_s"] and r["graph_file_bytes"] > 8 and r["result_file_bytes"] == 4 * r["n"] ** 2
        assert r["total_s"] == pytest.approx(sum(r["steps_s"].values()))
    # other formats, temporary files cleaned up
    cfg = BenchConfig(backends=["cpu"], sizes=[24], repeats=1, file_formats=("mtx", "npz"), tmp_dir=str(tmp_path))
    (rec,) = STUDIES["breakdown"](cfg)["records"]
    assert rec["status"] == "ok" and rec["graph_format"] == ".mtx" and not list(tmp_path.iterdir())


# ---------------------------------------------------------------- scaling (mpiexec)
def test_scaling_mpi(results_root):
    pytest.importorskip("mpi4py")
    if shutil.which("mpiexec") is None:
        pytest.skip("no mpiexec")
    out = results_root / "scaling"
    bench("scaling", "--ranks", "1,2", "--n", 64, "-a", "blocked-2d,rows", "-r", 1, "--out", out)
    data = assert_folder(out, "scaling", min_plots=2)
    recs = {(r["mode"], r["algorithm"], r["ranks"]): r for r in data["records"]}
    assert set(recs) == {(m, a, p) for m in ("strong", "weak") for a in ("blocked-2d", "rows") for p in (1, 2)}
    for r in recs.values():
        assert r["status"] == "ok", r["note"]
        assert r["comm_share"] is not None and r["compute_s"] > 0 and r["threads_per_rank"] == 1
    assert recs[("strong", "rows", 1)]["speedup"] == pytest.approx(1.0)
    assert recs[("weak", "rows", 2)]["n"] == 80                        # 64 * 2^(1/3) = 80.6 -> 80
    assert recs[("strong", "blocked-2d", 2)]["grid"] in ([2, 1], [1, 2])
    assert len(data["summary"]["launches"]) == 2                       # one mpiexec per P


def test_scaling_weak_sizes():
    from floydwarp.bench.studies.scaling import weak_n

    assert [weak_n(1000, p) for p in (1, 2, 4, 8)] == [1000, 1256, 1584, 2000]      # n * P^(1/3), to a multiple of 8


# ---------------------------------------------------------------- scaling --gpus (run on the CPU here)
def _spans(offset):
    """A GPU's round timeline: two rounds of products on main, pivot work and broadcasts on the side."""
    rows = []
    for t in range(2):
        base = offset + 10.0 * t
        rows += [[t, "next", "main", base, base + 1.0, 0.1, 0.2], [t, "rest", "main", base + 2.0, base + 9.0, 0.3, 0.4],
                 [t + 1, "close", "side", base + 1.0, base + 1.5, 0.2, 0.25],
                 [t + 1, "bcast_pivot", "side", base + 1.5, base + 2.5, 0.25, 0.3],
                 [t + 1, "panels", "side", base + 2.5, base + 3.0, 0.3, 0.35],
                 [t + 1, "bcast_panels", "side", base + 3.0, base + 4.0, 0.35, 0.4]]
    return rows


def test_timeline_summary_says_where_a_rank_waited():
    from floydwarp.multigpu.timeline import summarize

    s = summarize(_spans(0.0))
    assert s["span"] == pytest.approx(19.0)
    assert s["busy"]["main"] == pytest.approx(16.0) and s["idle"]["main"] == pytest.approx(3.0)
    assert s["busy"]["side"] == pytest.approx(6.0)
    assert s["main_waits"] == {"total": pytest.approx(3.0), "max": pytest.approx(1.0), "count": 3}
    assert s["nccl"] == pytest.approx(4.0) and s["ops"]["rest"] == pytest.approx(14.0)
    assert s["host"] == pytest.approx(0.3)                      # 0.1 .. 0.4, overlapping spans counted once
    assert summarize([])["span"] == 0.0


def test_scaling_gpus_study_runs_end_to_end_on_the_cpu(monkeypatch, results_root):
    """The multi-GPU study's whole path (graphs, calls, ratios, timeline facts, table, plots),
    with the CPU standing in for the GPUs, so that a renamed symbol fails here."""
    from floydwarp.bench.studies import scaling_gpus

    monkeypatch.setattr(scaling_gpus, "solver", lambda p: {"backend": "cpu", "threads": 1})
    real_measure = scaling_gpus.measure

    def measure(n, gpus, dtype, edges, repeats, options):
        got = real_measure(n, gpus, dtype, edges, repeats, options)
        if gpus > 1:                                          # what a multi-GPU run reports
            ranks = [_spans(0.0), _spans(0.5)]
            got["metadata"]["timeline"] = {"columns": ["round", "op", "stream", "start_ms", "end_ms",
                                                       "host_start_ms", "host_end_ms"], "ranks": ranks,
                                           "summary": [summarize(r) for r in ranks]}
            got["metadata"]["grid"] = [1, gpus]
        return got

    from floydwarp.multigpu.timeline import summarize

    monkeypatch.setattr(scaling_gpus, "measure", measure)
    out = results_root / "scaling-gpus"
    bench("scaling", "--gpus", "1,2", "--n", 64, "-r", 1, "--out", out)
    data = assert_folder(out, "scaling", min_plots=3)
    recs = {(r["mode"], r["gpus"]): r for r in data["records"]}
    assert set(recs) == {(m, p) for m in ("strong", "weak") for p in (1, 2)}
    assert recs[("strong", 1)]["speedup"] == pytest.approx(1.0)
    assert recs[("weak", 2)]["n"] == 64 and recs[("weak", 1)]["n"] == 64     # 64 * 2^(1/3) rounds to 64
    two = recs[("strong", 2)]
    assert two["visible_comm_s"] == pytest.approx(0.003) and two["grid"] == [1, 2]
    assert "timeline" in two and "timeline" not in recs[("weak", 2)]
    assert (out / "scaling-gpus-timeline-2.png").exists()
    assert scaling_gpus.weak_n(41344, 4) == 65600 and scaling_gpus.weak_n(41344, 2) == 52096


# ---------------------------------------------------------------- report
def test_report_rebuilds_from_json(results_root, tmp_path, ceilings_file):
    # in place: every run's folder gets its report and plots back
    (results_root / "sizes" / "sizes-time.png").unlink()
    r = runner.invoke(app, ["report", str(results_root / "sizes")])
    assert r.exit_code == 0, r.output
    assert_png(results_root / "sizes" / "sizes-time.png")
    # one combined report, as docs/benchmarks.md
    md = tmp_path / "docs" / "benchmarks.md"
    r = runner.invoke(app, ["report", str(results_root), "-o", str(md)])
    assert r.exit_code == 0, r.output
    text = md.read_text()
    images = re.findall(r"!\[[^\]]*\]\(([^)]+)\)", text)
    assert images and all(img.startswith("benchmarks/") for img in images)
    for img in images:
        assert_png(md.parent / img)
    present = [d.name for d in results_root.iterdir() if (d / f"{d.name}.json").exists()]
    for study in present:
        assert f"{study}: " in text
    assert text.index("ceilings: ") < text.index("sizes: ")          # ceilings first
    # the sizes rate plot of the combined report carries the ceiling found among the runs
    sizes_data = load(results_root / "sizes", "sizes")
    assert C.matching(C.load(ceilings_file), sizes_data["environment"])


def test_report_errors(tmp_path):
    (tmp_path / "x.json").write_text("{}")
    r = runner.invoke(app, ["report", str(tmp_path / "x.json")])
    assert r.exit_code == 2 and "not a floydwarp bench JSON" in r.stderr


# ---------------------------------------------------------------- CLI and payload plumbing
def test_cli_help_lists_every_study():
    from floydwarp.cli.bench import STUDY_HELP

    assert list(STUDY_HELP) == list(STUDIES)
    text = re.sub(r"\s", "", runner.invoke(app, ["bench", "--help"]).stdout)   # lines wrap at hyphens too
    assert all(f"{name}:" in text for name in STUDIES)


def test_cli_refuses_options_of_other_studies():
    for args, fragment in ((["sizes", "--ranks", "1,2"], "--ranks is for the scaling study"),
                           (["kernels", "--budgets", "1"], "--budgets is for the budget study"),
                           (["sizes", "--threads", "1,2"], "--threads takes one value"),
                           (["block-size", "--sweep", "R"], "NAME=V,V"),
                           (["scaling", "--mode", "diagonal"], "strong or weak"),
                           (["threads", "--threads", "1,999"], "out of range")):
        r = runner.invoke(app, ["bench", *args])
        assert r.exit_code == 2, (args, r.output)
        assert fragment in r.stderr, (args, r.stderr)
        assert len(r.stderr.strip().splitlines()) == 1


def test_checkpoint_and_views(tmp_path):
    data = {"format": "floydwarp-bench", "version": 1, "study": "threads", "environment": {}, "config": {},
            "records": [{"n": 8, "status": "ok"}]}
    results.checkpoint(data, tmp_path / "t")
    saved = json.loads((tmp_path / "t" / "threads.json").read_text())
    assert saved["complete"] is False and saved["records"] == data["records"]
    for study in STUDIES:
        module = view(study)
        assert callable(module.plots) and callable(module.summary_lines) and module.columns([])
    assert view("run") is view("sizes")


def test_mpi_worker_command_carries_the_multi_gpu_knobs():
    from floydwarp.bench.studies.scaling import worker_command

    cfg = BenchConfig(repeats=2, scaling_backend="mpi-gpu", devices_per_rank=2, options={"lookahead": False},
                      block_sizes=[32])
    cmd = worker_command("mpiexec", 4, [{"n": 64, "algorithm": "x", "mode": "strong"}], cfg, 1, openmpi=True)
    assert cmd[:4] == ["mpiexec", "-n", "4", "--oversubscribe"]
    assert cmd[cmd.index("--backend") + 1] == "mpi-gpu" and cmd[cmd.index("--devices-per-rank") + 1] == "2"
    assert "lookahead=false" in cmd and cmd[cmd.index("--block-size") + 1] == "32"
    assert "--oversubscribe" not in worker_command("mpiexec", 2, [], cfg, 1, openmpi=False)
