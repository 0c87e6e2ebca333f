"""``python -m floydwarp.cpu.precompile``: compile the Numba kernels of the common CPU runs into
Numba's on-disk cache, so that a first run loads them instead of compiling them.

An editable install runs it (tools/build_backend.py): the cache lands beside the sources the
install points at, and the first ``floydwarp solve --generate ...`` after ``pip install -e .``
compiles nothing (on the 2-core box it compiled 4 kernels, 3-4 s, before).  Covered: the
blocked runs of a generated graph (int64 edges) in int16 and int32 -- the auto dtype of weights
1..16 below and above n ~ 1000 -- without predecessors, as the main job runs them.  Anything
else still compiles on its first use, as before.
"""
from __future__ import annotations

#: (n, dtype) of the solves run: a blocked run of several tiles for each dtype
RUNS = ((300, "int16"), (300, "int32"))


def main() -> None:
    import floydwarp as fw

    for n, dtype in RUNS:
        fw.solve(fw.generate.erdos_renyi(n, 25, seed=1), dtype=dtype, backend="cpu")


if __name__ == "__main__":
    main()
