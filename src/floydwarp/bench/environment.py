"""What a measurement ran on: versions, CPU, GPUs, backends (shared by `bench` and `info`)."""
from __future__ import annotations

import os
import platform
from datetime import datetime, timezone
from importlib import metadata


def package_version(name: str) -> str | None:
    """Installed version of a distribution, without importing it (None when absent)."""
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown"


def usable_cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:                                  # not on Linux
        return os.cpu_count() or 1


def numba_threads() -> int | None:
    try:
        import numba
    except ImportError:
        return None
    return int(numba.config.NUMBA_NUM_THREADS)


def gpus() -> dict:
    """``{"cupy": version or None, "devices": [...], "note": why there are none}``."""
    try:
        import cupy
    except ImportError:
        return {"cupy": None, "devices": [], "note": "no GPU: install floydwarp[gpu]"}
    try:
        runtime = cupy.cuda.runtime
        devices = []
        for i in range(runtime.getDeviceCount()):
            p = runtime.getDeviceProperties(i)
            name = p["name"].decode() if isinstance(p["name"], bytes) else str(p["name"])
            devices.append({"index": i, "name": name, "memory_bytes": int(p["totalGlobalMem"]),
                            "compute_capability": f"{p['major']}.{p['minor']}"})
    except Exception as exc:                                # no driver, no device, ...
        return {"cupy": cupy.__version__, "devices": [], "note": f"no GPU found ({type(exc).__name__}: {exc})"}
    return {"cupy": cupy.__version__, "devices": devices, "note": "" if devices else "no GPU found"}


def backend_status() -> list[dict]:
    """Every backend in the registry: usable or why not, and its algorithms.

    A backend module that cannot even be imported is reported, not raised.
    """
    from .. import registry

    rows = []
    for name in registry.BACKEND_MODULES:
        backend = registry.backend(name)
        reason = backend.probe()
        impls = registry.algorithms(name)
        rows.append({
            "name": name, "description": backend.description, "available": reason is None, "reason": reason,
            "auto_priority": backend.auto_priority,
            "auto_min_n": backend.auto_min_n() if reason is None and backend.auto_priority else None,
            "algorithms": [{"name": i.algorithm, "default": i.default, "dtypes": list(i.dtypes),
                            "predecessors": i.predecessors, "max_n": i.max_n, "description": i.description}
                           for i in impls],
        })
    return rows


def environment(*, command: str | None = None, seed: int | None = None) -> dict:
    """The record of where and how a benchmark ran."""
    from .. import __version__

    gpu = gpus()
    return {
        "timestamp": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "command": command,
        "seed": seed,
        "floydwarp": __version__,
        "python": platform.python_version(),
        "numpy": package_version("numpy"),
        "scipy": package_version("scipy"),
        "numba": package_version("numba"),
        "platform": platform.platform(),
        "cpu": cpu_model(),
        "cpu_count": os.cpu_count(),
        "cpus_usable": usable_cores(),
        "numba_threads": numba_threads(),
        "cupy": gpu["cupy"],
        "gpus": gpu["devices"],
        "gpu_note": gpu["note"],
    }
