"""floydwarp: all-pairs shortest paths with Floyd-Warshall, as fast as the hardware allows.

>>> import floydwarp as fw
>>> r = fw.solve(fw.generate.erdos_renyi(100, percent=10, seed=1))
>>> r.n, r.has_negative_cycle
(100, False)
"""
__version__ = "0.1.0"

#: every public name -> (its module, the name there; None: the module itself).  Nothing is
#: imported until a name is first asked for (PEP 562): ``floydwarp.launch`` then starts the
#: GPUs a command line names before NumPy is imported (0.16 s of a one-GPU ``floydwarp solve``
#: process), and ``import floydwarp.io`` or ``floydwarp.cli`` pays only for what it uses.
_PUBLIC = {
    "generate": ("generate", None),
    **{name: ("errors", name) for name in ("BackendUnavailableError", "CheckpointError", "DeviceError",
                                          "DtypeError", "FloydwarpError", "InexactWarning", "NegativeCycleError",
                                          "NoPathError", "OptionError")},
    "Graph": ("graph", "Graph"),
    "DTYPES": ("numeric", "DTYPES"), "inf_of": ("numeric", "inf_of"),
    "NO_PREDECESSOR": ("predecessors", "NO_PREDECESSOR"),
    "Result": ("result", "Result"),
    "solve": ("solver", "solve"),
    "floyd_warshall": ("scipy_compat", "floyd_warshall"),
    **{name: ("batch", name) for name in ("BatchResult", "GraphBatch", "solve_batch")},
}


def __getattr__(name):
    """A public name, or a subpackage or module (``fw.io``, ``fw.registry``), imported on first use."""
    import importlib
    import importlib.util

    module, attribute = _PUBLIC.get(name, (name, None))
    if attribute is None and importlib.util.find_spec(f"{__name__}.{module}") is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = importlib.import_module(f".{module}", __name__)
    if attribute is not None:
        value = getattr(value, attribute)
    globals()[name] = value        # later lookups find it without this call (1.4 us each)
    return value


def __dir__():
    return sorted({*globals(), *_PUBLIC})


__all__ = [*_PUBLIC, "__version__"]
