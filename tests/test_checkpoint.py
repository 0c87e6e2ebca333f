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


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM])
def test_cli_killed_run_resumes_bit_identical(tmp_path, sig):
    ckpt, out = tmp_path / "ckpt", tmp_path / "out.npz"
    args = ["-g", "2400", "-p", "15", "-s", "3", "-b", "48", "--predecessors", "--checkpoint", str(ckpt),
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
    whole = fw.solve(fw.generate.erdos_renyi(2400, 15, seed=3), backend="cpu", block_size=48, predecessors=True)
    assert np.array_equal(got.dist, whole.dist) and np.array_equal(got.pred, whole.pred)


def test_cli_resume_refuses_other_settings(tmp_path):
    proc = run_cli("--resume", str(tmp_path), "-g", "10")
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 2 and "--resume continues the run" in err
