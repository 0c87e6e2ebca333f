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
from floydwarp.gpu import kcache
if sys.argv[2] == "unshipped":
    kcache.PREBUILT = kcache.PREBUILT / "none"               # this test is about the user's cache
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
    first = subprocess.run([sys.executable, "-c", CHILD, "fill", "unshipped"], env=env, capture_output=True, text=True,
                           check=True)
    assert list((tmp_path / "kernels").glob("*.json"))
    second = subprocess.run([sys.executable, "-c", CHILD, "forbid", "unshipped"], env=env, capture_output=True,
                            text=True)
    assert second.returncode == 0, second.stderr
    assert second.stdout == first.stdout


@pytest.mark.gpu
def test_the_first_run_on_a_shipped_architecture_compiles_nothing(tmp_path):
    """Empty caches, NVRTC refused: the shipped cubins alone run the solve, and nothing is
    written to the user's cache."""
    from conftest import require_gpu

    require_gpu()
    from floydwarp.gpu import device

    if kcache.shipped_arch(device.current()["cc"]) is None:
        pytest.skip(f"no kernels are shipped for compute capability {device.current()['cc']}")
    env = {**os.environ, "FLOYDWARP_CACHE_DIR": str(tmp_path), "CUPY_CACHE_DIR": str(tmp_path / "cupy")}
    shipped = subprocess.run([sys.executable, "-c", CHILD, "forbid", "shipped"], env=env, capture_output=True,
                             text=True)
    assert shipped.returncode == 0, shipped.stderr
    assert not list(tmp_path.rglob("*.cubin"))
    compiled = subprocess.run([sys.executable, "-c", CHILD, "fill", "unshipped"], env=env, capture_output=True,
                              text=True, check=True)
    assert shipped.stdout == compiled.stdout


def test_shipped_architectures():
    assert [kcache.shipped_arch(cc) for cc in (80, 86, 87, 89, 90)] == ["sm_80"] * 4 + ["sm_90"]
    assert [kcache.shipped_arch(cc) for cc in (70, 75, 100, 120)] == [None] * 4


def test_the_shipped_kernels_are_built_from_todays_sources():
    """Each shipped module's key is recomputed from the kernel sources as they are now: a
    kernel edited since tools/build_kernels.py ran fails here (run it on a GPU machine)."""
    import json

    from floydwarp.gpu import modules

    manifest = json.loads((kcache.PREBUILT / "manifest.json").read_text())
    assert manifest["options"] == list(modules.OPTIONS)
    listed = set()
    for entry in manifest["modules"]:
        key = kcache.shipped_key(modules.source(entry["file"]), modules.OPTIONS, tuple(entry["names"]), entry["arch"])
        assert key == entry["key"], f"{entry['file']} changed since its build: run tools/build_kernels.py"
        for suffix in (".cubin", ".json"):
            path = kcache.PREBUILT / entry["arch"] / f"{key}{suffix}"
            assert path.is_file(), path
            listed.add(path)
    assert {entry["arch"] for entry in manifest["modules"]} == set(kcache.SHIPPED_ARCHS)
    present = {p for arch in kcache.SHIPPED_ARCHS for p in (kcache.PREBUILT / arch).iterdir()}
    assert present == listed                                   # nothing shipped that the manifest does not name


def test_a_shipped_module_the_driver_refuses_is_a_miss(monkeypatch):
    """A driver older than the NVRTC that built the shipped cubins refuses them: the module is
    then compiled as if none were shipped (here, without CuPy, the cache steps aside)."""
    import json

    from floydwarp.gpu import device, modules

    entry = json.loads((kcache.PREBUILT / "manifest.json").read_text())["modules"][0]
    monkeypatch.setattr(device, "current", lambda: {"cc": int(entry["arch"].removeprefix("sm_"))})
    tried = []

    def refused(path, mapping):
        tried.append(path)
        raise RuntimeError("CUDA_ERROR_UNSUPPORTED_PTX_VERSION")

    monkeypatch.setattr(kcache, "Module", refused)
    monkeypatch.setitem(sys.modules, "cupy", None)
    assert kcache.load(modules.source(entry["file"]), modules.OPTIONS, tuple(entry["names"])) is None
    assert tried == [kcache.PREBUILT / entry["arch"] / f"{entry['key']}.cubin"]
