"""The command line, through Click's runner (and one real `python -m floydwarp`)."""
from __future__ import annotations

import json
import re
import subprocess
import sys

import click
import numpy as np
import pytest

import floydwarp as fw
import floydwarp.io
from floydwarp import registry
from floydwarp.checksum import checksum
from floydwarp.cli import COMMANDS
from floydwarp.cli.app import app
from floydwarp.cpu.reference import numpy_loop

from cli_runner import cli_runner

runner = cli_runner()

#: tests that read or write graph/result files need the io engineer's floydwarp.io functions
needs_io = pytest.mark.skipif(
    not all(hasattr(floydwarp.io, f) for f in ("read_graph", "write_graph", "write_result")),
    reason="floydwarp.io.read_graph/write_graph/write_result not there yet")


def run(*args):
    return runner.invoke(app, [str(a) for a in args])


def fields(output: str) -> dict:
    """The `key: value` lines of a solve report."""
    return {m[1]: m[2] for m in re.finditer(r"^([a-z ]+):\s+(.*)$", output, re.M)}


def assert_user_error(result, *fragments):
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    for fragment in fragments:
        assert fragment in lines[0]


@pytest.fixture
def fake_gpu(monkeypatch):
    """A backend with seed 000's vectorized variants (naive, naive-vec, blocked, blocked-vec)."""
    monkeypatch.setattr(registry, "_BACKENDS", dict(registry._BACKENDS))
    monkeypatch.setattr(registry, "_IMPLS", dict(registry._IMPLS))
    monkeypatch.setitem(registry.BACKEND_MODULES, "fakegpu", "floydwarp.cpu.reference")
    registry.register_backend("fakegpu", "a stand-in with -vec variants")
    for name in ("naive", "naive-vec", "blocked", "blocked-vec"):
        registry.register("fakegpu", name, default=name == "blocked", description=name)(numpy_loop)


# ---------------------------------------------------------------- solve
def test_solve_generate_long_flags():
    r = run("solve", "--generate", 30, "--percent", 20, "--seed", 5, "--dtype", "int32", "--backend", "reference",
            "--algorithm", "numpy", "--block-size", 16, "--threads", 1)
    assert r.exit_code == 0, r.output
    f = fields(r.stdout)
    g = fw.generate.erdos_renyi(30, 20, seed=5)
    assert f["n"] == "30" and f["edges"] == f"{g.num_edges:,}"
    assert f["dtype"] == "int32" and f["backend"] == "reference/numpy"
    assert re.match(r"[\d.]+ (ms|us|s) \(compute [\d.]+ (ms|us|s)\)", f["time"])
    assert re.match(r"prepare [\d.]+ (ms|us|s), start [\d.]+ (ms|us|s), .*compute .*finish", f["stages"])
    assert re.match(r"[\d.]+ [kMGT]? ?relax/s", f["rate"])
    assert f["negative cycle"] == "none"
    assert r.stderr == ""                              # no progress bar off a terminal


def test_solve_short_flags_check_and_checksum():
    r = run("solve", "-g", 25, "-p", 30, "-s", 7, "-a", "numpy", "-b", 8, "-v", "-c", "--backend", "reference")
    assert r.exit_code == 0, r.output
    f = fields(r.stdout)
    assert f["check"].startswith("match")
    expected = checksum(fw.solve(fw.generate.erdos_renyi(25, 30, seed=7), backend="reference"))
    assert f["checksum"].startswith(f"0x{expected:04x}")


def test_generation_options():
    r = run("solve", "-g", 20, "-p", 40, "--weights", "-2,9", "--potential", 3, "--undirected",
            "--backend", "reference")
    assert r.exit_code == 0, r.output
    g = fw.generate.erdos_renyi(20, 40, weights=(-2, 9), potential=3, directed=False)
    assert fields(r.stdout)["edges"] == f"{g.num_edges:,}"
    assert "weights -2..9, potential 3, undirected" in r.stdout


def test_verbose_prints_the_matrix():
    r = run("solve", "-g", 8, "-p", 30, "-V", "--backend", "reference")
    assert r.exit_code == 0, r.output
    res = fw.solve(fw.generate.erdos_renyi(8, 30), backend="reference")
    rows = r.stdout.split("distances:\n")[1].splitlines()
    assert rows[0].split() == [str(j) for j in range(8)]
    for i, line in enumerate(rows[1:9]):
        cells = line.split()
        assert cells[0] == str(i)
        assert cells[1:] == ["inf" if v >= res.inf else str(v) for v in res.dist[i].tolist()]


def test_verbose_truncates_large_matrices():
    r = run("solve", "-g", 200, "-p", 5, "-V", "--backend", "reference")
    assert r.exit_code == 0, r.output
    table = r.stdout.split("distances:\n")[1].splitlines()
    assert len(table) == 1 + 9 + 1 and "..." in table[0] and table[-1].startswith("(first and last 4 of 200")


def test_negative_cycle_is_a_status_not_an_error():
    r = run("solve", "-g", 30, "-p", 20, "--weights", "-3,8", "--backend", "reference", "-c", "-V")
    assert r.exit_code == 0, r.output
    f = fields(r.stdout)
    assert f["negative cycle"].startswith("yes, through vertices [")
    assert f["check"].startswith("match")
    assert "-inf" in r.stdout


def test_vectorize_picks_the_vec_variant(fake_gpu):
    r = run("solve", "-g", 12, "--backend", "fakegpu", "-a", "naive", "-v")
    assert fields(r.stdout)["backend"] == "fakegpu/naive-vec", r.output
    r = run("solve", "-g", 12, "--backend", "fakegpu", "-v")
    assert fields(r.stdout)["backend"] == "fakegpu/blocked-vec", r.output
    r = run("solve", "-g", 12, "--backend", "reference", "-v")      # no -vec variants: -v changes nothing
    assert fields(r.stdout)["backend"] == "reference/numpy", r.output


@pytest.mark.parametrize("args, gpus", [
    (["solve", "-g", "9", "--backend", "gpu"], (0,)), (["solve", "--backend=gpu", "-g", "9"], (0,)),
    (["solve", "-g", "9", "--gpus", "4"], (0, 1, 2, 3)), (["solve", "--gpus=2", "x.in"], (0, 1)),
    (["solve", "-g", "9"], ()), (["solve", "-g", "9", "--backend", "cpu"], ()), (["solve", "--gpus"], ()),
    (["generate", "9", "--backend", "gpu"], ()), ([], ())])
def test_the_gpus_a_command_line_names(args, gpus):
    from floydwarp.launch import named_gpus

    assert named_gpus(args, environ={})[0] == gpus


@pytest.mark.parametrize("args, environ, gpus", [
    (["--distributed", "-a", "gpu-2d"], {"OMPI_COMM_WORLD_LOCAL_RANK": "3"}, (3,)),
    (["--algorithm=gpu-rows", "--distributed"], {"MPI_LOCALRANKID": "1"}, (1,)),
    (["--distributed", "-a", "gpu-2d"], {"SLURM_LOCALID": "2"}, (2,)),
    (["--distributed", "-a", "gpu-2d"], {}, ()),                         # no launcher says which GPU
    (["--distributed", "-a", "blocked-2d"], {"OMPI_COMM_WORLD_LOCAL_RANK": "1"}, ()),     # a CPU algorithm
    (["-a", "gpu-2d"], {"OMPI_COMM_WORLD_LOCAL_RANK": "1"}, ())])
def test_an_mpi_rank_names_its_nodes_gpu(args, environ, gpus):
    from floydwarp.launch import named_gpus

    assert named_gpus(["solve", "-g", "9", *args], environ=environ)[0] == gpus


@pytest.mark.parametrize("args, environ, gpu", [
    (["--distributed", "-a", "gpu-2d"], {"OMPI_COMM_WORLD_LOCAL_RANK": "3"}, 3),
    (["--distributed", "--algorithm=gpu-rows"], {"SLURM_LOCALID": "0"}, 0),
    (["--distributed", "-a", "gpu-2d"], {}, None),
    (["--distributed", "-a", "blocked-2d"], {"OMPI_COMM_WORLD_LOCAL_RANK": "1"}, None),
    (["--backend", "gpu"], {"OMPI_COMM_WORLD_LOCAL_RANK": "1"}, None)])
def test_an_mpi_gpu_run_is_told_from_its_command_line(args, environ, gpu):
    """Its rank starts NCCL early (multigpu.nccl.begin); nothing else does."""
    from floydwarp.launch import named_gpus

    assert named_gpus(["solve", "-g", "9", *args], environ=environ)[1] == gpu
    assert named_gpus(["generate", "9", *args], environ=environ)[1] is None


@pytest.mark.parametrize("environ, one_node", [
    ({"OMPI_COMM_WORLD_LOCAL_SIZE": "4", "OMPI_COMM_WORLD_SIZE": "4"}, True),
    ({"OMPI_COMM_WORLD_LOCAL_SIZE": "4", "OMPI_COMM_WORLD_SIZE": "8"}, False),
    ({"MPI_LOCALNRANKS": "2", "PMI_SIZE": "2"}, True), ({"MPI_LOCALNRANKS": "2", "PMI_SIZE": "6"}, False),
    ({"SLURM_NNODES": "1"}, True), ({"SLURM_NNODES": "3"}, False), ({}, False)])
def test_a_rank_starts_nccl_early_only_where_ranks_may_span_nodes(monkeypatch, environ, one_node):
    """On one node the ranks' GPUs copy through CUDA IPC (mpi/links.py): no NCCL to start."""
    from floydwarp import launch
    from floydwarp.mpi.comm import launched_on_one_node
    from floydwarp.multigpu import nccl

    assert launched_on_one_node(environ) == one_node
    begun = []
    monkeypatch.setattr(launch, "begin", lambda gpus: None)
    monkeypatch.setattr(nccl, "begin", begun.append)
    launch.start_named_gpus(["solve", "-g", "9", "--distributed", "-a", "gpu-2d"],
                            dict(environ, OMPI_COMM_WORLD_LOCAL_RANK="1"))
    assert begun == ([] if one_node else [1])


def test_a_rank_takes_its_gpu_from_the_launcher_before_mpi_starts(monkeypatch):
    """MPI starts later (MPI_Init holds the GIL), while CuPy's import goes on beside it."""
    from floydwarp.cli.solve import _rank_gpu
    from floydwarp.mpi import comm

    monkeypatch.setenv("OMPI_COMM_WORLD_LOCAL_RANK", "1")
    monkeypatch.setattr(comm, "world", lambda: pytest.fail("MPI started"))
    assert _rank_gpu({"distributed": True, "algorithm": "gpu-2d"}) == 1
    assert _rank_gpu({"distributed": True, "algorithm": "blocked-2d"}) is None
    assert _rank_gpu({"distributed": False, "algorithm": "gpu-2d"}) is None


@pytest.mark.parametrize("gpus, shown, seen", [
    ((0,), None, "0"), ((0, 1), None, "0,1"), ((0, 1, 2, 3), None, "0,1,2,3"),
    ((0,), "3,1", "3"), ((0, 1), "GPU-a1,GPU-b2,GPU-c3", "GPU-a1,GPU-b2"),    # the first N entries, as written
    ((0, 1, 2), "5,6", "5,6"),            # too few shown: left for the run to report
    ((0,), "", ""),                        # none shown stays none
    ((1,), None, None), ((0, 2), "4,5,6", "4,5,6")])   # not the first N: renumbering would move them
def test_a_process_sees_only_the_gpus_its_command_names(gpus, shown, seen):
    from floydwarp.launch import see_only

    environ = {} if shown is None else {"CUDA_VISIBLE_DEVICES": shown}
    see_only(gpus, environ)
    assert environ.get("CUDA_VISIBLE_DEVICES") == seen


@pytest.mark.parametrize("args, environ, seen, begun", [
    (["--backend", "gpu"], {}, "0", [((0,), "0")]),
    (["--gpus", "2"], {"CUDA_VISIBLE_DEVICES": "2,3,0"}, "2,3", [((0, 1), "2,3")]),
    (["--backend", "cpu"], {}, None, []),
    # an MPI rank sees every GPU: the ranks open each other's memory
    (["--distributed", "-a", "gpu-2d"], {"OMPI_COMM_WORLD_LOCAL_RANK": "1", "OMPI_COMM_WORLD_LOCAL_SIZE": "2",
                                         "OMPI_COMM_WORLD_SIZE": "2"}, None, [((1,), None)])])
def test_the_launcher_narrows_the_gpus_before_the_driver_starts(monkeypatch, args, environ, seen, begun):
    """``begun``: the GPUs the driver's start was given, and what it was shown then."""
    from floydwarp import launch

    started = []
    monkeypatch.setattr(launch, "begin", lambda gpus: started.append((gpus, environ.get("CUDA_VISIBLE_DEVICES"))))
    launch.start_named_gpus(["solve", "-g", "9", *args], environ)
    assert environ.get("CUDA_VISIBLE_DEVICES") == seen
    assert started == begun


def test_starting_the_driver_early_without_one_is_harmless():
    from floydwarp import launch

    launch.begin((0, 1)).join(timeout=30)            # no libcuda here, or no GPU: the thread just ends


def test_a_summary_leaves_the_result_where_it_was_computed(monkeypatch, tmp_path):
    """Only a summary printed: the call asks for output="device" (the gpu backend then keeps
    the matrix in GPU memory); --check, -V or a file want it on the host."""
    seen = []
    solve = fw.solve
    monkeypatch.setattr(fw, "solve", lambda graph, **kw: seen.append((kw["backend"], kw.get("output")))
                        or solve(graph, **kw))
    for extra in ([], ["-c"], ["-V"], ["-o", str(tmp_path / "r.npz")]):
        assert run("solve", "-g", 12, "--backend", "cpu", *extra).exit_code == 0
    assert [out for backend, out in seen if backend == "cpu"] == ["device", None, None, None]   # (-c: a reference)


# ---------------------------------------------------------------- user errors: one line, exit 2
def test_bad_flag():
    # Click's wording varies ("No such option: --bogus" before 8.2, "No such option '--bogus'." after)
    assert_user_error(run("solve", "-g", 10, "--bogus"), "No such option", "--bogus", "floydwarp solve --help")
    assert_user_error(run("nosuchcommand"), "nosuchcommand")


@pytest.mark.parametrize("args, fragment", [
    (["--dtype", "int8"], "dtype int8 is not supported"),
    (["--dtype", "foo"], "unknown dtype 'foo'"),
    (["--backend", "abacus"], "unknown backend 'abacus'"),
    (["--backend", "reference", "-a", "quantum"], "has no algorithm 'quantum'"),
    (["--percent", "120"], "--percent"),
    (["--weights", "1-16"], "--weights"),
    (["--block-size", "0"], "--block-size"),
])
def test_bad_values(args, fragment):
    assert_user_error(run("solve", "-g", 10, *args), fragment)


def test_dtype_too_narrow_is_refused():
    # 1099 * (16 + 1) >= int16's INF 16383, and negative weights rule out the post-run proof
    r = run("solve", "-g", 1100, "-p", 1, "--weights", "-1,16", "--dtype", "int16", "--backend", "reference")
    assert_user_error(r, "dtype int16 cannot provably hold", "use int32")


def test_exactly_one_graph_source(tmp_path):
    assert_user_error(run("solve"), "INPUT or --generate")
    f = tmp_path / "g.gr"
    f.write_text("p sp 1 0\n")
    assert_user_error(run("solve", f, "-g", 5), "INPUT or --generate")
    assert_user_error(run("solve", f, "-p", 5, "-s", 1), "--percent, --seed only apply with --generate")
    assert_user_error(run("solve", tmp_path / "missing.gr"), "does not exist")


def test_refuses_to_overwrite_its_input(tmp_path):
    f = tmp_path / "g.gr"
    f.write_text("p sp 1 0\n")
    assert_user_error(run("solve", f, "-o", f), "refusing to overwrite the input file")
    assert f.read_text() == "p sp 1 0\n"


def test_vectorize_without_a_variant_is_refused(fake_gpu, monkeypatch):
    registry._IMPLS.pop(("fakegpu", "naive-vec"))
    assert_user_error(run("solve", "-g", 5, "--backend", "fakegpu", "-a", "naive", "-v"),
                      "fakegpu/naive has no vectorized variant")


# ---------------------------------------------------------------- files (need floydwarp.io)
@needs_io
def test_generate_then_solve_the_file(tmp_path):
    path = tmp_path / "g.gr"
    r = run("generate", 40, "-p", 15, "-s", 2, "-o", path)
    assert r.exit_code == 0, r.output
    assert path.exists() and "40" in r.stdout
    r = run("solve", path, "--backend", "reference", "-c")
    assert r.exit_code == 0, r.output
    f = fields(r.stdout)
    g = fw.generate.erdos_renyi(40, 15, seed=2)
    assert f["n"] == "40" and f["edges"] == f"{g.num_edges:,}" and f["check"].startswith("match")
    assert f["checksum"].startswith(f"0x{checksum(fw.solve(g, backend='reference')):04x}")


@needs_io
def test_output_file(tmp_path):
    out = tmp_path / "r.npz"
    r = run("solve", "-g", 30, "-p", 20, "--backend", "reference", "--predecessors", "-o", out)
    assert r.exit_code == 0, r.output
    saved = fw.Result.load(out)
    expected = fw.solve(fw.generate.erdos_renyi(30, 20), backend="reference", predecessors=True)
    np.testing.assert_array_equal(saved.dist, expected.dist)
    np.testing.assert_array_equal(saved.pred, expected.pred)


# ---------------------------------------------------------------- info, version, bench, python -m
def test_info():
    r = run("info")
    assert r.exit_code == 0, r.output
    out = r.stdout
    assert out.startswith(f"floydwarp {fw.__version__}")
    assert re.search(r"^cpu: .*cores usable; numba threads: \d+", out, re.M)
    assert re.search(r"^gpu", out, re.M)
    assert re.search(r"^  reference\s+available", out, re.M)
    assert "numpy (default)" in out and "--backend auto picks:" in out


def test_version():
    r = run("--version")
    assert r.exit_code == 0 and r.stdout.strip() == f"floydwarp {fw.__version__}" and r.stderr == ""
    r = run("--version", "solve", "--bogus")                # eager: before the command is even parsed
    assert r.exit_code == 0 and r.stdout.strip() == f"floydwarp {fw.__version__}"


# ---------------------------------------------------------------- help, bare call, ranges, paths
def test_bare_call_prints_the_help_on_stderr():
    r = run()
    assert r.exit_code == 2 and r.stdout == ""
    assert r.stderr.startswith("Usage: floydwarp [OPTIONS] COMMAND [ARGS]...")
    listed = re.findall(r"^  ([a-z]+)  ", r.stderr.split("Commands:")[1], re.M)
    assert listed == list(COMMANDS)                        # in COMMANDS' order, not sorted


def squashed(text: str) -> str:
    """Text without its whitespace: help wraps lines at spaces and after hyphens."""
    return re.sub(r"\s", "", text)


@pytest.mark.parametrize("command_name", COMMANDS)
def test_help_of_every_command_shows_every_parameter(command_name):
    command = app.commands[command_name]
    for flag in ("-h", "--help"):
        r = run(command_name, flag)
        assert r.exit_code == 0 and r.stderr == "", r.output
        usage = r.stdout.splitlines()[0]
        assert usage.startswith(f"Usage: floydwarp {command_name} [OPTIONS]") and "{" not in usage
        assert squashed(r.stdout).count(squashed(command.help)) == 1
        for param in command.params:
            if isinstance(param, click.Argument):                # in the usage and in the Arguments list
                name = (param.metavar or param.name.upper()).strip("[].")
                listed = squashed(r.stdout.split("Arguments:")[1].split("Options:")[0])
                assert name in usage and re.search(rf"{name}\S{{0,3}}{re.escape(squashed(param.description))}",
                                                   listed), (command_name, name)
            else:
                for opt in param.opts + param.secondary_opts:
                    assert re.search(rf"^  (\S+(, | / ))*{re.escape(opt)}\b", r.stdout, re.M), (command_name, opt)
        if command.epilog:
            assert squashed(command.epilog) in squashed(r.stdout)


def test_help_shows_defaults_and_ranges():
    text = " ".join(run("solve", "--help").stdout.split())
    assert "[default: 25.0; 0<=x<=100]" in text and "[default: 0; x>=0]" in text and "[default: 1,16]" in text
    assert "[default: auto]" in text and "Mirror every edge (i, j) to (j, i). --dtype" in text   # no default for flags
    text = " ".join(run("bench", "--help").stdout.split())
    assert "[default: run]" in text and "[default: scipy]" in text and "[default: 3; x>=1]" in text
    text = " ".join(run("generate", "--help").stdout.split())
    assert "Number of vertices. [required]" in text and "-o, --output FILE" in text


@pytest.mark.parametrize("args, option, bound", [
    (["solve", "-g", -1], "--generate", "x>=0"),
    (["solve", "-g", 5, "-p", 100.5], "--percent", "0<=x<=100"),
    (["solve", "-g", 5, "-p", -1], "--percent", "0<=x<=100"),
    (["solve", "-g", 5, "-s", -1], "--seed", "x>=0"),
    (["solve", "-g", 5, "--potential", -1], "--potential", "x>=0"),
    (["solve", "-g", 5, "--threads", 0], "--threads", "x>=1"),
    (["solve", "-g", 5, "--gpus", 0], "--gpus", "x>=1"),
    (["solve", "-g", 5, "--checkpoint-every", -1], "--checkpoint-every", "x>=0"),
    (["generate", 5, "-o", "g.gr", "-p", 101], "--percent", "0<=x<=100"),
    (["bench", "--n", 0], "--n", "x>=1"),
    (["bench", "-r", 0], "--repeats", "x>=1"),
    (["bench", "--scipy-max-n", 0], "--scipy-max-n", "x>=1"),
    (["bench", "sizes", "--max-seconds", -1], "--max-seconds", "x>=0"),
    (["metrics", "--top", -1, __file__], "--top", "x>=0"),
    (["batch", __file__, "-o", "b.npz", "--max-n", -1], "--max-n", "x>=0"),
    (["batch", __file__, "-o", "b.npz", "--max-distance", -0.5], "--max-distance", "x>=0"),
])
def test_out_of_range_values(args, option, bound):
    assert_user_error(run(*args), "Invalid value for", option, bound)


def test_range_bounds_are_inclusive():
    for args in (["-g", 0], ["-g", 6, "-p", 0], ["-g", 6, "-p", 100, "-s", 0, "--potential", 0]):
        r = run("solve", *args, "--backend", "reference")
        assert r.exit_code == 0, r.output
    assert fields(run("solve", "-g", 6, "-p", 100, "--backend", "reference").stdout)["edges"] == "30"


def test_bad_types_and_missing_values():
    assert_user_error(run("solve", "-g", "abc"), "--generate", "abc")
    assert_user_error(run("solve", "-g", 5, "-p", "many"), "--percent", "many")
    assert_user_error(run("solve", "-g"), "-g")
    assert_user_error(run("generate", 5), "Missing option", "--output")
    assert_user_error(run("generate", "-o", "g.gr"), "Missing argument", "N")
    assert_user_error(run("path", "r.npz", 0), "Missing argument", "V")
    assert_user_error(run("report"), "Missing argument", "RESULTS")
    assert_user_error(run("batch", "-o", "b.npz"), "Missing argument", "INPUT")
    assert_user_error(run("query", "r.npz", "--to", 3), "--to needs --from")


def test_path_checks(tmp_path):
    missing, folder = tmp_path / "missing.gr", tmp_path / "folder"
    folder.mkdir()
    for args in (["solve", missing], ["metrics", missing], ["report", missing], ["batch", missing, "-o", "b.npz"],
                 ["bench", "--ceilings", missing], ["solve", "-g", 5, "--workdir", missing],
                 ["solve", "-g", 5, "--resume", missing]):
        assert_user_error(run(*args), "does not exist", str(missing))
    for args in (["solve", folder], ["metrics", folder], ["solve", "-g", 5, "-o", folder],
                 ["generate", 5, "-o", folder], ["batch", __file__, "-o", folder], ["bench", "--json", folder],
                 ["bench", "--ceilings", folder], ["report", tmp_path, "-o", folder]):
        assert_user_error(run(*args), "is a directory", str(folder))
    for args in (["solve", "-g", 5, "--workdir", __file__], ["solve", "-g", 5, "--checkpoint", __file__],
                 ["bench", "--out", __file__]):
        assert_user_error(run(*args), "is a file", __file__)


@pytest.mark.parametrize("raised, status, line", [
    (OSError(28, "No space left on device", "g.gr"), 1, "error: No space left on device: g.gr"),
    (MemoryError(), 1, "error: out of memory: try a narrower --dtype"),
    (KeyboardInterrupt(), 1, "error: aborted"),
    (fw.FloydwarpError("bad graph"), 2, "error: bad graph"),
])
def test_errors_from_the_command_body(monkeypatch, tmp_path, raised, status, line):
    def write_graph(graph, path):
        raise raised

    monkeypatch.setattr(floydwarp.io, "write_graph", write_graph)
    r = run("generate", 5, "-o", tmp_path / "g.gr")
    assert r.exit_code == status and r.stdout == "", r.output
    assert r.stderr.strip().splitlines()[-1].startswith(line), r.stderr


def test_bench_writes_json_with_scipy(tmp_path):
    out = tmp_path / "bench.json"
    r = run("bench", "--backend", "reference", "--sizes", "24,40", "--repeats", 3, "--scipy-max-n", 30,
            "--json", out)
    assert r.exit_code == 0, r.output
    assert r.stdout.splitlines()[0].split()[:3] == ["n", "backend/algorithm", "dtype"]
    data = json.loads(out.read_text())
    assert data["study"] == "run" and data["environment"]["command"].startswith("floydwarp bench")
    recs = {(x["n"], x["backend"]): x for x in data["records"]}
    assert recs[(24, "scipy")]["status"] == "ok" and recs[(24, "scipy")]["time_s"] > 0
    assert recs[(40, "scipy")]["status"] == "skipped" and "SciPy skipped above n = 30" in recs[(40, "scipy")]["note"]
    ref = recs[(24, "reference")]
    assert ref["matches_scipy"] is True and ref["speedup_vs_scipy"] > 0 and len(ref["times_s"]) == 3
    assert ref["relaxations_per_s"] == pytest.approx(24 ** 3 / ref["compute_s"])
    assert "speedup_vs_scipy" not in recs[(40, "reference")]


def test_bench_options_and_errors():
    r = run("bench", "run", "--backend", "reference", "--sizes", "16", "--no-scipy", "-r", 1,
            "--dtype", "int16,float32")
    assert r.exit_code == 0, r.output
    assert "scipy/" not in r.stdout and "int16" in r.stdout and "float32" in r.stdout
    assert_user_error(run("bench", "kernels?"), "unknown study")
    assert_user_error(run("bench", "--sizes", "10,x"), "--sizes")
    assert_user_error(run("bench", "--backend", "reference", "--dtype", "int8", "--sizes", "8"), "int8")
    assert_user_error(run("bench", "--backend", "reference", "-a", "quantum", "--sizes", "8"), "quantum")


def test_python_dash_m():
    p = subprocess.run([sys.executable, "-m", "floydwarp", "--help"], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0 and "solve" in p.stdout and "bench" in p.stdout
    p = subprocess.run([sys.executable, "-m", "floydwarp", "solve", "--bogus"], capture_output=True, text=True,
                       timeout=60)
    assert p.returncode == 2 and p.stderr.startswith("error: ") and len(p.stderr.splitlines()) == 1


def test_max_gpu_memory_sizes():
    from floydwarp.cli.app import parse_bytes

    assert parse_bytes("4GB", "x") == 4 * 10 ** 9 and parse_bytes("4e9", "x") == 4 * 10 ** 9
    assert parse_bytes("512MiB", "x") == parse_bytes("512M", "x") == 512 * 2 ** 20
    result = run("solve", "--generate", "10", "--max-gpu-memory", "lots")
    assert result.exit_code == 2 and "4GB" in result.stderr


# ------------------------------------------------------------------ issue 25
@needs_io
def test_impossible_dimacs_size_is_bad_input(tmp_path):
    path = tmp_path / "huge.gr"
    path.write_bytes(b"p sp 1000000000000 1\na 1 2 3\n")
    assert_user_error(run("solve", path), str(path), "line 1", "p sp 1000000000000 1", "at most 2147483647")


@needs_io
def test_non_utf8_mtx_banner_is_one_line(tmp_path):
    path = tmp_path / "bad.mtx"
    path.write_bytes(b"%%MatrixMarket matrix coordinate inte\xd6er general\n2 2 1\n1 2 3\n")
    assert_user_error(run("solve", path), str(path), "line 1", "field 'inte\\xd6er' is not supported")


@needs_io
def test_weight_at_int16_inf_refused(tmp_path):
    path = tmp_path / "w.csv"
    path.write_text("0,1,20000\n")
    assert_user_error(run("solve", path, "--dtype", "int16"), "cannot hold edge weight 20000", "use int32")


@needs_io
@pytest.mark.parametrize("weight", ["1e26", str(2 ** 70)])
def test_integer_weights_float64_rounds_are_a_warning(tmp_path, weight):
    path = tmp_path / "big.csv"
    path.write_text(f"source,target,weight\n0,1,{weight}\n1,2,5\n")
    result = run("solve", path)
    assert result.exit_code == 0, result.output
    assert fields(result.stdout)["dtype"] == "float64"
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("warning: integer edge weights") and "may round" in lines[0]
    quiet = run("solve", path, "--dtype", "float64")
    assert quiet.exit_code == 0 and quiet.stderr == ""


class _Ended(Exception):
    pass


class _FakeMPI:
    def __init__(self):
        self.finalized = False

    def Is_initialized(self):
        return True

    def Is_finalized(self):
        return self.finalized

    def Finalize(self):
        self.finalized = True


@pytest.mark.parametrize("c_library", [True, False], ids=["libc-exit", "no-c-library"])
def test_an_mpi_rank_ends_finalized_through_the_c_librarys_exit(monkeypatch, c_library):
    """A successful --distributed rank: MPI finalized, then the C library's exit (its handlers
    tell MPICH's launcher the rank finished); os._exit only where there is no C library handle."""
    import ctypes
    import os

    from floydwarp import cli

    mpi, ends = _FakeMPI(), []

    def ended(how):
        def end(status):
            ends.append((how, status, mpi.finalized))
            raise _Ended

        return end

    class Library:
        exit = staticmethod(ended("c exit"))

    def library(name):
        if not c_library:
            raise TypeError("no handle")
        return Library

    monkeypatch.setitem(sys.modules, "mpi4py.MPI", mpi)
    monkeypatch.setattr(ctypes, "PyDLL", library)
    monkeypatch.setattr(os, "_exit", ended("os._exit"))
    with pytest.raises(_Ended):
        cli._end_mpi_rank()
    assert ends == [("c exit" if c_library else "os._exit", 0, True)]


@pytest.mark.parametrize("environ, gpu", [
    ({"OMPI_COMM_WORLD_LOCAL_RANK": "1"}, 1), ({"MPI_LOCALRANKID": "2"}, 2), ({}, 0)])
def test_an_mpi_rank_drives_the_gpu_the_launcher_started(monkeypatch, environ, gpu):
    """The CLI's early start (launch.named_gpus), the CLI's generator and the mpi backend's
    device_for_rank name one GPU: the launcher's local rank, else MPI's (a world of one here)."""
    import sys
    from types import SimpleNamespace

    pytest.importorskip("mpi4py")
    from floydwarp.launch import named_gpus
    from floydwarp.mpi import comm as mpi_comm
    from floydwarp.mpi.gpu import device_for_rank

    for name in mpi_comm.LOCAL_RANK_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    for name, value in environ.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setitem(sys.modules, "cupy", SimpleNamespace(cuda=SimpleNamespace(
        runtime=SimpleNamespace(getDeviceCount=lambda: 4))))
    assert mpi_comm.local_rank() == gpu
    assert device_for_rank(mpi_comm.world()) == gpu
    if environ:
        assert named_gpus(["solve", "-g", "9", "--distributed", "-a", "gpu-2d"], environ=environ)[1] == gpu
