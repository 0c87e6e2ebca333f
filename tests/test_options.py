"""Solve options are declared where engines register, and a call with one it does not take is
refused with a TypeError that names it and lists what the call takes -- in solve, solve_batch,
floyd_warshall and the NetworkX backend alike."""
from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

import floydwarp as fw
from floydwarp import registry
from floydwarp.errors import FloydwarpError, OptionError
from floydwarp.options import GENERAL

W = np.array([[0, 3, np.inf], [np.inf, 0, -1], [2, np.inf, 0]])
PACKAGE = Path(fw.__file__).resolve().parent


def test_a_misspelt_option_is_a_type_error_naming_it_and_the_accepted_ones():
    with pytest.raises(OptionError) as info:
        fw.solve(W, backend="cpu", blok_size=7)
    error = info.value
    assert isinstance(error, TypeError) and isinstance(error, FloydwarpError)     # the CLI's bad-option exit
    message = str(error)
    assert "solve() got an unexpected keyword argument 'blok_size' (did you mean 'block_size'?)" in message
    assert "cpu/blocked takes checkpoint, checkpoint_every, output, output_file, phases, resume, workdir" in message
    with pytest.raises(OptionError, match=r"'chekpoint' \(did you mean 'checkpoint'\?\)"):
        fw.solve(W, backend="cpu", chekpoint="x")


def test_an_option_of_another_algorithm_says_whose_it_is():
    registry.backend("gpu")                 # registers its algorithms (no CuPy needed for that)
    with pytest.raises(OptionError, match=r"'fast_variant' \(cpu/blocked does not take it; gpu/fast does\)"):
        fw.solve(W, backend="cpu", fast_variant="pipe")
    with pytest.raises(OptionError, match=r"'max_gpu_memory' \(cpu/serial does not take it; gpu does\)"):
        fw.solve(W, backend="cpu", algorithm="serial", max_gpu_memory=1 << 30)
    with pytest.raises(OptionError, match="'workdir' .*cpu/rows takes output, output_file, phases, besides"):
        fw.solve(W, backend="cpu", algorithm="rows", workdir=".")
    with pytest.raises(OptionError, match="reference/numpy takes output, output_file, phases"):
        fw.solve(W, backend="reference", R=2)


def test_general_options_and_declared_ones_run(tmp_path):
    want = fw.solve(W, backend="reference").dist
    for backend in ("reference", "cpu"):
        r = fw.solve(W, backend=backend, output="host", phases=True)
        np.testing.assert_array_equal(r.dist, want)
    r = fw.solve(W, backend="cpu", workdir=tmp_path)
    assert r.metadata["workdir"] == str(tmp_path)
    np.testing.assert_array_equal(r.dist, want)


def test_auto_passes_over_a_preferred_algorithm_that_does_not_take_an_option(tmp_path):
    hops = fw.Graph.from_edges([0, 1, 2], [1, 2, 0], n=3)                # unit weights: bfs's graphs
    assert fw.solve(hops, backend="cpu").algorithm == "bfs"
    assert fw.solve(hops, backend="cpu", phases=True, workdir=tmp_path).algorithm == "bfs"
    assert fw.solve(hops, backend="cpu", checkpoint=tmp_path / "c").algorithm == "blocked"


def test_solve_batch_floyd_warshall_and_networkx_list_what_they_take():
    with pytest.raises(OptionError, match=r"solve_batch\(\) got an unexpected keyword argument 'blok_size' "
                                          r"\(solve_batch\(\) does not take it\); solve_batch\(\) takes backend, "):
        fw.solve_batch([W], blok_size=2)
    with pytest.raises(OptionError, match=r"floyd_warshall\(\) got an unexpected keyword argument "
                                          r"'return_predecessor' \(did you mean 'return_predecessors'\?\)"):
        fw.floyd_warshall(W, return_predecessor=True)
    nx = pytest.importorskip("networkx")
    from floydwarp.nx_backend import BackendInterface

    with pytest.raises(OptionError, match=r"floyd_warshall_numpy\(\) got an unexpected keyword argument 'wieght' "
                                          r"\(did you mean 'weight'\?\); floyd_warshall_numpy\(\) takes G, "):
        BackendInterface.can_run("floyd_warshall_numpy", (nx.path_graph(60),), {"wieght": "w"})


def _options_read() -> set[str]:
    """Every ``options.get("NAME"...)`` / ``options["NAME"]`` in the engines and the shared modules
    (the front ends build option dicts rather than read them)."""
    read = set()
    for path in PACKAGE.rglob("*.py"):
        if {"bench", "cli", "batch"} & set(path.relative_to(PACKAGE).parts[:-1]):
            continue
        read |= set(re.findall(r"""options(?:\.get\(|\[)["']([A-Za-z_]+)["']""", path.read_text()))
    return read


def test_every_option_an_engine_reads_is_declared_and_every_declared_one_is_read():
    declared = set(GENERAL)
    for backend in registry.backends():
        declared |= set(backend.options)
        for impl in registry.algorithms(backend.name):
            declared |= set(impl.options)
            assert all(isinstance(text, str) and text for text in impl.options.values()), impl
    read = _options_read()
    assert len(read) >= 25
    assert read - declared == set(), "read but not declared"
    assert declared - read == set(), "declared but read nowhere"


def test_info_lists_the_options():
    from floydwarp.cli.app import app

    from cli_runner import cli_runner

    out = cli_runner().invoke(app, ["info"]).stdout
    assert "      options: checkpoint, checkpoint_every, resume, workdir" in out
    assert "options of every backend: output, phases, output_file" in out
    out = cli_runner().invoke(app, ["info", "--options"]).stdout
    assert "        workdir: DIR: keep the matrices in memory-mapped files there" in out
    assert "  phases: True: time the blocked schedule's phases" in out
