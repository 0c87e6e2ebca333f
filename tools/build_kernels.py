"""Build the GPU kernels that floydwarp ships (``src/floydwarp/gpu/prebuilt/``), on a machine
with CuPy and a GPU::

    PYTHONPATH=src python3 tools/build_kernels.py

It runs the common GPU work in this process -- solves of every dtype, with and without
predecessors, unit weights (BFS), negative weights and cycles, host and device results, the
GPU generator, batches, and the multi-GPU engine where two GPUs are visible -- and notes every
kernel module they load (``modules.LOADED``).  Then NVRTC compiles each module for every
shipped architecture (``kcache.SHIPPED_ARCHS``; no GPU of that kind is needed) into
``prebuilt/<arch>/<key>.cubin`` and ``.json``, and ``prebuilt/manifest.json`` lists them.
Earlier builds are replaced.  A kernel source edited since makes ``tests/test_kernel_cache.py``
fail until this is run again.
"""
from __future__ import annotations

import json
import shutil
import sys
import time
import numpy as np


def run_common_work() -> None:
    """The GPU runs whose kernels are shipped."""
    import cupy

    import floydwarp as fw
    from floydwarp.generate import erdos_renyi

    for n in (600, 3000, 12000):
        graph = erdos_renyi(n, 5, seed=1, device=True)
        for dtype in ("int16", "int32", "int64", "float32", "float64"):
            for output in ("device", "host"):
                fw.solve(graph, backend="gpu", dtype=dtype, output=output)
            if n == 3000:
                fw.solve(graph, backend="gpu", dtype=dtype, predecessors=True)
    fw.solve(erdos_renyi(32768, 5, seed=3, device=True), backend="gpu", dtype="int32", output="device")
    fw.solve(erdos_renyi(3000, 5, seed=1, weights=(1, 1), device=True), backend="gpu")          # BFS
    negative = erdos_renyi(3000, 5, seed=1, weights=(1, 20), potential=10, device=True)
    for predecessors in (False, True):
        fw.solve(negative, backend="gpu", predecessors=predecessors)
        fw.solve(erdos_renyi(500, 30, seed=1, weights=(-5, 20), device=True), backend="gpu",
                 predecessors=predecessors)                                                     # a negative cycle
    rng = np.random.default_rng(0)
    molecules = [np.where(rng.random((k, k)) < 0.2, rng.integers(1, 5, (k, k)), np.inf)
                 for k in rng.integers(1, 40, 200)]
    for dtype in ("auto", "float32"):
        fw.solve_batch(molecules, backend="gpu", dtype=dtype)
    if cupy.cuda.runtime.getDeviceCount() >= 2:
        for dtype in ("int16", "int32"):
            fw.solve(erdos_renyi(6000, 5, seed=1), backend="multigpu", gpus=2, dtype=dtype)


def build() -> list:
    """Every module the runs loaded, compiled for every shipped architecture; the manifest's entries."""
    from floydwarp.gpu import kcache, modules

    shipped = sorted({(f, names) for f, names, cooperative in modules.LOADED if not cooperative})
    shutil.rmtree(kcache.PREBUILT, ignore_errors=True)
    entries = []
    for arch in kcache.SHIPPED_ARCHS:
        for filename, names in shipped:
            t0 = time.perf_counter()
            binary = kcache.ship(modules.source(filename), modules.OPTIONS, names, arch)
            entries.append({"arch": arch, "file": filename, "names": list(names), "key": binary.stem,
                            "bytes": binary.stat().st_size})
            print(f"{arch} {filename} ({len(names)} kernels): {binary.stat().st_size:,} bytes, "
                  f"{time.perf_counter() - t0:.2f} s", flush=True)
    manifest = {"options": list(modules.OPTIONS), "modules": entries}
    (kcache.PREBUILT / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")
    return entries


def main() -> int:
    from floydwarp.gpu import kcache

    run_common_work()
    entries = build()
    print(f"{len(entries)} modules, {sum(e['bytes'] for e in entries):,} bytes in {kcache.PREBUILT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
