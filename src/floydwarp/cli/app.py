"""The Click group every subcommand registers on, plus shared options and error handling.

Errors, for every command in one place (:data:`EXIT_STATUS`, by the kinds of floydwarp.errors): a
user error -- a bad flag or value (Click's usage errors), a :class:`floydwarp.FloydwarpError`
raised by the library, a negative cycle where distances are needed -- is printed as one line,
``error: <message>``, on stderr, with exit status 2; a run stopped by a signal after saving its
checkpoint exits 3, a failed device (GPU, CUDA, NCCL, a worker) 4, an operating system error (a
file that cannot be written, host memory) 1.  Warnings (e.g. :class:`floydwarp.InexactWarning`)
are one ``warning: <message>`` line.  A broken internal invariant (``InternalError``) exits 5
and, like anything else unexpected (a bug), keeps its traceback.
"""
from __future__ import annotations

import shlex
import sys
import warnings

import click

from ..errors import CheckpointInterrupt, DeviceError, FloydwarpError, InternalError

PROG = "floydwarp"
_invocation: list[str] = [PROG]
#: exit status of a bare ``floydwarp`` (the help, on stderr): a call that did nothing
NO_COMMAND_EXIT_CODE = 2
#: (kind of error, exit status, the word its line starts with), most specific first: the one
#: mapping of every command (a CheckpointInterrupt is a FloydwarpError; NegativeCycleError too)
EXIT_STATUS = (
    (CheckpointInterrupt, 3, "stopped"),
    (FloydwarpError, 2, "error"),
    (DeviceError, 4, "device error"),
    (InternalError, 5, "internal error"),
)
#: the exit statuses in words, for ``floydwarp --help``
EXIT_HELP = ("Exit status: 0 done; 1 an operating system error (a file, host memory) or 'solve --check' found "
             "a mismatch; 2 a bad option or input (a negative cycle where distances are needed included); "
             "3 stopped by SIGTERM/Ctrl-C after saving a checkpoint (resume with 'solve --resume DIR'); 4 the "
             "device failed (GPU out of memory, CUDA, NCCL, a worker process): the input may be fine; 5 an "
             "internal error, a bug in floydwarp (its traceback is printed: please report it).")


def command_line() -> str:
    """The command line being run, as a shell would read it (for benchmark records)."""
    return shlex.join(_invocation)


def error(message: str) -> None:
    click.echo(f"error: {' '.join(str(message).split())}", err=True)


def _warning_line(message, category, filename, lineno, file=None, line=None) -> None:
    click.echo(f"warning: {' '.join(str(message).split())}", err=True)


class Argument(click.Argument):
    """A positional argument with a description, listed under 'Arguments' in its command's help.

    Click before 8.5 takes no help text for arguments; keeping ours apart from Click's
    ``help`` prints the same section on every Click.
    """

    def __init__(self, param_decls, *, description: str, **attrs):
        super().__init__(param_decls, **attrs)
        self.description = description
        self.shown_default = attrs.get("default")   # Click >= 8.3 holds an absent default as a sentinel

    def help_record(self, ctx: click.Context) -> tuple[str, str]:
        default = self.shown_default
        extra = "required" if self.required else None if default is None else f"default: {default}"
        return " ".join(self.get_usage_pieces(ctx)), self.description + (f"  [{extra}]" if extra else "")


class _Command(click.Command):
    """Lists the arguments, with their descriptions, above the options."""

    def format_options(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = [p.help_record(ctx) for p in self.get_params(ctx) if isinstance(p, Argument)]
        if rows:
            with formatter.section("Arguments"):
                formatter.write_dl(rows)
        super().format_options(ctx, formatter)


class _Group(click.Group):
    """Runs a command and turns every user error into one line on stderr."""

    command_class = _Command

    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(self.commands)                   # registration order (COMMANDS), not sorted

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if not args:                                 # bare `floydwarp`: the help, not an error line
            click.echo(ctx.get_help(), err=True, color=ctx.color)
            ctx.exit(NO_COMMAND_EXIT_CODE)
        return super().parse_args(ctx, args)

    def main(self, args=None, prog_name=None, complete_var=None, standalone_mode=True, **extra):
        args = sys.argv[1:] if args is None else list(args)
        _invocation[:] = [PROG, *args]
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        try:
            # Non-standalone: errors come back to us; a ctx.exit(code) comes back as its code.
            with warnings.catch_warnings():           # restores showwarning for in-process callers
                warnings.showwarning = _warning_line
                rv = super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        except click.ClickException as exc:
            message = exc.format_message()
            ctx = getattr(exc, "ctx", None)
            if ctx is not None:
                message += f" (see '{ctx.command_path} --help')"
            error(message)
            sys.exit(exc.exit_code)
        except click.Abort:
            error("aborted")
            sys.exit(1)
        except (FloydwarpError, DeviceError, InternalError) as exc:
            sys.exit(_report(exc))
        except RuntimeError as exc:
            if not _from_device_runtime(exc):
                raise
            sys.exit(_report(DeviceError(f"{type(exc).__name__}: {exc}")))
        except MemoryError:
            error("out of memory: try a narrower --dtype, a smaller graph or another backend")
            sys.exit(1)
        except OSError as exc:
            error(f"{exc.strerror or exc}: {exc.filename}" if exc.filename else str(exc))
            sys.exit(1)
        sys.exit(rv if isinstance(rv, int) else 0)


def _report(exc: BaseException) -> int:
    """Print ``exc`` by its kind (:data:`EXIT_STATUS`) and return the exit status."""
    status, word = next((code, w) for kind, code, w in EXIT_STATUS if isinstance(exc, kind))
    if status == 5:
        import traceback

        traceback.print_exception(exc)
        click.echo(f"{word}: {' '.join(str(exc).split())} (a bug in floydwarp: please report it with the "
                   f"traceback above)", err=True)
    else:
        click.echo(f"{word}: {' '.join(str(exc).split())}", err=True)
    return status


def _from_device_runtime(exc: BaseException) -> bool:
    """A CUDA / NCCL error raised by CuPy itself where no engine wrapped it in a DeviceError."""
    return type(exc).__module__.split(".")[0] in ("cupy", "cupy_backends", "cupyx")


def _print_version(ctx: click.Context, param: click.Parameter, value: bool) -> None:
    if value:
        from .. import __version__
        click.echo(f"{PROG} {__version__}")
        ctx.exit()


@click.group(PROG, cls=_Group, epilog=EXIT_HELP, context_settings={
    "help_option_names": ["-h", "--help"], "max_content_width": 100, "show_default": True})
@click.option("--version", is_flag=True, expose_value=False, is_eager=True, callback=_print_version,
              help="Print the version and exit.")
def app():
    """All-pairs shortest paths by Floyd-Warshall, on the CPU or a GPU."""


# ---------------------------------------------------------------- shared options
# Graph generation, shared by `solve --generate` and `generate`.
DEFAULT_PERCENT = 25.0
DEFAULT_WEIGHTS = "1,16"

percent_option = click.option(
    "--percent", "-p", metavar="P", type=click.FloatRange(0, 100), default=DEFAULT_PERCENT,
    help="Edge percentage 0..100: each ordered pair is an edge with this chance.")
seed_option = click.option("--seed", "-s", metavar="S", type=click.IntRange(min=0), default=0,
                           help="Random generator seed.")
_weights_option = click.option(
    "--weights", metavar="LO,HI", default=DEFAULT_WEIGHTS,
    help="Inclusive range of the integer edge weights; a negative LO gives negative weights (and, in dense "
         "graphs, negative cycles).")
_potential_option = click.option(
    "--potential", metavar="H", type=click.IntRange(min=0), default=0,
    help="Add h(u) - h(v) to each edge (u, v), h drawn in 0..H: with weights of 0 or more, negative weights "
         "but no negative cycle (every cycle keeps its length).")
_undirected_option = click.option("--undirected", is_flag=True, help="Mirror every edge (i, j) to (j, i).")

GENERATION_OPTIONS = ("percent", "seed", "weights", "potential", "undirected")


def generation_options(command):
    """-p, -s, --weights, --potential and --undirected, in that order in the help."""
    for option in reversed((percent_option, seed_option, _weights_option, _potential_option, _undirected_option)):
        command = option(command)
    return command


def parse_weights(text: str) -> tuple[int, int]:
    lo, _, hi = text.partition(",")
    try:
        weights = int(lo), int(hi)
    except ValueError:
        raise click.BadParameter(f"expected two integers LO,HI (like 1,16), got {text!r}",
                                 param_hint="'--weights'") from None
    if not all(abs(w) < 2 ** 62 for w in weights):      # the generators draw int64 weights below INF64
        raise click.BadParameter(f"weights must lie within +-2**62, got {text!r}", param_hint="'--weights'")
    return weights


def parse_sizes(text: str, option: str) -> list[int]:
    try:
        values = [int(v) for v in text.replace(" ", "").split(",") if v]
    except ValueError:
        raise click.BadParameter(f"expected integers separated by commas, got {text!r}",
                                 param_hint=f"'{option}'") from None
    if not values or min(values) < 1:
        raise click.BadParameter(f"expected positive integers separated by commas, got {text!r}",
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
        raise click.BadParameter(f"expected a size like 4GB, 512MiB or 4e9, got {text!r}",
                                 param_hint=f"'{option}'") from None
    if value < 1:
        raise click.BadParameter(f"expected a positive size, got {text!r}", param_hint=f"'{option}'")
    return int(value)


def progress_wanted(asked: bool | None = None) -> bool:
    """Progress bars (tqdm, with ETA) when asked for (``--progress``), else only on a terminal:
    nothing extra in pipes, files and logs (a "reading: 100%" bar before an error line)."""
    return sys.stderr.isatty() if asked is None else asked


def split_names(values) -> list[str]:
    """Repeatable options that also take comma lists: ``--backend cpu,gpu`` = ``--backend cpu --backend gpu``."""
    return [v for value in values or () for v in value.replace(" ", "").split(",") if v]


def generate_graph(n, percent, seed, weights, potential, undirected, device=False):
    from ..generate import erdos_renyi
    return erdos_renyi(n, percent, seed=seed, weights=parse_weights(weights), potential=potential,
                       directed=not undirected, device=device)


def describe_generation(percent, seed, weights, potential, undirected) -> str:
    lo, hi = parse_weights(weights)
    text = f"random (Erdos-Renyi, percent {percent:g}, seed {seed}, weights {lo}..{hi}"
    if potential:
        text += f", potential {potential}"
    return text + (", undirected)" if undirected else ")")
