"""Checkpoints: interrupted runs resume to results bit-identical to uninterrupted ones."""
import json
import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

import floydwarp as fw
from floydwarp.checkpoint import CheckpointInterrupt


def stop_at_round(k):
    """A progress callback that sends this process SIGTERM once round k is done."""
    def report(done, total):
        if done == k:
            os.kill(os.getpid(), signal.SIGTERM)
    return report


@pytest.mark.parametrize("dtype, predecessors", [("int32", False), ("float64", True), ("int16", True)])
def test_sigterm_saves_and_resume_is_bit_identical(tmp_path, dtype, predecessors):
    g = fw.generate.erdos_renyi(300, 10, seed=7, potential=4)
    kw = dict(backend="cpu", dtype=dtype, predecessors=predecessors, block_size=32)
    with pytest.raises(CheckpointInterrupt, match="after round 4 of 10"):
        fw.solve(g, checkpoint=tmp_path, progress=stop_at_round(4), **kw)
    manifest = json.loads((tmp_path / "manifest.json").read_text())
    assert manifest["round"] == 4 and manifest["dtype"] == dtype
    resumed = fw.solve(g, resume=tmp_path, **kw)
    whole = fw.solve(g, **kw)
    assert np.array_equal(resumed.dist, whole.dist)
    if predecessors:
        assert np.array_equal(resumed.pred, whole.pred)


def test_checkpoint_every_keeps_only_the_latest_shards(tmp_path):
    g = fw.generate.erdos_renyi(200, 10, seed=1)
    fw.solve(g, backend="cpu", block_size=16, checkpoint=tmp_path, checkpoint_every=0)
    shards = sorted(p.name for p in tmp_path.glob("shard-*"))
    assert shards == ["shard-0.r12.dist.npy"]          # the last save, after round 12 of 13


def test_resume_refuses_another_graph_or_dtype(tmp_path):
    g = fw.generate.erdos_renyi(200, 10, seed=1)
    fw.solve(g, backend="cpu", block_size=16, checkpoint=tmp_path, checkpoint_every=0)
    other = fw.generate.erdos_renyi(200, 10, seed=2)
    with pytest.raises(fw.FloydwarpError, match="from another graph"):
        fw.solve(other, backend="cpu", block_size=16, resume=tmp_path)
    with pytest.raises(fw.FloydwarpError, match="from another dtype"):
        fw.solve(g, backend="cpu", block_size=16, dtype="int64", resume=tmp_path)


def test_corrupt_shard_is_refused_and_a_torn_new_shard_is_ignored(tmp_path):
    g = fw.generate.erdos_renyi(200, 10, seed=1)
    fw.solve(g, backend="cpu", block_size=16, checkpoint=tmp_path, checkpoint_every=0)
    # a process killed while writing the next shard leaves a partial file the manifest does not name
    (tmp_path / "shard-0.r13.dist.npy").write_bytes(b"\x93NUMPY partial")
    resumed = fw.solve(g, backend="cpu", block_size=16, resume=tmp_path)
    assert np.array_equal(resumed.dist, fw.solve(g, backend="cpu").dist)
    shard = tmp_path / "shard-0.r12.dist.npy"
    data = bytearray(shard.read_bytes())
    data[-1] ^= 0xFF
    shard.write_bytes(bytes(data))
    with pytest.raises(fw.FloydwarpError, match="corrupt"):
        fw.solve(g, backend="cpu", block_size=16, resume=tmp_path)


def test_resume_without_checkpoint(tmp_path):
    with pytest.raises(fw.FloydwarpError, match="no checkpoint to resume"):
        fw.solve(fw.generate.erdos_renyi(50, 10), backend="cpu", resume=tmp_path)


def run_cli(*args, **kw):
    return subprocess.Popen([sys.executable, "-m", "floydwarp", "solve", *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kw)


@pytest.fixture(scope="module")
def whole_1200():
    """The uninterrupted in-process run both killed CLI runs must equal, solved once for both:
    50 rounds of 24, each saved (--checkpoint-every 0), so a signal 0.1 s after the first save
    lands mid-run (n = 2400 in rounds of 48 took 4x the time, in writing its saves)."""
    return fw.solve(fw.generate.erdos_renyi(1200, 15, seed=3), backend="cpu", block_size=24, predecessors=True)


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM])
def test_cli_killed_run_resumes_bit_identical(tmp_path, sig, whole_1200):
    ckpt, out = tmp_path / "ckpt", tmp_path / "out.npz"
    args = ["-g", "1200", "-p", "15", "-s", "3", "-b", "24", "--predecessors", "--checkpoint", str(ckpt),
            "--checkpoint-every", "0", "-o", str(out)]
    proc = run_cli(*args)
    deadline = time.monotonic() + 120
    while not (ckpt / "manifest.json").exists():
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline
        time.sleep(0.02)
    time.sleep(0.1)
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=120)
    if proc.returncode == 0:
        pytest.skip("the run finished before the signal arrived")
    if sig == signal.SIGTERM:
        assert proc.returncode == 3 and "checkpoint saved" in err
    assert not out.exists()
    resumed = run_cli("--resume", str(ckpt))
    stdout, err = resumed.communicate(timeout=300)
    assert resumed.returncode == 0, err
    got = fw.Result.load(out)
    assert np.array_equal(got.dist, whole_1200.dist) and np.array_equal(got.pred, whole_1200.pred)


def test_cli_resume_refuses_other_settings(tmp_path):
    proc = run_cli("--resume", str(tmp_path), "-g", "10")
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 2 and "--resume continues the run" in err


# ---------------------------------------------------------------------- issue 35, item 2: trusted manifests
from floydwarp.checkpoint import manifest_digest  # noqa: E402
from floydwarp.errors import CheckpointError  # noqa: E402

KW = dict(backend="cpu", dtype="int64", predecessors=True, block_size=32)


@pytest.fixture(scope="module")
def stopped(tmp_path_factory):
    """A checkpoint of round 4 of 10 (shard-0.r4.*), the graph and its uninterrupted result."""
    folder = tmp_path_factory.mktemp("ck")
    g = fw.generate.erdos_renyi(300, 10, seed=9)
    with pytest.raises(CheckpointInterrupt):
        fw.solve(g, checkpoint=folder, progress=stop_at_round(4), **KW)
    return folder, g, fw.solve(g, **KW)


def _edited(stopped, tmp_path, edit, sign=False):
    """A copy of the checkpoint with ``edit(manifest)`` applied (and the manifest signed again)."""
    import shutil

    folder = tmp_path / "edited"
    shutil.copytree(stopped[0], folder)
    manifest = json.loads((folder / "manifest.json").read_text())
    manifest = edit(manifest) or manifest          # an edit returns a new manifest, or changes this one
    if sign and isinstance(manifest, dict):
        manifest["sha256"] = manifest_digest(manifest)
    (folder / "manifest.json").write_text(json.dumps(manifest))
    return folder


def _set(key, value):
    def edit(m):
        m[key] = value
    return edit


def _delete(*path):
    def edit(m):
        for key in path[:-1]:
            m = m[key]
        del m[path[-1]]
    return edit


def _renamed_round(m):
    """round 5 while the shards are shard-0.r4.*: the reviewer's second edit, shards renamed too."""
    m["round"] = 5


#: the reviewer's table (issue 35): exit 0 with 3,093,292 / 163,745 wrong distances, or tracebacks
EDITS = {
    "round 1e9": _set("round", 10 ** 9),
    "round 5, shard r4": _renamed_round,
    "shards deleted": _delete("shards"),
    "round abc": _set("round", "abc"),
    "manifest a list": lambda m: [m],
}


def test_the_checkpoint_resumes_bit_identical(stopped):
    folder, g, whole = stopped
    r = fw.solve(g, resume=folder, **KW)
    assert np.array_equal(r.dist, whole.dist) and np.array_equal(r.pred, whole.pred)


@pytest.mark.parametrize("edit", list(EDITS))
def test_an_edited_manifest_is_refused(stopped, tmp_path, edit):
    folder = _edited(stopped, tmp_path, EDITS[edit])
    why = "a JSON list, not an object" if edit == "manifest a list" else "changed after it was written"
    with pytest.raises(CheckpointError, match=why):
        fw.solve(stopped[1], resume=folder, **KW)


@pytest.mark.parametrize("edit, why", [
    (_set("round", 10 ** 9), r"round 1000000000 is not a round this run of 10 rounds can start from"),
    (_set("round", 0), r"round 0 is not a round"),
    (_set("round", True), r"round True is not a round"),
    (_set("round", "abc"), r"round 'abc' is not a round"),
    (_renamed_round, r"rank 0's dist shard is not the file shard-0\.r5\.dist\.npy of round 5"),
    (_delete("shards"), r"its shards \(a JSON NoneType\) are not those of ranks 0"),
    (_delete("shards", "0", "pred"), r"rank 0's shards \['dist'\] are not this run's arrays"),
    (lambda m: m["shards"].update({"1": m["shards"]["0"]}), r"are not those of ranks 0"),
    (_set("dtype", "int32"), "from another dtype"),
    (_set("n", 299), r"n: checkpoint has 299, this run has 300"),
    (_set("rounds", 11), r"rounds: checkpoint has 11, this run has 10"),
    (_set("version", 1), "another floydwarp checkpoint format"),
])
def test_a_manifest_that_does_not_belong_together_is_refused(stopped, tmp_path, edit, why):
    """Behind the signature, every field is checked against the run and the others (as if an edit
    had been signed again)."""
    folder = _edited(stopped, tmp_path, edit, sign=True)
    with pytest.raises(CheckpointError, match=why):
        fw.solve(stopped[1], resume=folder, **KW)


def test_a_shard_of_another_shape_with_its_own_checksum_is_refused(stopped, tmp_path):
    from floydwarp import checkpoint

    def swap(m):
        entry = m["shards"]["0"]["dist"]
        path = folder / entry["file"]
        np.save(path, np.zeros((3, 3), np.int64))
        entry.update(bytes=path.stat().st_size, crc32=checkpoint._crc32(path))

    folder = tmp_path / "edited"
    folder = _edited(stopped, tmp_path, swap, sign=True)
    with pytest.raises(CheckpointError, match=r"holds a int64 array of shape \(3, 3\) \(recorded: int64"):
        fw.solve(stopped[1], resume=folder, **KW)


@pytest.mark.parametrize("offset", [200, -1])
def test_a_corrupted_shard_byte_is_refused(stopped, tmp_path, offset):
    folder = _edited(stopped, tmp_path, lambda m: None)
    shard = folder / "shard-0.r4.pred.npy"
    data = bytearray(shard.read_bytes())
    data[offset] ^= 0x01
    shard.write_bytes(bytes(data))
    with pytest.raises(CheckpointError, match=r"shard shard-0\.r4\.pred\.npy is corrupt \(CRC32 mismatch\)"):
        fw.solve(stopped[1], resume=folder, **KW)


def test_cli_refuses_an_edited_manifest_with_exit_2(stopped, tmp_path):
    from floydwarp.cli.app import app
    from floydwarp.cli.solve import save_run_settings

    from cli_runner import cli_runner

    folder = _edited(stopped, tmp_path, _set("round", 10 ** 9))
    graph = tmp_path / "g.gr"
    fw.io.write_graph(stopped[1], graph)
    save_run_settings(folder, dict(input=graph, dtype="int64", backend="cpu", algorithm="auto", block_size=32,
                                   predecessors=True))
    result = cli_runner().invoke(app, ["solve", "--resume", str(folder)])
    assert result.exit_code == 2, (result.stdout, result.stderr, result.exception)
    assert result.stderr.startswith("error: checkpoint") and "changed after it was written" in result.stderr


# ---------------------------------------------------------------------- SIGTERM before the first round
_SIGNAL_AFTER_RUN_JSON = r"""
import os, signal, sys
import floydwarp.cli.solve as cli_solve
from floydwarp.cli import main

write = cli_solve.save_run_settings

def write_then_signal(folder, settings):
    write(folder, settings)
    os.kill(os.getpid(), getattr(signal, sys.argv[1]))     # between run.json and the first round

cli_solve.save_run_settings = write_then_signal
main(sys.argv[2:])
"""


@pytest.mark.parametrize("sig", ["SIGTERM", "SIGKILL"])
def test_a_signal_between_run_json_and_the_first_round(tmp_path, sig):
    """SIGTERM there exited -15, with no checkpoint and no message.  Now it stops after the first
    round, saved (exit 3), as a later SIGTERM does; a run killed there resumes from its beginning."""
    ckpt, out = tmp_path / "ck", tmp_path / "out.npz"
    args = ["solve", "-g", "1500", "-p", "10", "-s", "9", "-b", "64", "--checkpoint", str(ckpt), "-o", str(out)]
    proc = subprocess.run([sys.executable, "-c", _SIGNAL_AFTER_RUN_JSON, sig, *args], capture_output=True, text=True,
                          timeout=300)
    if sig == "SIGTERM":
        assert proc.returncode == 3, proc.stderr
        assert "stopped: stopped by a signal after round 1 of 24; checkpoint saved" in proc.stderr
        assert json.loads((ckpt / "manifest.json").read_text())["round"] == 1
    else:
        assert proc.returncode == -9 and not (ckpt / "manifest.json").exists()
    resumed = run_cli("--resume", str(ckpt))
    _, err = resumed.communicate(timeout=300)
    assert resumed.returncode == 0, err
    assert ("holds no saved round yet" in err) == (sig == "SIGKILL")
    whole = fw.solve(fw.generate.erdos_renyi(1500, 10, seed=9), backend="cpu", block_size=64)
    assert np.array_equal(fw.Result.load(out).dist, whole.dist)


@pytest.mark.parametrize("stop_call", [2, 10], ids=["in the integer run", "in its float64 rerun"])
def test_a_run_with_a_negative_cycle_resumes_bit_identical(tmp_path, stop_call):
    """An integer run that meets a negative cycle reruns in float64; a checkpointed one saves that
    rerun in a folder of its own (DIR/float64).  Before, the resumed run handed the rerun the
    integer checkpoint, which refused it after every round was done: the run could not finish."""
    import itertools

    rng = np.random.default_rng(0)
    n = 100
    g = fw.Graph.from_edges(rng.integers(0, n, 1500), rng.integers(0, n, 1500), rng.integers(-10, 30, 1500), n=n)
    kw = dict(backend="cpu", block_size=16, predecessors=False)
    whole = fw.solve(g, **kw)
    assert whole.has_negative_cycle and whole.dtype.name == "int16"
    calls = itertools.count(1)                  # 7 rounds of the integer run, then 7 of the rerun

    def report(done, total):
        if next(calls) == stop_call:
            os.kill(os.getpid(), signal.SIGTERM)

    with pytest.raises(CheckpointInterrupt):
        fw.solve(g, checkpoint=tmp_path, progress=report, **kw)
    from floydwarp.checkpoint import saved

    assert (tmp_path / "float64" / "manifest.json").exists() == (stop_call > 7)
    assert saved(tmp_path)                      # what `floydwarp solve --resume` asks before it resumes
    resumed = fw.solve(g, resume=tmp_path, **kw)
    assert resumed.has_negative_cycle and np.array_equal(resumed.dist, whole.dist)
