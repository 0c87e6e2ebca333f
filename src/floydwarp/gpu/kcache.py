"""floydwarp's kernel cache: compiled modules on disk, loaded by a new process without NVRTC.

CuPy caches what NVRTC compiles (``~/.cupy/kernel_cache``), but its key holds the output of
NVRTC for an empty program, which every process compiles once before its first lookup: NVRTC
starts (its library and built-in headers) in every process, hit or miss.  Here the key is
what determines the binary without asking NVRTC: the source text (headers inlined), the
options, the name expressions, the device's compute capability, the CUDA runtime and driver
versions and CuPy's version.  A hit is two small reads and ``cuModuleLoad``.

Shipped kernels come first: ``gpu/prebuilt/sm_<arch>/`` holds the modules of the common runs
(tools/build_kernels.py: every dtype, with and without predecessors, the generator, the
multi-GPU engines) compiled for sm_80 (which runs on every 8.x GPU) and sm_90, so that the
first run on an A100, an L40 or an H100 compiles nothing (NVRTC took 2.1 s of the main job's
first run on an H200; a shipped module loads in milliseconds).  Their key leaves out the
CUDA and CuPy versions: a driver that refuses a shipped cubin (one older than the NVRTC that
built it may) makes it a miss, and the module is compiled as below.  ``prebuilt/manifest.json``
lists them; a CPU test fails when a kernel's source has changed since they were built.

Layout: ``<dir>/<key>.cubin`` (what NVRTC produced: a cubin, or PTX where NVRTC cannot target
the device) and ``<dir>/<key>.json`` (the lowered name of each name expression), each written
to a temporary file and renamed into place, the ``.json`` last: a module is in the cache once
its ``.json`` is.  ``<dir>`` is ``$FLOYDWARP_CACHE_DIR/kernels``, else
``$XDG_CACHE_HOME/floydwarp/kernels`` or ``~/.cache/floydwarp/kernels``.  A cache that cannot
be written, or an entry that cannot be read or loaded, is passed over: the module is then
compiled as before (CuPy's ``RawModule`` and its own cache).
"""
from __future__ import annotations

import contextlib
import hashlib
import json
import os
from pathlib import Path

#: bumped when the layout or the key's parts change
FORMAT = 1
#: CuPy's RawModule compiles with this option too; kept so the binaries are the ones it made
_CUPY_OPTIONS = ("-ftz=true",)


def folder() -> Path:
    """Where the compiled modules live."""
    base = os.environ.get("FLOYDWARP_CACHE_DIR")
    if base:
        return Path(base) / "kernels"
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "floydwarp" / "kernels"


#: the shipped modules, by target architecture (``sm_80``, ``sm_90``)
PREBUILT = Path(__file__).resolve().parent / "prebuilt"
#: the architectures shipped: SASS for sm_80 runs on every compute capability 8.x
SHIPPED_ARCHS = ("sm_80", "sm_90")


def shipped_arch(cc: int) -> str | None:
    """The shipped architecture whose cubins run on compute capability ``cc`` (``sm_80`` for 86),
    or None."""
    major, minor = divmod(int(cc), 10)
    arch = "sm_80" if major == 8 else f"sm_{major}{minor}"
    return arch if arch in SHIPPED_ARCHS else None


def key(source: str, options, name_expressions, environment) -> str:
    """The cache key: a SHA-256 of everything that determines the compiled module."""
    parts = [str(FORMAT), source, "\0".join(options), "\0".join(sorted(name_expressions)),
             "\0".join(str(e) for e in environment)]
    return hashlib.sha256("\x1f".join(parts).encode()).hexdigest()


def environment() -> tuple:
    """What the binary depends on besides the source: compute capability, CUDA runtime and
    driver versions, CuPy's version."""
    import cupy

    from . import device

    rt = cupy.cuda.runtime
    return device.current()["cc"], rt.runtimeGetVersion(), rt.driverGetVersion(), cupy.__version__


class Module:
    """A module loaded from the cache: ``get_function(name_expression)`` as ``cupy.RawModule``'s."""

    def __init__(self, path: Path, mapping: dict):
        import cupy

        self.raw = cupy.RawModule(path=str(path))
        self.raw.compile()                       # loads it now: a file the driver refuses is a miss
        self.mapping = mapping

    def get_function(self, name_expression: str):
        return self.raw.get_function(self.mapping.get(name_expression, name_expression))


def load(source: str, options, name_expressions) -> Module | None:
    """The module from the cache, compiled into it first on a miss; None when the cache cannot
    be used here (the caller compiles as it would without one)."""
    found = _shipped(source, options, name_expressions)
    if found is not None:
        return found
    try:
        name = key(source, (*options, *_CUPY_OPTIONS), name_expressions, environment())
        binary, names = folder() / f"{name}.cubin", folder() / f"{name}.json"
        mapping = _read(binary, names)
        if mapping is None:
            mapping = _compile(source, options, name_expressions, binary, names)
        return Module(binary, mapping)
    except Exception:                            # noqa: BLE001 - see the module docstring
        return None


def shipped_key(source: str, options, name_expressions, arch: str) -> str:
    """The key of a shipped module: the source, options and names, and the architecture."""
    return key(source, (*options, *_CUPY_OPTIONS), name_expressions, (arch,))


def _shipped(source: str, options, name_expressions) -> Module | None:
    """The shipped module for this device, or None (none built, or the driver refuses it)."""
    try:
        from . import device

        arch = shipped_arch(device.current()["cc"])
        if arch is None:
            return None
        name = shipped_key(source, options, name_expressions, arch)
        binary, names = PREBUILT / arch / f"{name}.cubin", PREBUILT / arch / f"{name}.json"
        mapping = _read(binary, names)
        return None if mapping is None else Module(binary, mapping)
    except Exception:                            # noqa: BLE001 - a miss: compiled as before
        return None


def _read(binary: Path, names: Path) -> dict | None:
    """The entry's lowered names, or None when it is missing or unreadable."""
    try:
        mapping = json.loads(names.read_text())
    except (OSError, ValueError):
        return None
    return mapping if isinstance(mapping, dict) and binary.is_file() else None


def _compile(source, options, name_expressions, binary: Path, names: Path, arch: str | None = None) -> dict:
    """NVRTC's module (for the current device, or for ``arch`` such as ``"90"``) written to
    ``binary`` and its lowered names to ``names``; the names."""
    from cupy.cuda import compiler

    compiled, mapping = compiler.compile_using_nvrtc(source, options=(*options, *_CUPY_OPTIONS), arch=arch,
                                                     name_expressions=list(name_expressions))
    binary.parent.mkdir(parents=True, exist_ok=True)
    _write(binary, compiled if isinstance(compiled, bytes) else compiled.encode())
    _write(names, json.dumps(dict(mapping or {})).encode())
    return dict(mapping or {})


def ship(source: str, options, name_expressions, arch: str) -> Path:
    """Compile a module for a shipped architecture (``"sm_90"``) into :data:`PREBUILT`
    (tools/build_kernels.py); its cubin's path."""
    binary = PREBUILT / arch / f"{shipped_key(source, options, name_expressions, arch)}.cubin"
    _compile(source, options, name_expressions, binary, binary.with_suffix(".json"), arch=arch.removeprefix("sm_"))
    return binary


def _write(path: Path, data: bytes) -> None:
    """Write ``data`` to a temporary file beside ``path`` and rename it into place."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        tmp.write_bytes(data)
        os.replace(tmp, path)
    finally:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()
