"""One small registry: backend and algorithm names -> implementations.

Backends register themselves when their module is imported; the registry
imports a backend's module only when that backend is first asked for, so
``import floydwarp`` never imports Numba, CuPy or mpi4py::

    @register("cpu", "blocked", default=True, description="3-phase blocked FW",
              options={"workdir": "DIR: keep the tiles in memory-mapped files there"})
    def blocked(graph, plan) -> EngineOutput: ...

Every option an engine reads from ``plan.options`` is declared where it registers: the
backend's (read by all its algorithms) with ``register_backend``, an algorithm's own with
``register``.  A solve with any other option (besides :data:`floydwarp.options.GENERAL`)
is refused (:func:`lookup`).
"""
from __future__ import annotations

import functools
import importlib
import importlib.util
from dataclasses import dataclass, field
from typing import Callable

from .errors import BackendUnavailableError, FloydwarpError
from .numeric import DTYPES
from .options import GENERAL, unexpected

#: Modules that define each backend.  Adding a backend is one line here.
BACKEND_MODULES = {
    "reference": "floydwarp.cpu.reference",
    "cpu": "floydwarp.cpu.engine",
    "gpu": "floydwarp.gpu.engine",
    "mpi": "floydwarp.mpi.engine",
    "multigpu": "floydwarp.multigpu.engine",
}
#: The backends ``backend="auto"`` considers, best first: it takes the first usable one whose
#: ``auto_min_n`` is at most n, importing the modules only as far as that one (the others are
#: never imported for it).
AUTO_ORDER = ("gpu", "cpu")
#: The package a backend cannot run without: ``backend="auto"`` passes over a backend whose
#: package is not installed without importing its module (the gpu module took 30 ms of the
#: README's main job to import, only for its probe to find no CuPy).
AUTO_REQUIRES = {"gpu": "cupy"}


@dataclass(frozen=True)
class Backend:
    name: str
    description: str
    #: returns None when usable here, else the reason it is not
    probe: Callable[[], str | None]
    #: rank in AUTO_ORDER (highest first); 0 means "never chosen by auto"
    auto_priority: int = 0
    auto_min_n: Callable[[], int] = lambda: 0
    #: the solve options every algorithm of the backend reads: name -> what it does
    options: dict = field(default_factory=dict)


@dataclass(frozen=True)
class Implementation:
    backend: str
    algorithm: str
    run: Callable
    dtypes: tuple = DTYPES
    predecessors: bool = True
    default: bool = False
    description: str = ""
    #: largest n the algorithm accepts (None: no limit), with the reason
    max_n: int | None = None
    #: relaxes in the textbook order (k outermost): its predecessors never loop,
    #: even around zero-weight cycles, which blocked orders can close
    k_order: bool = False
    #: the solve options the algorithm reads besides its backend's and the general ones:
    #: name -> what it does
    options: dict = field(default_factory=dict)
    #: ``accepts(graph, options)``: None when the algorithm can solve the graph with these solve
    #: options, else why not (None: every graph and option).  An algorithm asked for by name
    #: refuses such a call with that reason.
    accepts: Callable | None = None
    #: ``algorithm="auto"`` takes it, before the default, for every graph it accepts (with the
    #: dtype and predecessors asked for): an algorithm that only some graphs suit but that beats
    #: the default wherever it does (all-pairs breadth-first search on unit weights)
    preferred: bool = False
    #: ``bytes_moved(n, itemsize, block_size)``: the memory traffic of a run, for the
    #: benchmarks' GB/s (None: no model)
    bytes_moved: Callable | None = None


_BACKENDS: dict[str, Backend] = {}
_IMPLS: dict[tuple[str, str], Implementation] = {}


def register_backend(name, description, probe=lambda: None, auto_min_n=lambda: 0, options=None):
    """Register a backend; ``options``: the solve options all its algorithms read (name -> what it does)."""
    priority = len(AUTO_ORDER) - AUTO_ORDER.index(name) if name in AUTO_ORDER else 0
    _BACKENDS[name] = Backend(name, description, probe, priority, auto_min_n, dict(options or {}))


def register(backend, algorithm, *, dtypes=DTYPES, predecessors=True, default=False, description="", max_n=None,
             k_order=False, accepts=None, preferred=False, options=None, bytes_moved=None):
    """Decorator: make ``func(graph, plan) -> EngineOutput`` the (backend, algorithm) implementation;
    ``options``: the solve options it reads besides its backend's (name -> what it does)."""
    def deco(func):
        _IMPLS[(backend, algorithm)] = Implementation(
            backend, algorithm, func, tuple(dtypes), predecessors, default,
            description or (func.__doc__ or "").strip().split("\n")[0], max_n, k_order, dict(options or {}),
            accepts, preferred, bytes_moved)
        return func
    return deco


def backend(name) -> Backend:
    """The backend called ``name``, importing its module on first use.

    A module that cannot be imported (a missing optional package) gives a
    backend whose probe says why, so listing backends never fails.
    """
    if not isinstance(name, str) or name not in BACKEND_MODULES:      # a list would raise "unhashable"
        raise FloydwarpError(f"unknown backend {name!r}; choose one of {', '.join(['auto', *BACKEND_MODULES])}")
    if name not in _BACKENDS:
        try:
            importlib.import_module(BACKEND_MODULES[name])
        except ImportError as exc:
            reason = f"cannot import {BACKEND_MODULES[name]} ({exc})"
            register_backend(name, "", probe=lambda: reason)
    return _BACKENDS[name]


def backends() -> list[Backend]:
    """Every known backend (importing each backend's module)."""
    return [backend(name) for name in BACKEND_MODULES]


def algorithms(name) -> list[Implementation]:
    backend(name)
    return [impl for (b, _), impl in _IMPLS.items() if b == name]


def unavailable_reason(name) -> str | None:
    return backend(name).probe()


def resolve_backend(name, n) -> str:
    """The backend name to use for ``name`` (possibly "auto") and a graph of n vertices."""
    if name != "auto":
        reason = unavailable_reason(name)
        if reason:
            raise BackendUnavailableError(f"backend {name!r} is not available: {reason}")
        return name
    for candidate in AUTO_ORDER:
        if candidate not in _BACKENDS and not _installed(AUTO_REQUIRES.get(candidate)):
            continue
        b = backend(candidate)
        if b.probe() is None and n >= b.auto_min_n():
            return candidate
    raise BackendUnavailableError("no backend is available for backend='auto'; see 'floydwarp info'")


def lookup(name, algorithm, *, dtype, predecessors, n, graph=None, options=None, parameters=()) -> Implementation:
    """The implementation for a resolved backend, refusing combinations it cannot run.

    ``algorithm="auto"``: the first ``preferred`` algorithm that can run this call (dtype,
    predecessors, n, every option given and, when given, the graph), else the backend's
    default.  An option the implementation does not take is an OptionError (``parameters``:
    the caller's own keywords, named by its message)."""
    impls = algorithms(name)
    options = options or {}
    if algorithm == "auto":
        impl = None
        for i in impls:               # one plain loop: generators cost a small solve a microsecond
            if i.preferred and (not options or takes(i, options)) and \
                    _refusal(i, dtype, predecessors, n, graph, options) is None:
                return i
            if i.default:
                impl = i
    else:
        impl = _IMPLS.get((name, algorithm))
        if impl is None:
            names = ", ".join(i.algorithm for i in impls)
            raise FloydwarpError(f"backend {name!r} has no algorithm {algorithm!r}; it has: {names}")
    if options and not takes(impl, options):
        raise _option_error(impl, options, parameters)
    reason = _refusal(impl, dtype, predecessors, n, graph, options)
    if reason:
        raise FloydwarpError(reason)
    return impl


def takes(impl, options) -> bool:
    """Whether ``impl`` takes every one of the solve ``options`` (its own, its backend's or general)."""
    own, shared = impl.options, _BACKENDS[impl.backend].options
    for key in options:
        if key not in own and key not in shared and key not in GENERAL:
            return False
    return True


def options_of(impl) -> dict:
    """Every solve option ``impl`` takes: name -> what it does."""
    return {**GENERAL, **_BACKENDS[impl.backend].options, **impl.options}


def _option_error(impl, options, parameters):
    accepted = options_of(impl)
    name = next(key for key in options if key not in accepted)
    # where it would apply, among the backends imported so far (importing the others to
    # say so could start MPI)
    elsewhere = {b.name for b in _BACKENDS.values() if name in b.options}
    elsewhere |= {_label(i) for i in _IMPLS.values() if name in i.options and i.backend not in elsewhere}
    return unexpected("solve", name, accepted, by=_label(impl), parameters=parameters, elsewhere=elsewhere)


def _refusal(impl, dtype, predecessors, n, graph, options) -> str | None:
    """Why ``impl`` cannot run this call, or None."""
    if _name(dtype) not in impl.dtypes:
        return f"{_label(impl)} does not support dtype {_name(dtype)}; it supports {', '.join(impl.dtypes)}"
    if predecessors and not impl.predecessors:
        with_pred = ", ".join(i.algorithm for i in algorithms(impl.backend) if i.predecessors)
        if with_pred:
            return f"{_label(impl)} cannot compute predecessors; these can: {with_pred}"
        return (f"{_label(impl)} cannot compute predecessors, nor can any {impl.backend} algorithm; "
                "`floydwarp info` marks the algorithms of other backends that can ('predecessors')")
    if impl.max_n is not None and n > impl.max_n:
        return f"{_label(impl)} is limited to n <= {impl.max_n} (got n = {n})"
    if graph is not None and impl.accepts is not None:
        reason = impl.accepts(graph, options)
        if reason:
            return f"{_label(impl)} cannot run this call: {reason}"
    return None


def _label(impl) -> str:
    return f"{impl.backend}/{impl.algorithm}"


@functools.lru_cache(maxsize=None)
def _installed(package) -> bool:
    """True when ``package`` (None: no package needed) can be imported, judged without importing it."""
    return package is None or importlib.util.find_spec(package) is not None


@functools.lru_cache(maxsize=64)
def _name(dtype) -> str:
    return dtype.name        # a Python-level property in NumPy: microseconds a call


def k_order_algorithm(name, n) -> Implementation:
    """The backend's textbook-order algorithm with predecessors for n vertices (the fallback
    when a blocked order leaves looping predecessors)."""
    found = [i for i in algorithms(name) if i.k_order and i.predecessors and (i.max_n is None or n <= i.max_n)]
    if not found:
        raise FloydwarpError(f"backend {name!r} has no k-order algorithm with predecessors for n = {n}")
    return found[0]


def vectorized_variant(backend: str, algorithm: str, n: int) -> tuple[str, str]:
    """Seed 000's ``-v``: the backend and its ``<algorithm>-vec`` variant for n vertices, where
    the backend has vectorized variants (else the backend and ``algorithm`` unchanged)."""
    name = resolve_backend(backend, n)
    impls = algorithms(name)
    variants = [i.algorithm for i in impls if i.algorithm.endswith("-vec")]
    if not variants:                                  # e.g. the CPU: nothing to switch
        return name, algorithm
    base = next(i.algorithm for i in impls if i.default) if algorithm == "auto" else algorithm
    if base.endswith("-vec"):
        return name, base
    if f"{base}-vec" in variants:
        return name, f"{base}-vec"
    bases = ", ".join(f"-a {v.removesuffix('-vec')}" for v in variants)
    raise FloydwarpError(f"{name}/{base} has no vectorized variant; -v works with {bases}")
