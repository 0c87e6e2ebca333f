"""Benchmarks: studies run cases and return records; :mod:`.report` prints and writes them.

A study is ``study(config: BenchConfig, *, command=None, on_record=None) -> dict``
(the payload ``floydwarp bench --json`` writes).  Adding one is a function and a
line in ``STUDIES``; ``floydwarp bench STUDY`` offers every name here.

The studies other than ``run`` live in :mod:`floydwarp.bench.studies` (one module
each, imported on first use).  Each module has ``run`` (the study), ``columns``
(its table), ``summary_lines`` and ``plots``; :func:`view` finds the module that
draws a saved payload, and :mod:`.results` writes a study's folder (JSON, CSV,
PNG plots, ``report.md``) and rebuilds reports from saved JSON.
"""
from __future__ import annotations

import importlib

from .runner import BenchConfig, Case, plan_cases, run

#: study name -> module under floydwarp.bench.studies
STUDY_MODULES = {
    "sizes": "sizes",
    "kernels": "kernels",
    "block-size": "block_size",
    "budget": "budget",
    "threads": "threads",
    "scaling": "scaling",
    "breakdown": "breakdown",
    "ceilings": "ceilings",
    "networkx": "networkx",
    "batch": "batch",
    "networkx-stages": "networkx_stages",
    "small": "small",
    "startup": "startup",
    "inputs": "inputs",
    "panel": "panel",
}


def _lazy(name):
    def study(config, *, command=None, on_record=None):
        return view(name).run(config, command=command, on_record=on_record)

    study.__name__ = name.replace("-", "_")
    study.__doc__ = f"The {name!r} study (floydwarp.bench.studies.{STUDY_MODULES[name]})."
    return study


#: name -> study, in the order ``floydwarp bench --help`` lists them
STUDIES = {
    "run": run,
    **{name: _lazy(name) for name in STUDY_MODULES},
}


def view(study: str):
    """The module that runs, tabulates and plots ``study`` (``run`` is drawn as ``sizes``)."""
    module = STUDY_MODULES.get("sizes" if study == "run" else study)
    if module is None:
        raise KeyError(study)
    return importlib.import_module(f"{__name__}.studies.{module}")


__all__ = ["BenchConfig", "Case", "STUDIES", "STUDY_MODULES", "plan_cases", "run", "view"]
