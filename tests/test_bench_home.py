"""One home for measurements (issue 39): every study and every script in bench/ under test on the CPU.

* every name a study module or a bench/ script imports from floydwarp, and every attribute it reads
  of such a module (``transfer.HostMatrix``), exists: a renamed symbol fails here, not on the GPU;
* the studies added with the probes they replace run at a tiny size where the CPU can run them;
* bench/device/run.sh: every step of every machine profile is a command the CLI accepts, and one
  step really runs.
"""
from __future__ import annotations

import ast
import importlib
import importlib.util
import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

import floydwarp
from floydwarp.bench import STUDIES, STUDY_MODULES, BenchConfig, view
from floydwarp.errors import BackendUnavailableError, FloydwarpError

ROOT = Path(__file__).resolve().parent.parent
SRC = Path(floydwarp.__file__).resolve().parent
BENCH = ROOT / "bench"
RUNNER = BENCH / "device" / "run.sh"
PROFILES = sorted((BENCH / "device" / "machines").glob("*.sh"))
SCRIPTS = sorted(p for p in BENCH.rglob("*.py") if not {"results", "base"} & set(p.relative_to(BENCH).parts))
BENCH_MODULES = sorted((SRC / "bench").rglob("*.py"))


# ---------------------------------------------------------------- every name exists
def _module_name(path: Path) -> str | None:
    """The dotted name of a file inside the package (None: a script outside it)."""
    try:
        rel = path.resolve().relative_to(SRC.parent)
    except ValueError:
        return None
    parts = list(rel.with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _resolve(module: str):
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        # a module missing here, or an optional package's (floydwarp.pyg says which in an ImportError of its own)
        missing = exc if isinstance(exc, ModuleNotFoundError) else exc.__cause__ or exc.__context__
        if not isinstance(missing, ModuleNotFoundError) or not missing.name:
            raise
        if (missing.name == module or module.startswith(missing.name + ".")) and missing.name.startswith("floydwarp"):
            raise AssertionError(f"no module {module}") from None
        pytest.skip(f"{module} needs {missing.name}")


def missing_names(path: Path) -> list[str]:
    """Imports of floydwarp names that do not exist, and attributes read of floydwarp modules (and their
    classes) that they lack, anywhere in the file (function bodies included)."""
    tree = ast.parse(path.read_text(), str(path))
    here = _module_name(path)
    package = here if path.name == "__init__.py" else (here.rpartition(".")[0] if here else None)
    bound, problems = {}, []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "floydwarp":
                    module = _resolve(alias.name)
                    bound[alias.asname or alias.name.split(".")[0]] = module if alias.asname else floydwarp
        elif isinstance(node, ast.ImportFrom):
            name = importlib.util.resolve_name("." * node.level + (node.module or ""), package) if node.level \
                else node.module
            if not name or name.split(".")[0] != "floydwarp":
                continue
            module = _resolve(name)
            for alias in node.names:
                if hasattr(module, alias.name):
                    bound[alias.asname or alias.name] = getattr(module, alias.name)
                    continue
                try:
                    bound[alias.asname or alias.name] = importlib.import_module(f"{name}.{alias.name}")
                except ModuleNotFoundError:
                    problems.append(f"line {node.lineno}: {name} has no {alias.name}")
    for node in ast.walk(tree):
        if not isinstance(node, ast.Attribute):
            continue
        chain, value = [], node
        while isinstance(value, ast.Attribute):
            chain.append(value.attr)
            value = value.value
        if not isinstance(value, ast.Name) or value.id not in bound:
            continue
        obj, dotted = bound[value.id], value.id
        for attr in reversed(chain):
            if not (isinstance(obj, type) or type(obj).__name__ == "module"):
                break                                   # a function or an instance: what it holds is dynamic
            if not hasattr(obj, attr):
                try:
                    obj = importlib.import_module(f"{obj.__name__}.{attr}")
                except (ModuleNotFoundError, AttributeError):
                    problems.append(f"line {node.lineno}: {dotted}.{attr} does not exist")
                    break
            else:
                obj = getattr(obj, attr)
            dotted += f".{attr}"
    return sorted(set(problems))


def _params(paths, root):
    return [pytest.param(p, id=str(p.relative_to(root))) for p in paths]


@pytest.mark.parametrize("path", _params(SCRIPTS, ROOT) + _params(BENCH_MODULES, ROOT))
def test_every_floydwarp_name_a_benchmark_uses_exists(path):
    assert missing_names(path) == []


def test_the_name_check_finds_a_renamed_symbol(tmp_path):
    script = tmp_path / "probe.py"
    script.write_text("import floydwarp as fw\nfrom floydwarp.gpu import transfer\nfrom floydwarp import solve\n"
                      "def f():\n    from floydwarp.generate import erdos_renyi, no_such_generator\n"
                      "    transfer.HostMatrix.no_such_method\n    return fw.generate.erdos_renyi, fw.nope\n")
    assert missing_names(script) == ["line 5: floydwarp.generate has no no_such_generator",
                                     "line 6: transfer.HostMatrix.no_such_method does not exist",
                                     "line 7: fw.nope does not exist"]


@pytest.mark.parametrize("study", list(STUDY_MODULES))
def test_every_study_module_has_the_study_interface(study):
    module = view(study)
    assert module.NAME == study and module.TITLE
    for name in ("run", "columns", "summary_lines", "plots"):
        assert callable(getattr(module, name)), name
    assert module.summary_lines({"records": []}) == [] and module.plots({"records": []}, ".") == []


# ---------------------------------------------------------------- the studies that replaced probes
def _tiny(**kw):
    return BenchConfig(repeats=1, percent=30.0, seed=1, **kw)


def test_small_against_scipy(monkeypatch):
    from floydwarp.bench.studies import small

    monkeypatch.setattr(small, "MIXED", 12)
    data = STUDIES["small"](_tiny(sizes=[1, 5]))
    per_n, mix = data["records"][:-1], data["records"][-1]
    assert [r["n"] for r in per_n] == [1, 5] and mix["graphs"] == 12 and mix["n_range"] == "10-40"
    for r in per_n:
        assert all(r[key] > 0 for key in small.CALLS_PER_N)
    assert "scipy_edges_us" not in mix and mix["speedup"] == mix["scipy_us"] / mix["floyd_warshall_us"]
    assert len(small.summary_lines(data)) == 3


def test_startup_parts(tmp_path):
    from floydwarp.bench import results
    from floydwarp.bench.studies import startup

    data = STUDIES["startup"](_tiny(n=16, parts=["tiny-process", "in-process"]))
    recs = {r["part"]: r for r in data["records"]}
    assert list(recs) == ["in-process", "tiny-process"], data["records"]        # PARTS' order
    assert all(r["status"] == "ok" for r in recs.values())
    assert recs["tiny-process"]["command"] == "floydwarp solve --generate 2 -p 30 -s 1"
    assert 0 < recs["tiny-process"]["compute_s"] < recs["tiny-process"]["wall_s"]
    assert "compute" in recs["in-process"]["stages_s"] and recs["in-process"]["n"] == 16
    results.save(data, tmp_path, plots=False)
    assert json.loads((tmp_path / "startup.json").read_text())["records"][0]["part"] == "in-process"
    with pytest.raises(FloydwarpError, match="unknown startup part warm"):
        startup.chosen_parts(_tiny(parts=["warm"]))


def test_startup_floor_code_runs():
    from floydwarp.bench.studies import startup

    env = startup.child_env()
    startup.run_python(startup.FLOOR_CODE, env)
    parts = startup.run_python(startup.FLOOR_PARTS_CODE, env, capture=True)[1]
    assert set(ast.literal_eval(parts.strip().splitlines()[-1])) == {"numpy_import", "numba_import",
                                                                      "first_cached_call"}


def test_startup_cold_compile_lists_kernels():
    from floydwarp.bench.studies import startup

    rec = startup.cold_compile(_tiny(n=16))
    assert rec["kernels"] and all(k["s"] > 0 for k in rec["kernels"])
    assert rec["wall_s"] == sum(k["s"] for k in rec["kernels"])


def test_inputs():
    import floydwarp as fw

    data = STUDIES["inputs"](_tiny(sizes=[40]))
    cases = [r["case"] for r in data["records"]]
    assert cases == ["erdos_renyi", "from_edges sorted int64", "from_edges sorted int32", "from_edges shuffled int64",
                     "from_edges shuffled int32", "read_graph text, integer weights", "read_graph text, real weights"]
    edges = fw.generate.erdos_renyi(40, 30.0, seed=1).num_edges
    assert all(r["edges"] == edges for r in data["records"][1:]) and all(r["time_s"] > 0 for r in data["records"])
    assert data["records"][-1]["bytes"] > 0


def test_networkx_studies_tiny():
    nx = pytest.importorskip("networkx")
    if "floydwarp" not in nx.utils.backends.backends:
        pytest.skip("the floydwarp NetworkX backend is not installed (pip install -e .)")
    from floydwarp.nx_backend import FUNCTIONS

    data = STUDIES["networkx-stages"](_tiny(sizes=[12]))
    pairs = {(r["function"], r["graph"]) for r in data["records"]}
    assert pairs == {(f, g) for f in FUNCTIONS for g in ("sparse", "dense")}
    for r in data["records"]:
        assert r["status"] == "ok" and r["first_s"]["total"] >= r["first_s"]["dispatch"]
    data = STUDIES["networkx"](_tiny(sizes=[12]))
    assert data["records"] and all(r["status"] == "ok" and r["equal"] for r in data["records"])


def test_panel_needs_a_gpu():
    if view("panel").common.usable("gpu"):
        pytest.skip("a GPU is here: tests/test_gpu*.py run it")
    with pytest.raises(BackendUnavailableError, match="backend 'gpu' is not available"):
        STUDIES["panel"](_tiny())


# ---------------------------------------------------------------- the scripts that stay
def test_checked_run_dry_run_on_the_cpu(tmp_path):
    out = tmp_path / "checked.json"
    subprocess.run([sys.executable, str(BENCH / "checked_run.py"), "--backend", "cpu", "--n", "60", "--dijkstra", "3",
                    "--checksum", "--out", str(out)], check=True, capture_output=True, env=_env())
    report = json.loads(out.read_text())
    assert report["certificate"]["ok"] and report["dijkstra_rows"]["equal"] and report["run"]["n"] == 60


def test_plot_e2e_draws_saved_results(tmp_path):
    pytest.importorskip("matplotlib")
    png = tmp_path / "e2e.png"
    subprocess.run([sys.executable, str(BENCH / "plot_e2e.py"), str(png),
                    f"gpu={BENCH / 'results/e2e-gpu/before-h100-n32768.json'}:int32",
                    f"cpu={BENCH / 'results/e2e-cpu/after-2core.json'}"], check=True, capture_output=True, env=_env())
    assert png.stat().st_size > 10_000


def test_every_path_a_device_script_names_exists():
    import re

    for script in sorted(BENCH.rglob("*.sh")):
        for path in re.findall(r"\b((?:bench|tests)/[\w./-]+\.(?:py|sh))\b", script.read_text()):
            if re.search(r"/[A-Z_]+\.\w+$", path):
                continue                                        # a placeholder: bench/device/SCRIPT.sh
            assert (ROOT / path).is_file(), f"{script.relative_to(ROOT)} names {path}, which does not exist"


def test_the_process_study_runs_the_main_job_on_several_gpus_as_the_cli_accepts(monkeypatch):
    """bench/device/process_gpu.py --gpus N: the main job as N threads (``--gpus N``) and as N MPI
    ranks (only where there is an ``mpiexec``); the solve command takes each command line."""
    import importlib.util

    import click

    import floydwarp.cli  # noqa: F401  (registers the commands)
    from floydwarp.cli import solve as cli_solve
    from floydwarp.cli.app import app

    spec = importlib.util.spec_from_file_location("process_gpu", BENCH / "device" / "process_gpu.py")
    study = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(study)
    assert list(study.multi_gpu_runs(4, None)) == ["threads-4"]
    runs = study.multi_gpu_runs(4, "/usr/bin/mpiexec")
    assert runs["threads-4"][0] == [] and runs["mpi-4"][0] == ["/usr/bin/mpiexec", "-n", "4"]
    monkeypatch.setenv("OMPI_COMM_WORLD_LOCAL_RANK", "0")           # a rank's GPU, as mpiexec would say
    jobs = {}
    # under the group's context, as the command line makes it: a context without it would leave
    # Click's help option cached on the command without -h for later tests
    group = click.Context(app, info_name="floydwarp", **app.context_settings)
    for name, (_, args) in runs.items():
        assert args[0] == "solve"
        ctx = app.commands["solve"].make_context("solve", list(args[1:]), parent=group)
        jobs[name] = cli_solve._checked(ctx, ctx.params)
    assert jobs["threads-4"]["gpus"] == 4 and jobs["threads-4"]["backend"] == "auto"
    assert jobs["mpi-4"]["distributed"] and jobs["mpi-4"]["algorithm"] == "gpu-2d" and jobs["mpi-4"]["rank_gpu"] == 0
    assert {job["generate"] for job in jobs.values()} == {32768}


def test_the_process_study_gives_bytecode_to_all_each_job_imports(tmp_path):
    """process_gpu.py --bytecode: every module that each measured job imports, and the whole tree,
    get bytecode in a cache folder of their own; this process's ``sys.pycache_prefix`` is left as it was."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("process_gpu", BENCH / "device" / "process_gpu.py")
    study = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(study)
    graph = tmp_path / "g.in"
    study.run(str(SRC.parent), ["generate", "40", "-p", "20", "-o", str(graph)], tmp_path / "gen")
    before = sys.pycache_prefix
    tree = {"after": str(SRC.parent)}
    prefix = study.bytecode_for_imports(tree, [["solve", "--generate", "30"], ["solve", str(graph)]], tmp_path)
    assert sys.pycache_prefix == before
    imported = [set((tmp_path / f"imported-{i}.txt").read_text().split()) for i in (0, 1)]
    assert str(SRC / "cli" / "solve.py") in imported[0] & imported[1]
    assert any(f.endswith(os.path.join("numpy", "__init__.py")) for f in imported[0])
    sys.pycache_prefix = str(prefix)
    try:
        every = imported[0] | imported[1] | {str(f) for f in SRC.rglob("*.py")}         # the whole tree too
        assert all(os.path.isfile(importlib.util.cache_from_source(f)) for f in every)
    finally:
        sys.pycache_prefix = before


# ---------------------------------------------------------------- the runner
def _env(**extra):
    env = dict(os.environ, **extra)
    env["PYTHONPATH"] = os.pathsep.join([str(SRC.parent), *filter(None, [os.environ.get("PYTHONPATH")])])
    env["PYTHON"] = sys.executable
    return env


def _groups(profile: Path) -> list[str]:
    listing = subprocess.run(["bash", "-c", 'step() { echo "$1"; }; . "$1"; echo "ALL $ALL"', "-", str(profile)],
                             check=True, capture_output=True, text=True).stdout.split("\n")
    names = [line for line in listing if line and not line.startswith("ALL ")]
    wanted = next(line for line in listing if line.startswith("ALL ")).split()[1:]
    assert set(wanted) <= {n.split(":")[0] for n in names}, f"{profile.name}: ALL names a group with no step"
    return list(dict.fromkeys(n.split(":")[0] for n in names))


def dry_run(what, machine, *options, **env):
    out = subprocess.run(["bash", str(RUNNER), what, machine, *options], check=True, capture_output=True,
                         text=True, env=_env(DRY_RUN="1", RESULTS="R", **env), cwd=ROOT).stdout
    return [shlex.split(line) for line in out.splitlines() if line.strip()]


@pytest.mark.parametrize("profile", PROFILES, ids=[p.stem for p in PROFILES])
def test_every_step_of_every_profile_is_a_command_the_cli_accepts(profile, monkeypatch):
    from floydwarp.cli import bench as cli_bench
    from floydwarp.cli.app import app

    accepted = []
    monkeypatch.setattr(cli_bench, "_run_study", lambda study, config, *a: accepted.append((study, config)))
    monkeypatch.setattr(cli_bench, "_run_table", lambda config, *a: accepted.append(("run", config)))
    for group in _groups(profile):
        for tree, limit, *words in dry_run(group, profile.stem):
            assert tree == "this" and int(limit) > 0
            if words[:3] == [sys.executable, "-m", "floydwarp"] and words[3] == "bench":
                result = CliRunner().invoke(app, words[3:])
                assert result.exit_code == 0, f"{profile.name} {group}: {' '.join(words[3:])}\n{result.output}"
            elif words[:3] == [sys.executable, "-m", "floydwarp"]:
                assert words[3] == "report"
            elif len(words) > 1 and words[1].startswith("bench/"):
                assert (ROOT / words[1]).is_file(), words
            else:
                assert words[0] == "env" and "pytest" in words, words
                assert all((ROOT / w).exists() for w in words if w.startswith("tests/")), words
    assert accepted


def test_runner_before_and_after_alternate_and_pytest_runs_once():
    steps = dry_run("e2e", "h100", BEFORE="/tmp/old/src", ROUNDS="2")
    assert [s[0] for s in steps if "--out" in s and "e2e_gpu.py" in s[3]] == ["before", "after", "after", "before"]
    outs = [s[s.index("--out") + 1] for s in steps if "e2e_gpu.py" in s[3]]
    assert outs == ["R/e2e-gpu-before-1.json", "R/e2e-gpu-after-1.json", "R/e2e-gpu-after-2.json",
                    "R/e2e-gpu-before-2.json"]
    assert [s[0] for s in steps if "pytest" in s] == ["this"]


def test_runner_options_study_and_script_fallbacks(tmp_path):
    (step,) = dry_run("block-size:cpu", "h100", "-r", "5")
    assert step[-4:] == ["-r", "5", "--out", "R/block-size-cpu"]
    for study in ("kernels", "run"):                            # not in the cpu profile: the study itself
        (step,) = dry_run(study, "cpu", "--n", "64")
        assert step[2:] == [sys.executable, "-m", "floydwarp", "bench", study, "--n", "64", "--out", f"R/{study}"]
    bad = subprocess.run(["bash", str(RUNNER), "sizes", "no-such-machine"], check=False, capture_output=True,
                         text=True, env=_env())
    assert bad.returncode == 2 and "no profile" in bad.stderr and "h100" in bad.stderr
    usage = subprocess.run(["bash", str(RUNNER)], check=False, capture_output=True, text=True, env=_env())
    assert usage.returncode == 2 and "bench/device/run.sh WHAT MACHINE [OPTION ...]" in usage.stderr


def test_runner_runs_a_step_and_packs_it(tmp_path):
    results, out = tmp_path / "results", tmp_path / "out"
    done = subprocess.run(["bash", str(RUNNER), "inputs", "cpu", "--sizes", "24", "-r", "1", "--no-plots"],
                          check=False, capture_output=True, text=True,
                          env=_env(LOCK="", RESULTS=str(results), OUT=str(out)),
                          cwd=ROOT)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    data = json.loads((results / "inputs" / "inputs.json").read_text())
    assert data["config"]["sizes"] == [24] and data["records"]
    assert (out / "run.log").is_file() and (out / "bench-cpu.tar.gz").stat().st_size > 0
