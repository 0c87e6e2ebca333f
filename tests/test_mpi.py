"""The mpi backend under a real launcher (mpiexec -n 2 and -n 4, oversubscribed on small machines)."""
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("mpi4py")
MPIEXEC = shutil.which("mpiexec")
pytestmark = [pytest.mark.mpi, pytest.mark.skipif(MPIEXEC is None, reason="no mpiexec")]
SCRIPTS = Path(__file__).parent / "mpi_scripts"


def launch(n, script, *args, timeout=300):
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OMPI_MCA_rmaps_base_oversubscribe="1", NCCL_NVLS_ENABLE="0", PYTHONUNBUFFERED="1")
    t0 = time.monotonic()
    proc = subprocess.run([MPIEXEC, "-n", str(n), sys.executable, str(SCRIPTS / script), *args],
                          capture_output=True, text=True, timeout=timeout, env=env)
    return proc, time.monotonic() - t0


def last_json(stdout: str):
    """The job's last line of JSON (Open MPI 4.1's launcher adds terminal resets, ESC[0m, to the
    output it forwards)."""
    plain = re.sub(r"\x1b\[[0-9;]*m", "", stdout)
    return json.loads([line for line in plain.splitlines() if line.lstrip().startswith("{")][-1])


# one rank first: it compiles the kernels into Numba's cache alone, where 2 ranks compiled them
# side by side on a cold cache (twice the CPU of a fresh clone's suite)
@pytest.mark.parametrize("ranks", [1, 2, 4])
def test_results_identical_to_single_process(ranks):
    proc, _ = launch(ranks, "check_equal.py")
    assert proc.returncode == 0, proc.stderr[-3000:]
    summary = last_json(proc.stdout)
    assert summary["size"] == ranks and summary["cases"] > 50
    assert summary["failures"] == []


@pytest.mark.parametrize("mode", ["kill", "raise"])
def test_a_failing_rank_ends_the_job(mode):
    proc, seconds = launch(2, "kill_rank.py", mode, timeout=120)
    assert proc.returncode != 0
    assert seconds < 60
    if mode == "raise":
        assert "rank 1 of 2 failed: RuntimeError: injected failure in round 3" in proc.stderr


def test_ranks_ending_at_different_times_end_the_job_cleanly():
    """A successful rank finalizes MPI and skips the interpreter's teardown; under MPICH an
    ``os._exit`` there made the launcher report the job killed (signal 9) whenever the
    ranks ended at different times."""
    for _ in range(2):
        proc, _ = launch(4, "end_rank.py", timeout=120)
        assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
        assert sorted(re.findall(r"rank \d done", proc.stdout)) == [f"rank {r} done" for r in range(4)]
        assert "went on" not in proc.stdout


def test_a_dtype_too_narrow_after_the_run_is_refused_on_every_rank():
    proc, _ = launch(3, "too_narrow.py", timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    ranks = last_json(proc.stdout)["ranks"]
    assert len(ranks) == 3 and ranks[0] and all(r == {a: "too narrow" for a in ranks[0]} for r in ranks)


def launch_cli(n, *args, timeout=300):
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OMPI_MCA_rmaps_base_oversubscribe="1", NCCL_NVLS_ENABLE="0")
    return subprocess.run([MPIEXEC, "-n", str(n), sys.executable, "-m", "floydwarp", "solve", *args],
                          capture_output=True, text=True, timeout=timeout, env=env)


def test_cli_distributed_solve_prints_once_and_checks():
    proc = launch_cli(2, "-g", "150", "-p", "10", "--distributed", "-c")
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.count("backend:   mpi/blocked-2d") == 1
    assert "check:     match" in proc.stdout
    assert "2 MPI ranks (rank:pid@host) 0:" in proc.stderr


def test_bad_input_refused_on_every_rank_with_the_same_message(tmp_path):
    bad = tmp_path / "bad.gr"
    bad.write_text("p sp 3 1\na 1 7 5\n")
    proc = launch_cli(2, str(bad), "--distributed")
    assert proc.returncode != 0
    errors = [line for line in proc.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 2 and errors[0] == errors[1] and "bad.gr" in errors[0]


@pytest.mark.parametrize("lookahead", ["1", "0"])
def test_checkpoint_on_every_rank_resumes_bit_identical(tmp_path, lookahead):
    proc, _ = launch(2, "checkpoint_resume.py", str(tmp_path), lookahead)
    assert proc.returncode == 0, proc.stderr[-3000:]
    summary = last_json(proc.stdout)
    assert summary["stopped"] and summary["identical"]
    # rank 1's corrupt shard: both ranks refuse (none waits alone in a collective), with rank 1's reason
    assert [("corrupt (CRC32 mismatch)" in r, r.startswith("rank 1: ")) for r in summary["refused"]] == \
        [(True, True), (True, False)], summary["refused"]
    assert sorted(p.name.split(".")[0] for p in tmp_path.glob("shard-*.dist.npy")) == ["shard-0", "shard-1"]


# ---------------------------------------------------------------- results written rank by rank (.npy layout)
@pytest.mark.parametrize("ranks", [2, 4])
def test_parallel_write_is_bit_identical_to_single_process_files(tmp_path, ranks):
    proc, _ = launch(ranks, "parallel_write.py", str(tmp_path), "compare")
    assert proc.returncode == 0, proc.stderr[-3000:]
    summary = last_json(proc.stdout)
    assert summary["size"] == ranks and summary["cases"] == 20
    assert summary["failures"] == []
    assert summary["leftovers"] == []                                  # no temporary file stays behind
    assert "zero-cycles blocked-2d pred=True" in summary["fallbacks"]  # loops found rank by rank


def test_result_too_large_for_rank_0_is_refused_without_a_path_and_written_with_one(tmp_path):
    proc, _ = launch(2, "parallel_write.py", str(tmp_path), "refuse")
    assert proc.returncode == 0, proc.stderr[-3000:]
    summary = last_json(proc.stdout)
    first, second = summary["messages"]
    assert first == second and "cannot be gathered to rank 0" in first and "output .npy path" in first
    assert summary["written"] == {"blocked-2d": True, "rows": True}
    # an explicit dtype too narrow for the paths: refused on every rank, before anything is written
    assert summary["narrow"] == ["dtype int16 was too narrow for this graph's shortest paths; use int32"] * 2
    assert summary["narrow_written"] is False


def test_a_rank_failing_to_write_fails_every_rank_and_leaves_no_file(tmp_path):
    proc, _ = launch(2, "parallel_write.py", str(tmp_path), "fail")
    assert proc.returncode == 0, proc.stderr[-3000:]
    summary = last_json(proc.stdout)
    first, second = summary["messages"]
    assert first == second
    assert "failed.npy: rank 1 could not write its part of it: OSError" in first
    assert summary["files"] == []                        # neither temporary files nor a partial result


def test_cli_distributed_parallel_write_reads_back(tmp_path):
    from floydwarp.io import read_result

    out = tmp_path / "out.npy"
    proc = launch_cli(4, "-g", "101", "-p", "10", "--potential", "5", "--predecessors", "--distributed",
                      "--parallel-write", "-c", "-o", str(out))
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "check:     match" in proc.stdout
    assert f"output:    {out} (written by 4 ranks)" in proc.stdout
    back = read_result(out)
    assert back.n == 101 and back.pred is not None and back.backend == "mpi"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.json", "out.npy", "out.pred.npy"]


def test_cli_parallel_write_needs_a_npy_output(tmp_path):
    proc = launch_cli(2, "-g", "20", "--distributed", "--parallel-write", "-o", str(tmp_path / "out.npz"))
    assert proc.returncode == 2
    assert "--parallel-write needs --distributed and -o NAME.npy" in proc.stderr


def test_parallel_write_of_every_dtype_matches_a_plain_loop(tmp_path):
    """Issue 20: the ranks' own writes of int16 ... float64 results, byte for byte."""
    from plain_outputs import CASES, DTYPES, INF, cells, npy_bytes, plain_distances

    proc, _ = launch(2, "write_every_dtype.py", str(tmp_path))
    assert proc.returncode == 0, proc.stderr[-3000:]
    summary = last_json(proc.stdout)
    assert summary["errors"] == {}
    for case, (n, edges) in CASES.items():
        for dtype in DTYPES:
            name = f"{case}-{dtype}"
            expected = npy_bytes(cells(plain_distances(n, edges), dtype), dtype, n)
            assert (tmp_path / f"{name}.npy").read_bytes() == expected, name
            meta = json.loads((tmp_path / f"{name}.json").read_text())
            assert (meta["dtype"], meta["n"], meta["inf"]) == (dtype, n, INF.get(dtype)), name
