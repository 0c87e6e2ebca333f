"""Click's test runner with the command's stderr kept apart from its stdout, on every Click floydwarp takes.

Click 8.1 mixes stderr into ``result.output`` unless told ``mix_stderr=False``; Click 8.2 always keeps
``result.stderr`` apart and dropped the flag.  ``result.output`` then differs between them (stdout only,
or both streams): tests read ``result.stdout`` and ``result.stderr``.
"""
from __future__ import annotations

import inspect

from click.testing import CliRunner


def cli_runner() -> CliRunner:
    if "mix_stderr" in inspect.signature(CliRunner).parameters:
        return CliRunner(mix_stderr=False)
    return CliRunner()
