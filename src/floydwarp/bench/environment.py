"""What a measurement ran on: versions, CPU, GPUs, backends (shared by `bench` and `info`)."""
from __future__ import annotations

import os
import platform
import shutil
import subprocess
import sys
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path

from ..team import usable_cores


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
    except Exception as exc:  # noqa: BLE001 -- no driver, no device, ...: reported, not raised
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
            "options": dict(backend.options),
            "algorithms": [{"name": i.algorithm, "default": i.default, "dtypes": list(i.dtypes),
                            "predecessors": i.predecessors, "max_n": i.max_n, "description": i.description,
                            "options": dict(i.options)}
                           for i in impls],
        })
    return rows


def cpu_mhz() -> dict | None:
    """Current core clocks from /proc/cpuinfo: ``{"min", "max", "mean"}`` in MHz (None when unknown)."""
    values = []
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("cpu MHz"):
                    values.append(float(line.split(":", 1)[1]))
    except (OSError, ValueError):
        return None
    if not values:
        return None
    return {"min": min(values), "max": max(values), "mean": sum(values) / len(values)}


def gpu_clocks() -> list[dict]:
    """SM clocks per GPU from ``nvidia-smi`` (current and maximum, MHz); [] without nvidia-smi."""
    exe = shutil.which("nvidia-smi")
    if exe is None:
        return []
    fields = "index,name,clocks.sm,clocks.max.sm,clocks.mem,clocks.max.mem,power.limit,temperature.gpu"
    try:
        out = subprocess.run([exe, f"--query-gpu={fields}", "--format=csv,noheader,nounits"],
                             capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.SubprocessError):
        return []
    if out.returncode != 0:
        return []
    rows = []
    keys = fields.replace(".", "_").split(",")
    for line in out.stdout.strip().splitlines():
        cells = [c.strip() for c in line.split(",")]
        if len(cells) != len(keys):
            continue
        row = {}
        for k, v in zip(keys, cells):
            try:
                row[k] = int(v) if k != "name" and v.isdigit() else (float(v) if k != "name" else v)
            except ValueError:
                row[k] = v                      # "[N/A]" and the like
        rows.append(row)
    return rows


def memory() -> dict:
    """Host memory from /proc/meminfo: ``{"total_bytes", "available_bytes"}`` (None when unknown)."""
    info = {"total_bytes": None, "available_bytes": None}
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                key, _, rest = line.partition(":")
                if key in ("MemTotal", "MemAvailable"):
                    value = int(rest.split()[0]) * 1024
                    info["total_bytes" if key == "MemTotal" else "available_bytes"] = value
    except (OSError, ValueError, IndexError):
        pass
    return info


def gpu_memory() -> list[dict]:
    """Free and total device memory per GPU (CuPy), [] without one."""
    try:
        import cupy
        rows = []
        for i in range(cupy.cuda.runtime.getDeviceCount()):
            with cupy.cuda.Device(i):
                free, total = cupy.cuda.runtime.memGetInfo()
            rows.append({"index": i, "free_bytes": int(free), "total_bytes": int(total)})
        return rows
    except Exception:  # noqa: BLE001 -- no CuPy, no driver, no device: nothing to list
        return []


def source_revision() -> str | None:
    """The git commit of the floydwarp source tree ("+dirty" when modified), None outside git."""
    root = Path(__file__).resolve().parents[3]
    if not (root / ".git").exists() or shutil.which("git") is None:
        return None
    try:
        rev = subprocess.run(["git", "-C", str(root), "rev-parse", "--short=12", "HEAD"],
                             capture_output=True, text=True, timeout=10)
        if rev.returncode != 0:
            return None
        dirty = subprocess.run(["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, timeout=10)
        return rev.stdout.strip() + ("+dirty" if dirty.stdout.strip() else "")
    except (OSError, subprocess.SubprocessError):
        return None


def environment(*, command: str | None = None, seed: int | None = None, detailed: bool = False) -> dict:
    """The record of where and how a benchmark ran.

    ``detailed`` adds what a saved study needs to be reproduced and read later: the
    exact argv, clocks (``nvidia-smi``, /proc/cpuinfo), memory, more package versions
    and the source revision.
    """
    from .. import __version__

    gpu = gpus()
    env = {
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
    if detailed:
        env.update(
            argv=list(sys.argv),
            hostname=platform.node(),
            source_revision=source_revision(),
            mpi4py=package_version("mpi4py"),
            matplotlib=package_version("matplotlib"),
            cpu_mhz=cpu_mhz(),
            gpu_clocks=gpu_clocks(),
            memory=memory(),
            gpu_memory=gpu_memory(),
        )
    return env
