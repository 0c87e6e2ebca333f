"""``floydwarp solve``'s process view: the ``before:`` line, ``--generate-on``, and the call it
makes (the CLI names where the result goes; the backend decides where it lives)."""
from __future__ import annotations

import re
import subprocess
import sys
import time
from types import SimpleNamespace

import pytest

from floydwarp.bench.report import format_seconds
from floydwarp.cli import clock
from floydwarp.cli.app import app
from floydwarp.gpu import incore

from cli_runner import cli_runner

runner = cli_runner()


def fields(output: str) -> dict:
    return {m[1]: m[2] for m in re.finditer(r"^([a-z ]+):\s+(.*)$", output, re.M)}


def test_process_age_counts_from_the_process_start():
    age = clock.process_age()
    if age is None:
        pytest.skip("no /proc/self/stat here")
    out = subprocess.run([sys.executable, "-c", "import time; time.sleep(0.3); from floydwarp.cli import clock; "
                          "print(clock.process_age())"], capture_output=True, text=True, check=True)
    assert 0.29 <= float(out.stdout) < 30


def test_before_marks_consecutive_intervals():
    before = clock.Before()
    time.sleep(0.02)
    assert before.mark("generate", "on the host") >= 0.02
    before.mark("read")
    names = [name for name, _, _ in before.intervals]
    assert names == ["start", "generate", "read"]
    line = before.line(format_seconds)
    assert line.startswith("start ") and "(interpreter, imports, options), generate " in line
    assert "(on the host), read " in line


def test_solve_prints_the_time_before_the_call():
    result = runner.invoke(app, ["solve", "--generate", "40", "-p", "20", "-s", "1"])
    assert result.exit_code == 0, result.output
    before = fields(result.output)["before"]
    assert re.fullmatch(r"start \S+ \S+ \(interpreter, imports, options\), generate \S+ \S+ \(on the host\)", before)


def test_a_process_reports_where_its_seconds_went(tmp_path):
    t0 = time.perf_counter()
    out = subprocess.run([sys.executable, "-m", "floydwarp", "solve", "--generate", "64", "-p", "20"],
                         capture_output=True, text=True, check=True)
    wall = time.perf_counter() - t0
    start = re.search(r"^before: +start (\S+) (\S+)", out.stdout, re.M)
    seconds = float(start[1]) * {"s": 1, "ms": 1e-3, "us": 1e-6}[start[2]]
    assert 0 < seconds < wall


def test_generate_on_needs_generate(tmp_path):
    graph = tmp_path / "g.gr"
    assert runner.invoke(app, ["generate", "10", "-o", str(graph)]).exit_code == 0
    result = runner.invoke(app, ["solve", str(graph), "--generate-on", "gpu"])
    assert result.exit_code == 2
    assert "--generate-on only apply with --generate" in result.output


def test_generate_on_gpu_without_one_is_refused_by_name(monkeypatch):
    monkeypatch.setattr("floydwarp.gpu.device.probe", lambda: "no CUDA GPU found; use backend='cpu'")
    result = runner.invoke(app, ["solve", "--generate", "50", "--generate-on", "gpu"])
    assert result.exit_code == 2
    assert "cannot draw this graph on the GPU: no CUDA GPU found" in result.output


def test_generate_on_auto_draws_on_the_host_without_a_gpu(monkeypatch):
    monkeypatch.setattr("floydwarp.gpu.device.probe", lambda: "no CUDA GPU found; use backend='cpu'")
    result = runner.invoke(app, ["solve", "--generate", "50", "--backend", "gpu"])
    assert result.exit_code == 2
    assert "backend 'gpu' is not available" in result.output


def test_the_call_names_an_npy_destination(monkeypatch, tmp_path):
    calls = []
    import floydwarp

    real = floydwarp.solve

    def spy(graph, **kw):
        calls.append(kw)
        return real(graph, **kw)

    monkeypatch.setattr(floydwarp, "solve", spy)
    for name in ("r.npy", "r.npz"):
        assert runner.invoke(app, ["solve", "--generate", "30", "-o", str(tmp_path / name)]).exit_code == 0
    assert calls[0]["output_file"] == tmp_path / "r.npy"
    assert "output_file" not in calls[1]


@pytest.mark.parametrize("options, on_device_input, expected", [
    ({}, False, False), ({}, True, True),
    ({"output_file": "out.npy"}, False, True), ({"output_file": "OUT.NPY"}, False, True),
    ({"output_file": "out.npz"}, False, False),
    ({"output_file": "out.npy", "output": "host"}, False, False), ({"output": "device"}, False, True)])
def test_the_gpu_backend_keeps_an_npy_bound_result_on_the_device(options, on_device_input, expected):
    assert incore.wants_device(SimpleNamespace(options=options), on_device_input) is expected
