"""floydwarp.bench: cases, records, SciPy side by side, JSON."""
from __future__ import annotations

import json
import math

import pytest

import floydwarp as fw
from floydwarp import registry
from floydwarp.bench import STUDIES, BenchConfig, Case, plan_cases, report, run
from floydwarp.bench.environment import backend_status, environment
from floydwarp.cpu.reference import numpy_loop


@pytest.fixture
def fake_backend(monkeypatch):
    """A backend whose algorithms declare bytes_moved (as the GPU ones will)."""
    monkeypatch.setattr(registry, "_BACKENDS", dict(registry._BACKENDS))
    monkeypatch.setattr(registry, "_IMPLS", dict(registry._IMPLS))
    monkeypatch.setitem(registry.BACKEND_MODULES, "fake", "floydwarp.cpu.reference")
    registry.register_backend("fake", "stand-in")
    registry.register("fake", "naive", default=True,
                      bytes_moved=lambda n, itemsize, b: 3.0 * n ** 3 * itemsize)(numpy_loop)
    registry.register("fake", "tiled", dtypes=("int32",), max_n=20)(numpy_loop)


def test_plan_cases_expands_the_product(fake_backend):
    cfg = BenchConfig(backends=["reference", "fake"], algorithms=["all"], sizes=[8, 16], dtypes=["int16", "int32"],
                      block_sizes=[None, 4])
    cases = plan_cases(cfg)
    assert len(cases) == 2 * 3 * 2 * 2
    assert Case("fake", "tiled", "int16", 16, 4) in cases
    assert {c.algorithm for c in plan_cases(BenchConfig(backends=["fake"]))} == {"naive"}   # auto: default
    # a name only some backends have: only those pairs
    assert {(c.backend, c.algorithm) for c in plan_cases(BenchConfig(backends=["reference", "fake"],
                                                                     algorithms=["tiled"]))} == {("fake", "tiled")}


def test_plan_cases_refuses_unknown_names():
    with pytest.raises(fw.FloydwarpError, match="unknown backend"):
        plan_cases(BenchConfig(backends=["abacus"]))
    with pytest.raises(fw.FloydwarpError, match="no chosen backend has algorithm quantum"):
        plan_cases(BenchConfig(backends=["reference"], algorithms=["quantum"]))
    with pytest.raises(fw.FloydwarpError, match="repeats"):
        plan_cases(BenchConfig(backends=["reference"], repeats=0))


def test_run_records(fake_backend):
    seen = []
    cfg = BenchConfig(backends=["reference", "fake"], algorithms=["all"], sizes=[16, 32], dtypes=["int16"],
                      repeats=3, scipy_max_n=16, seed=4, percent=30)
    data = run(cfg, command="floydwarp bench test", on_record=seen.append)
    recs = data["records"]
    assert seen == recs and data["study"] == "run" and data["config"]["sizes"] == [16, 32]
    env = data["environment"]
    assert env["command"] == "floydwarp bench test" and env["seed"] == 4 and env["numpy"] and env["cpu_count"] >= 1
    by = {(r["n"], r["backend"], r["algorithm"]): r for r in recs}

    sp = by[(16, "scipy", "floyd_warshall")]
    assert sp["status"] == "ok" and len(sp["times_s"]) == 3 and sp["time_s"] == sorted(sp["times_s"])[1]
    assert by[(32, "scipy", "floyd_warshall")]["status"] == "skipped"

    ref = by[(16, "reference", "numpy")]
    assert ref["status"] == "ok" and ref["dtype"] == "int16" and ref["matches_scipy"] is True
    assert ref["edges"] == fw.generate.erdos_renyi(16, 30, seed=4).num_edges
    assert ref["relaxations_per_s"] == pytest.approx(16 ** 3 / ref["compute_s"])
    assert ref["speedup_vs_scipy"] == pytest.approx(sp["time_s"] / ref["time_s"])
    assert "compute" in ref["stages_s"] and "gb_per_s" not in ref

    naive = by[(16, "fake", "naive")]
    assert naive["bytes_moved"] == 3.0 * 16 ** 3 * 2
    assert naive["gb_per_s"] == pytest.approx(naive["bytes_moved"] / naive["compute_s"] / 1e9)

    assert by[(16, "fake", "tiled")]["status"] == "skipped"                    # int16 unsupported
    assert "does not support dtype int16" in by[(16, "fake", "tiled")]["note"]


def test_refusals_become_skipped_records(fake_backend):
    data = run(BenchConfig(backends=["fake"], algorithms=["tiled"], sizes=[24], dtypes=["int32"], repeats=1,
                           scipy=False))
    (rec,) = data["records"]
    assert rec["status"] == "skipped" and "n <= 20" in rec["note"]


def test_report_table_and_json(tmp_path, fake_backend):
    data = run(BenchConfig(backends=["fake"], sizes=[12], repeats=1))
    text = report.table(data["records"])
    lines = text.splitlines()
    assert lines[0].split()[:2] == ["n", "backend/algorithm"] and "GB/s" in lines[0]
    assert "scipy/floyd_warshall" in lines[1] and "fake/naive" in lines[2] and "x" in lines[2]
    data["records"][0]["weird"] = math.inf
    path = report.write_json(data, tmp_path / "b.json")
    loaded = json.loads(path.read_text())
    assert loaded["records"][0]["weird"] is None and loaded["records"][1]["backend"] == "fake"
    assert not list(tmp_path.glob(".b.json.*"))                                # no temporary left behind
    assert report.describe_environment(data["environment"])


def test_environment_and_backend_status(monkeypatch):
    env = environment(command="x", seed=1)
    for key in ("timestamp", "python", "numpy", "scipy", "numba", "cupy", "cpu", "cpu_count", "gpus", "gpu_note"):
        assert key in env
    monkeypatch.setitem(registry.BACKEND_MODULES, "ghost", "floydwarp.no_such_module")
    status = {b["name"]: b for b in backend_status()}
    assert status["reference"]["available"] and status["reference"]["algorithms"][0]["name"] == "numpy"
    assert not status["ghost"]["available"] and "cannot import" in status["ghost"]["reason"]


def test_studies_registry():
    assert STUDIES["run"] is run


def test_formats():
    assert report.format_seconds(0.000123) == "123 us"
    assert report.format_seconds(0.0123) == "12.3 ms"
    assert report.format_seconds(1.234) == "1.23 s"
    assert [report.format_seconds(t) for t in (0.9996, 0.0009996, 99.96)] == ["1 s", "1 ms", "100 s"]   # no "1e+03 ms"
    assert report.format_rate(2.01e9) == "2.01 G relax/s"
    assert report.format_rate(math.inf) == "n/a"
