"""Benchmarks: studies run cases and return records; :mod:`.report` prints and writes them.

A study is ``study(config: BenchConfig, *, command=None, on_record=None) -> dict``
(the payload ``floydwarp bench --json`` writes).  Adding one is a function and a
line in ``STUDIES``; ``floydwarp bench STUDY`` offers every name here.
"""
from .runner import BenchConfig, Case, plan_cases, run

#: name -> study, in the order ``floydwarp bench --help`` lists them
STUDIES = {
    "run": run,
}

__all__ = ["BenchConfig", "Case", "STUDIES", "plan_cases", "run"]
