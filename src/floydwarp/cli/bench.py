"""``floydwarp bench [STUDY]``: time backends and algorithms over sizes, SciPy side by side."""
from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from .app import Percent, Seed, app, command_line, parse_sizes, split_names


def _studies() -> list[str]:
    from ..bench import STUDIES
    return list(STUDIES)


@app.command(short_help="Time backends and algorithms against SciPy.", epilog="Times are medians of --repeats runs after a warm-up run (so JIT/NVRTC compilation is "
                    "excluded); 'time' is the whole solve() call, 'compute' the kernels alone, relax/s = n^3 / "
                    "compute, 'vs SciPy' = SciPy's time / time (same graph, same run).")
def bench(
    study: Annotated[str, typer.Argument(
        metavar="STUDY", help=f"What to measure: {', '.join(_studies())}.  run (the default) times every "
                                "backend x algorithm x size x dtype x block size asked for.")] = "run",
    backend: Annotated[Optional[list[str]], typer.Option(
        "--backend", metavar="NAME", show_default=False,
        help="Backend to time (repeat or comma-separate; default: those --backend auto can pick).")] = None,
    algorithm: Annotated[Optional[list[str]], typer.Option(
        "--algorithm", "-a", metavar="NAME", show_default=False,
        help="Algorithm (repeat or comma-separate; auto: each backend's default; all: every one).")] = None,
    sizes: Annotated[str, typer.Option("--sizes", metavar="N,N,...", help="Vertex counts.")] = "256,512,1024,2048",
    dtype: Annotated[Optional[list[str]], typer.Option(
        "--dtype", metavar="TYPE", show_default=False, help="Distance type (repeat or comma-separate; default int32).")] = None,
    block_size: Annotated[Optional[str], typer.Option(
        "--block-size", "-b", metavar="B,B,...", show_default=False,
        help="Tile sizes to try (default: each implementation's own).")] = None,
    repeats: Annotated[int, typer.Option("--repeats", "-r", metavar="R", min=1, help="Timed runs per case (median kept).")] = 3,
    scipy: Annotated[bool, typer.Option("--scipy/--no-scipy", help="Time SciPy's floyd_warshall too.")] = True,
    scipy_max_n: Annotated[int, typer.Option(
        "--scipy-max-n", metavar="N", min=1, help="Skip SciPy above this n (it is single-threaded O(n^3)).")] = 4096,
    percent: Percent = 25.0,
    seed: Seed = 0,
    threads: Annotated[Optional[int], typer.Option(
        "--threads", metavar="T", min=1, show_default=False, help="CPU threads (default: all).")] = None,
    json_path: Annotated[Optional[Path], typer.Option(
        "--json", metavar="FILE", dir_okay=False, show_default=False, help="Also write the records and environment as JSON.")] = None,
):
    """Time backends and algorithms over sizes, SciPy side by side."""
    from .. import numeric
    from ..bench import STUDIES, BenchConfig
    from ..bench import report

    if study not in STUDIES:
        raise typer.BadParameter(f"unknown study {study!r}; choose one of: {', '.join(STUDIES)}",
                                 param_hint="'STUDY'")
    dtypes = split_names(dtype) or ["int32"]
    for name in dtypes:
        if name != "auto":
            numeric.canonical_dtype(name)
    config = BenchConfig(
        backends=split_names(backend) or None, algorithms=split_names(algorithm) or ["auto"],
        sizes=parse_sizes(sizes, "--sizes"), dtypes=dtypes,
        block_sizes=parse_sizes(block_size, "--block-size") if block_size else [None],
        repeats=repeats, scipy=scipy, scipy_max_n=scipy_max_n, percent=percent, seed=seed, threads=threads)

    printed_header = False

    def show(record):
        nonlocal printed_header
        if not printed_header:
            typer.echo(report.header())
            printed_header = True
        typer.echo(report.row(record))

    data = STUDIES[study](config, command=command_line(), on_record=show)
    typer.echo(f"on: {report.describe_environment(data['environment'])}")
    if json_path is not None:
        report.write_json(data, json_path)
        typer.echo(f"wrote {json_path} ({len(data['records'])} records)")
