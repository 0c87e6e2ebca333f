"""floydwarp's kernel cache (gpu/kcache.py): keys, where it lives, atomic entries; with a GPU,
a new process loads its kernels from it without NVRTC."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from floydwarp.gpu import kcache

ENV = (90, 13000, 13000, "14.0.0")


def test_key_changes_with_every_part():
    base = kcache.key("src", ("-std=c++17",), ("k<int>", "j<int>"), ENV)
    assert base == kcache.key("src", ("-std=c++17",), ("j<int>", "k<int>"), ENV)     # expressions as a set
    others = [kcache.key("src2", ("-std=c++17",), ("k<int>", "j<int>"), ENV),
              kcache.key("src", ("-std=c++14",), ("k<int>", "j<int>"), ENV),
              kcache.key("src", ("-std=c++17",), ("k<int>",), ENV),
              kcache.key("src", ("-std=c++17",), ("k<int>", "j<int>"), (80, *ENV[1:])),
              kcache.key("src", ("-std=c++17",), ("k<int>", "j<int>"), (*ENV[:3], "13.6.0"))]
    assert len({base, *others}) == 6


def test_folder_follows_the_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("FLOYDWARP_CACHE_DIR", str(tmp_path / "fw"))
    assert kcache.folder() == tmp_path / "fw" / "kernels"
    monkeypatch.delenv("FLOYDWARP_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert kcache.folder() == tmp_path / "xdg" / "floydwarp" / "kernels"
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert kcache.folder() == Path.home() / ".cache" / "floydwarp" / "kernels"


def test_an_entry_counts_once_its_names_are_written(tmp_path):
    binary, names = tmp_path / "k.cubin", tmp_path / "k.json"
    assert kcache._read(binary, names) is None
    kcache._write(binary, b"\x7fELF...")
    assert kcache._read(binary, names) is None                # no names yet: a miss
    names.write_text("{not json")
    assert kcache._read(binary, names) is None                # unreadable: a miss
    kcache._write(names, b'{"k<int>": "_Z1kIiEvv"}')
    assert kcache._read(binary, names) == {"k<int>": "_Z1kIiEvv"}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["k.cubin", "k.json"]   # no temporary left


def test_without_cupy_the_cache_steps_aside(monkeypatch):
    monkeypatch.setitem(sys.modules, "cupy", None)            # import cupy fails
    assert kcache.load("__global__ void k() {}", ("-std=c++17",), ("k",)) is None


CHILD = r"""
import sys
import numpy as np
import floydwarp as fw
if sys.argv[1] == "forbid":
    from cupy.cuda import compiler
    def refuse(*a, **k):
        raise AssertionError("NVRTC ran")
    compiler.compile_using_nvrtc = compiler._compile_using_nvrtc_no_warning = compiler._preprocess = refuse
r = fw.solve(fw.generate.erdos_renyi(500, 5, seed=1), backend="gpu", dtype="int32")
print(int(np.asarray(r.dist).sum()))
"""


@pytest.mark.gpu
def test_a_new_process_loads_its_kernels_without_nvrtc(tmp_path):
    from conftest import require_gpu

    require_gpu()
    env = {**os.environ, "FLOYDWARP_CACHE_DIR": str(tmp_path), "CUPY_CACHE_DIR": str(tmp_path / "cupy")}
    first = subprocess.run([sys.executable, "-c", CHILD, "fill"], env=env, capture_output=True, text=True, check=True)
    assert list((tmp_path / "kernels").glob("*.json"))
    second = subprocess.run([sys.executable, "-c", CHILD, "forbid"], env=env, capture_output=True, text=True)
    assert second.returncode == 0, second.stderr
    assert second.stdout == first.stdout
