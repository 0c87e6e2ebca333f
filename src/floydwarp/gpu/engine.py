"""The ``gpu`` backend: CUDA C++ kernels compiled at run time (NVRTC) and launched through CuPy.

Importing this module registers the backend and, through their modules, its algorithms:
the seed kernels (seed.py), ``fast`` (fast.py), ``out-of-core`` (ooc.py) and ``bfs`` (bfs.py:
all-pairs breadth-first search, taken by ``algorithm="auto"`` when every edge weighs 1).  It never
imports CuPy; ``device.probe`` says why the backend cannot run here.
"""
from __future__ import annotations

from ..registry import register_backend
from . import bfs, device, fast, ooc, seed  # noqa: F401 -- each registers its algorithms

#: ``backend="auto"`` takes the GPU from this many vertices on.  Seed 000 measured the
#: CPU winning below ~70 vertices.  On the H100 machine (16 CPU cores), a whole solve of
#: a host graph (copies included; bench/NOTES.md) took cpu 0.76 ms / gpu 1.12 ms at
#: n = 256 and cpu 2.62 ms / gpu 1.96 ms at n = 512: the crossover is near 400.
AUTO_MIN_N = 384

register_backend("gpu", "CUDA kernels compiled at run time (NVRTC) and launched through CuPy",
                 probe=device.probe, auto_min_n=lambda: AUTO_MIN_N, options=device.OPTIONS)
