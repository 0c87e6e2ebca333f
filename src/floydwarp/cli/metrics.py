"""``floydwarp metrics FILE``: diameter, radius, center, periphery, average path length,
Wiener index and the most central vertices of a graph file (or of a saved result)."""
from __future__ import annotations

import json
import math
import time
from pathlib import Path
from typing import Annotated, Optional

import typer

from .app import app

#: vertices listed for the center and periphery before "... and N more"
MAX_LISTED = 10


@app.command(short_help="Diameter, radius, center, closeness and friends of a graph.", epilog=(
    "Distances of unreachable pairs are infinite: a graph that is not strongly connected has an infinite "
    "diameter, average path length and Wiener index.  Closeness is NetworkX's (inward distances, "
    "Wasserman-Faust scaling).  A graph with a negative cycle has no metrics (exit status 2)."))
def metrics(
    input: Annotated[Path, typer.Argument(
        metavar="FILE", exists=True, dir_okay=False, show_default=False,
        help="A graph file (any format 'floydwarp solve' reads), or with --result a saved result.")],
    result_file: Annotated[bool, typer.Option(
        "--result", help="FILE is a saved result (.npz, the .npy layout or .out), not a graph.")] = False,
    dtype: Annotated[str, typer.Option("--dtype", metavar="TYPE", help="Distance type (see 'floydwarp solve').")] = "auto",
    backend: Annotated[str, typer.Option("--backend", metavar="NAME", help="auto, cpu, gpu or reference.")] = "auto",
    top: Annotated[int, typer.Option("--top", metavar="K", min=0, help="List the K most central vertices.")] = 5,
    undirected: Annotated[bool, typer.Option(
        "--undirected", help="Count the Wiener index over unordered pairs (each pair once).")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the metrics as JSON.")] = False,
):
    """Distance metrics of a graph from one all-pairs solve, reduced where the distances live."""
    from ..io import read_graph, read_result
    from ..solve import solve

    t0 = time.perf_counter()
    if result_file:
        result = read_result(input, None)
    else:
        result = solve(read_graph(input), dtype=dtype, backend=backend)
    t1 = time.perf_counter()
    closeness = result.closeness()
    report = {
        "input": str(input), "n": result.n, "dtype": result.dtype.name,
        "backend": f"{result.backend}/{result.algorithm}" if result.backend else None,
        "diameter": result.diameter() if result.n else None,
        "radius": result.radius() if result.n else None,
        "center": result.center() if result.n else [],
        "periphery": result.periphery() if result.n else [],
        "average_path_length": result.average_path_length() if result.n else None,
        "wiener_index": result.wiener_index(directed=not undirected),
        "closeness_top": _top(result, closeness, top),
    }
    report["seconds"] = {"solve" if not result_file else "read": t1 - t0, "metrics": time.perf_counter() - t1}
    if as_json:
        typer.echo(json.dumps(_jsonable(report), indent=2, default=str))
        return
    echo = typer.echo
    echo(f"input:     {input}")
    echo(f"n:         {result.n:,}")
    if report["backend"]:
        echo(f"backend:   {report['backend']} ({result.dtype.name})")
    echo(f"diameter:  {_number(report['diameter'])}")
    echo(f"radius:    {_number(report['radius'])}")
    echo(f"center:    {_listed(report['center'])}")
    echo(f"periphery: {_listed(report['periphery'])}")
    echo(f"average path length: {_number(report['average_path_length'])}")
    echo(f"Wiener index: {_number(report['wiener_index'])}" + (" (unordered pairs)" if undirected else ""))
    if report["closeness_top"]:
        echo("closeness (highest first):")
        for entry in report["closeness_top"]:
            echo(f"  {entry['vertex']}\t{entry['closeness']:.6g}")
    from ..bench.report import format_seconds   # the bench package: only when printing

    seconds = report["seconds"]
    echo(f"time:      {', '.join(f'{k} {format_seconds(v)}' for k, v in seconds.items())}")


def _top(result, closeness, k) -> list:
    import numpy as np

    from ..arrays import to_host

    values = to_host(closeness)                    # n numbers: ranking them on the host is cheap
    order = np.argsort(-values, kind="stable")[:k].tolist()
    return [{"vertex": result.label(i), "closeness": float(values[i])} for i in order]


def _number(value) -> str:
    if value is None:
        return "none (no vertices)"
    if value == math.inf:
        return "inf (not every pair is connected)"
    return f"{value:,}" if isinstance(value, int) else f"{value:.10g}"


def _listed(vertices) -> str:
    shown = ", ".join(str(v) for v in vertices[:MAX_LISTED])
    more = len(vertices) - MAX_LISTED
    return shown + (f" ... and {more:,} more" if more > 0 else "") if vertices else "none"


def _jsonable(value):
    if isinstance(value, float) and math.isinf(value):
        return "inf"
    if isinstance(value, dict):
        return {k: _jsonable(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_jsonable(v) for v in value]
    return value
