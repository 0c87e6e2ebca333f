"""Compile at install (tools/build_backend.py, floydwarp.cpu.precompile): an editable install asks
for what the compile needs and fills Numba's cache with the main job's kernels."""
from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _backend():
    pytest.importorskip("setuptools")
    spec = importlib.util.spec_from_file_location("build_backend", ROOT / "tools" / "build_backend.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_an_editable_build_asks_for_numba_unless_told_not_to(monkeypatch):
    backend = _backend()
    monkeypatch.delenv("FLOYDWARP_NO_PRECOMPILE", raising=False)
    assert any(r.startswith("numba") for r in backend.get_requires_for_build_editable())
    monkeypatch.setenv("FLOYDWARP_NO_PRECOMPILE", "1")
    assert not any(r.startswith("numba") for r in backend.get_requires_for_build_editable())
    assert backend.build_wheel and backend.build_sdist          # setuptools' other hooks, unchanged


@pytest.mark.slow
def test_precompile_fills_the_cache_the_main_job_loads(tmp_path):
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path), "PYTHONPATH": str(ROOT / "src")}
    subprocess.run([sys.executable, "-m", "floydwarp.cpu.precompile"], env=env, check=True)
    assert len(list(tmp_path.rglob("*.nbi"))) >= 4
    out = subprocess.run([sys.executable, "-m", "floydwarp", "solve", "--generate", "2048", "-p", "25", "-s", "1"],
                         env=env, check=True, capture_output=True, text=True).stdout
    stages = dict(part.rsplit(" ", 2)[0:1] + [part.rsplit(" ", 2)[1:]] for part in
                  out.split("stages:")[1].splitlines()[0].strip().split(", "))
    value, unit = stages["compile"]
    assert unit in ("ms", "us")                                   # loaded, not compiled (seconds)
