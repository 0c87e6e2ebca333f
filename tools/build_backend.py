"""setuptools' build backend, plus, for an editable install (``pip install -e .``), the common CPU
runs' Numba kernels compiled into their on-disk cache beside the sources (floydwarp.cpu.precompile):
the first run after install then loads them instead of compiling them.

Numba keys that cache by its own version, the source file's time stamp and size, and the CPU: so
the kernels are compiled here, in the build environment's Numba (the same release the install's
resolution picks), for the files the editable install runs.  Compiling is best effort: if it
fails or is switched off (``FLOYDWARP_NO_PRECOMPILE=1``), the install goes on and the first run
compiles, as before.
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from setuptools import build_meta as _setuptools
from setuptools.build_meta import *  # noqa: F401,F403 -- every hook setuptools provides

#: what the compile needs in the build environment (pyproject.toml's floors)
_COMPILE_REQUIRES = ["numpy>=1.24", "numba>=0.59", "click>=8.1", "tqdm>=4.60", "scipy>=1.10"]


def _wanted() -> bool:
    return os.environ.get("FLOYDWARP_NO_PRECOMPILE", "") in ("", "0")


def get_requires_for_build_editable(config_settings=None):
    extra = _COMPILE_REQUIRES if _wanted() else []
    return [*_setuptools.get_requires_for_build_editable(config_settings), *extra]


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    name = _setuptools.build_editable(wheel_directory, config_settings, metadata_directory)
    if _wanted():
        _precompile()
    return name


def _precompile() -> None:
    src = Path(__file__).resolve().parent.parent / "src"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(src), *filter(None, [os.environ.get("PYTHONPATH")])])}
    try:
        subprocess.run([sys.executable, "-m", "floydwarp.cpu.precompile"], env=env, cwd=src, timeout=900,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    except (OSError, subprocess.SubprocessError):
        pass
