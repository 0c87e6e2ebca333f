"""The Typer app every subcommand registers on, plus shared options and error handling.

Errors: every user error -- a bad flag or value (Click's usage errors), a
:class:`floydwarp.FloydwarpError` raised by the library -- is printed as one
line, ``error: <message>``, on stderr, with exit status 2.  An operating
system error (a file that cannot be written) is one line with status 1.
Warnings (e.g. :class:`floydwarp.InexactWarning`) are one ``warning: <message>`` line.
Anything else is a bug and keeps its traceback.
"""
from __future__ import annotations

import shlex
import sys
import warnings
from typing import Annotated

import typer
from typer.core import TyperGroup

from ..errors import FloydwarpError

# Typer >= 0.26 carries its own copy of Click (typer._click); older Typers use
# click itself.  Take the exception classes from wherever typer.BadParameter lives.
_click_exceptions = sys.modules[typer.BadParameter.__module__]
ClickException = _click_exceptions.ClickException
UsageError = _click_exceptions.UsageError
_NoArgsIsHelp = getattr(_click_exceptions, "NoArgsIsHelpError", ())

PROG = "floydwarp"
_invocation: list[str] = [PROG]


def command_line() -> str:
    """The command line being run, as a shell would read it (for benchmark records)."""
    return shlex.join(_invocation)


def error(message: str) -> None:
    typer.echo(f"error: {' '.join(str(message).split())}", err=True)


def _warning_line(message, category, filename, lineno, file=None, line=None) -> None:
    typer.echo(f"warning: {' '.join(str(message).split())}", err=True)


class _Group(TyperGroup):
    """Runs a command and turns every user error into one line on stderr."""

    def main(self, args=None, prog_name=None, complete_var=None, standalone_mode=True, **extra):
        args = sys.argv[1:] if args is None else list(args)
        _invocation[:] = [PROG, *args]
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        try:
            # Non-standalone: errors come back to us; a typer.Exit(code) comes back as its code.
            with warnings.catch_warnings():           # restores showwarning for in-process callers
                warnings.showwarning = _warning_line
                rv = super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        except _NoArgsIsHelp as exc:               # bare `floydwarp`: the help, not an error line
            exc.show()
            sys.exit(exc.exit_code)
        except ClickException as exc:
            message = exc.format_message()
            ctx = getattr(exc, "ctx", None)
            if ctx is not None:
                message += f" (see '{ctx.command_path} --help')"
            error(message)
            sys.exit(exc.exit_code)
        except typer.Abort:
            error("aborted")
            sys.exit(1)
        except FloydwarpError as exc:
            error(str(exc))
            sys.exit(2)
        except MemoryError:
            error("out of memory: try a narrower --dtype, a smaller graph or another backend")
            sys.exit(1)
        except OSError as exc:
            error(f"{exc.strerror or exc}: {exc.filename}" if exc.filename else str(exc))
            sys.exit(1)
        sys.exit(rv if isinstance(rv, int) else 0)


app = typer.Typer(
    name=PROG,
    cls=_Group,
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
)


def _version(value: bool):
    if value:
        from .. import __version__
        typer.echo(f"floydwarp {__version__}")
        raise typer.Exit()


@app.callback()
def _root(version: Annotated[bool, typer.Option("--version", callback=_version, is_eager=True,
                                                help="Print the version and exit.")] = False):
    """All-pairs shortest paths by Floyd-Warshall, on the CPU or a GPU."""


# ---------------------------------------------------------------- shared options
# Graph generation, shared by `solve --generate` and `generate`.
Percent = Annotated[float, typer.Option(
    "--percent", "-p", metavar="P", min=0, max=100,
    help="Edge percentage 0..100: each ordered pair is an edge with this chance.")]
Seed = Annotated[int, typer.Option("--seed", "-s", metavar="S", min=0, help="Random generator seed.")]
Weights = Annotated[str, typer.Option(
    "--weights", metavar="LO,HI",
    help="Inclusive range of the integer edge weights; a negative LO gives negative weights (and, in dense "
         "graphs, negative cycles).")]
Potential = Annotated[int, typer.Option(
    "--potential", min=0, metavar="H",
    help="Add h(u) - h(v) to each edge (u, v), h drawn in 0..H: negative weights but no negative cycle.")]
Undirected = Annotated[bool, typer.Option("--undirected", help="Mirror every edge (i, j) to (j, i).")]

GENERATION_OPTIONS = ("percent", "seed", "weights", "potential", "undirected")
DEFAULT_PERCENT = 25.0
DEFAULT_WEIGHTS = "1,16"


def parse_weights(text: str) -> tuple[int, int]:
    lo, _, hi = text.partition(",")
    try:
        return int(lo), int(hi)
    except ValueError:
        raise typer.BadParameter(f"expected two integers LO,HI (like 1,16), got {text!r}",
                                 param_hint="'--weights'") from None


def parse_sizes(text: str, option: str) -> list[int]:
    try:
        values = [int(v) for v in text.replace(" ", "").split(",") if v]
    except ValueError:
        raise typer.BadParameter(f"expected integers separated by commas, got {text!r}",
                                 param_hint=f"'{option}'") from None
    if not values or min(values) < 1:
        raise typer.BadParameter(f"expected positive integers separated by commas, got {text!r}",
                                 param_hint=f"'{option}'")
    return values


#: byte-size suffixes of --max-gpu-memory and friends (decimal and binary, like the units tools print)
_BYTE_UNITS = {"": 1, "B": 1, "KB": 10 ** 3, "MB": 10 ** 6, "GB": 10 ** 9, "TB": 10 ** 12,
               "K": 2 ** 10, "M": 2 ** 20, "G": 2 ** 30, "T": 2 ** 40,
               "KIB": 2 ** 10, "MIB": 2 ** 20, "GIB": 2 ** 30, "TIB": 2 ** 40}


def parse_bytes(text: str, option: str) -> int:
    """``4GB`` = 4e9, ``512MiB`` = ``512M`` = 512 * 2**20, ``4e9`` = 4e9 bytes."""
    t = text.strip().upper().replace(" ", "")
    number = t.rstrip("KMGTIB")
    unit = t[len(number):]
    try:
        value = float(number) * _BYTE_UNITS[unit]
    except (ValueError, KeyError):
        raise typer.BadParameter(f"expected a size like 4GB, 512MiB or 4e9, got {text!r}",
                                 param_hint=f"'{option}'") from None
    if value < 1:
        raise typer.BadParameter(f"expected a positive size, got {text!r}", param_hint=f"'{option}'")
    return int(value)


def split_names(values) -> list[str]:
    """Repeatable options that also take comma lists: ``--backend cpu,gpu`` = ``--backend cpu --backend gpu``."""
    return [v for value in values or () for v in value.replace(" ", "").split(",") if v]


def generate_graph(n, percent, seed, weights, potential, undirected):
    from ..generate import erdos_renyi
    return erdos_renyi(n, percent, seed=seed, weights=parse_weights(weights), potential=potential,
                       directed=not undirected)


def describe_generation(percent, seed, weights, potential, undirected) -> str:
    lo, hi = parse_weights(weights)
    text = f"random (Erdos-Renyi, percent {percent:g}, seed {seed}, weights {lo}..{hi}"
    if potential:
        text += f", potential {potential}"
    return text + (", undirected)" if undirected else ")")
