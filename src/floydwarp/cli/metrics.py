"""``floydwarp metrics FILE``: diameter, radius, center, periphery, average path length,
Wiener index and the most central vertices of a graph file (or of a saved result)."""
from __future__ import annotations

import json
import math
import time
from pathlib import Path

import click

from .app import Argument, app

#: vertices listed for the center and periphery before "... and N more"
MAX_LISTED = 10


@app.command(short_help="Diameter, radius, center, closeness and friends of a graph.", epilog=(
    "Distances of unreachable pairs are infinite: a graph that is not strongly connected has an infinite "
    "diameter, average path length and Wiener index.  Closeness is NetworkX's (inward distances, "
    "Wasserman-Faust scaling).  A graph with a negative cycle has no metrics (exit status 2)."))
@click.argument("input", cls=Argument, metavar="FILE", type=click.Path(exists=True, dir_okay=False, path_type=Path),
                description="A graph file (any format 'floydwarp solve' reads), or with --result a saved result.")
@click.option("--result", "result_file", is_flag=True,
              help="FILE is a saved result (.npz, the .npy layout or .out), not a graph.")
@click.option("--dtype", metavar="TYPE", default="auto", help="Distance type (see 'floydwarp solve').")
@click.option("--backend", metavar="NAME", default="auto", help="auto, cpu, gpu or reference.")
@click.option("--top", metavar="K", type=click.IntRange(min=0), default=5, help="List the K most central vertices.")
@click.option("--undirected", is_flag=True, help="Count the Wiener index over unordered pairs (each pair once).")
@click.option("--json", "as_json", is_flag=True, help="Print the metrics as JSON.")
def metrics(input, result_file, dtype, backend, top, undirected, as_json):
    """Distance metrics of a graph from one all-pairs solve, reduced where the distances live."""
    from ..io import read_graph, read_result
    from ..solver import solve

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
        click.echo(json.dumps(_jsonable(report), indent=2, default=str))
        return
    echo = click.echo
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
