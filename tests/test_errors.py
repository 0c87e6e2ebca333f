"""Errors by whose fault they are (floydwarp.errors), and the one place the CLI maps them to exit statuses."""
from __future__ import annotations

import click
import numpy as np
import pytest
from scipy.sparse.csgraph import NegativeCycleError as ScipyNegativeCycleError

import floydwarp as fw
from floydwarp.cli.app import app
from floydwarp.errors import CheckpointInterrupt, DeviceError, FloydwarpError, InternalError

from cli_runner import cli_runner

runner = cli_runner()
NEGATIVE = np.array([[0, -2], [1, 0]], dtype=float)


def test_negative_cycle_error_is_scipys_and_a_user_error():
    """SciPy users' ``except NegativeCycleError`` keeps working; it is also bad input (exit 2)."""
    for call in (lambda: fw.floyd_warshall(NEGATIVE), lambda: fw.solve(NEGATIVE).diameter()):
        with pytest.raises(ScipyNegativeCycleError):
            call()
        with pytest.raises(FloydwarpError):
            call()
    assert issubclass(fw.NegativeCycleError, ScipyNegativeCycleError)


def test_device_and_internal_errors_are_not_user_errors():
    for kind in (DeviceError, InternalError):
        assert issubclass(kind, RuntimeError) and not issubclass(kind, ValueError)
    assert issubclass(CheckpointInterrupt, FloydwarpError)


def test_the_errors_a_caller_catches_are_public_names():
    """``except fw.DeviceError:`` (then retry on the CPU), ``fw.OptionError`` (a TypeError), ..."""
    from floydwarp import errors

    for name in ("FloydwarpError", "OptionError", "DtypeError", "BackendUnavailableError", "NoPathError",
                 "CheckpointError", "NegativeCycleError", "DeviceError", "InexactWarning"):
        assert getattr(fw, name) is getattr(errors, name), name
    with pytest.raises(fw.OptionError, match="blok_size"):
        fw.solve(NEGATIVE, blok_size=7)


@pytest.mark.parametrize("as_result", [False, True])
def test_cli_metrics_on_a_negative_cycle_exits_2(tmp_path, as_result):
    """Issue 35, item 4: a traceback and exit 1 before; the help promises exit 2."""
    graph = tmp_path / "neg.csv"
    graph.write_text("source,target,weight\n0,1,-2\n1,0,1\n")
    args = ["metrics", str(graph)]
    if as_result:
        saved = tmp_path / "neg.npz"
        fw.solve(fw.io.read_graph(graph)).save(saved)
        args = ["metrics", str(saved), "--result"]
    result = runner.invoke(app, args)
    assert result.exit_code == 2, (result.stdout, result.stderr, result.exception)
    assert "Traceback" not in result.stderr
    assert result.stderr.strip().splitlines() == [result.stderr.strip()]
    assert result.stderr.startswith("error: ") and "negative cycle" in result.stderr


def _raising(exc):
    @click.command("raise-for-test")
    def command():
        raise exc
    return command


class _CudaError(RuntimeError):
    """Stands for an unwrapped cupy_backends.cuda...CUDARuntimeError."""


_CudaError.__module__ = "cupy_backends.cuda.api.runtime"


@pytest.mark.parametrize("exc, status, first", [
    (FloydwarpError("bad option"), 2, "error: bad option"),
    (CheckpointInterrupt("saved in ck"), 3, "stopped: saved in ck"),
    (DeviceError("the GPU ran out of memory"), 4, "device error: the GPU ran out of memory"),
    (_CudaError("cudaErrorLaunchFailure"), 4, "device error: _CudaError: cudaErrorLaunchFailure"),
    (InternalError("unexpected answer"), 5, "Traceback"),
])
def test_every_command_maps_errors_by_kind(exc, status, first):
    app.add_command(_raising(exc))
    try:
        result = runner.invoke(app, ["raise-for-test"])
    finally:
        app.commands.pop("raise-for-test")
    assert result.exit_code == status, (result.stderr, result.exception)
    lines = result.stderr.strip().splitlines()
    assert lines[0].startswith(first)
    if status == 5:
        assert lines[-1].startswith("internal error: unexpected answer") and "a bug in floydwarp" in lines[-1]
    else:
        assert len(lines) == 1


def test_help_documents_the_exit_statuses():
    text = " ".join(runner.invoke(app, ["--help"]).stdout.split())
    for fragment in ("Exit status: 0", "2 a bad option or input", "3 stopped by SIGTERM", "4 the device failed",
                     "5 an internal error"):
        assert fragment in text


@pytest.fixture
def lossy_backend(monkeypatch):
    """A backend whose engine loses its data the way issue 35's out-of-core runs did: all INF."""
    from floydwarp import registry
    from floydwarp.plan import EngineOutput

    monkeypatch.setattr(registry, "_BACKENDS", dict(registry._BACKENDS))
    monkeypatch.setattr(registry, "_IMPLS", dict(registry._IMPLS))
    monkeypatch.setitem(registry.BACKEND_MODULES, "lossy", "floydwarp.cpu.reference")
    registry.register_backend("lossy", "returns a matrix of INF")

    @registry.register("lossy", "all-inf", default=True)
    def all_inf(graph, plan):
        return EngineOutput(np.full((graph.n, graph.n), plan.inf, plan.dtype), None, {"compute": 0.0})


@pytest.mark.parametrize("n", [1, 2, 50])
def test_a_result_whose_diagonal_went_up_is_refused(lossy_backend, n):
    """Issue 35, item 1: a lost copy gave a matrix of INF, diagonal included, silently.  A
    diagonal entry can only stay 0 or go down: solve() refuses such a result, loudly."""
    g = fw.generate.erdos_renyi(n, 10.0, seed=1)
    with pytest.raises(InternalError, match="distance from vertex 0 to itself.*the run lost data"):
        fw.solve(g, backend="lossy")
