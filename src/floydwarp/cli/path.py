"""``floydwarp path RESULT U V``: the distance and a shortest route between two vertices.

Also the shared answer formatting for ``floydwarp query``.
"""
from __future__ import annotations

import json
import math
from pathlib import Path

import click

from .app import Argument, app

UNREACHABLE = "unreachable"
NEGATIVE_CYCLE = "through a negative cycle"
NO_ROUTES = "not stored (solve with --predecessors to keep routes)"

result_file_argument = click.argument(
    "result_file", cls=Argument, metavar="RESULT", type=click.Path(path_type=Path),
    description="A saved result: .npz, the .npy layout (NAME.npy + NAME.json) or an NTHU .out file.")
format_option = click.option(
    "--format", "-f", metavar="FMT", help="Result file format when the extension does not tell: npz, npy or nthu.")
json_option = click.option("--json", "as_json", is_flag=True, help="Print the answer as JSON.")


def load(path: Path, format: str | None):
    from ..io import read_result
    return read_result(path, format)


def answer(result, u, v) -> dict:
    """One pair's answer: status ok / unreachable / negative-cycle, distance and route."""
    # u and v are what find_vertex returned (labels when labelled): pass them on as they are
    d = result.distance(u, v)
    entry = {"from": u, "to": v}
    if d == math.inf:
        return {**entry, "status": "unreachable", "distance": None, "route": None}
    if d == -math.inf:
        return {**entry, "status": "negative-cycle", "distance": None, "route": None}
    route = result.path(u, v) if result.pred is not None else None
    return {**entry, "status": "ok", "distance": d, "route": route}


def format_distance(entry) -> str:
    if entry["status"] == "unreachable":
        return UNREACHABLE
    if entry["status"] == "negative-cycle":
        return NEGATIVE_CYCLE
    return str(entry["distance"])


def format_route(entry, has_pred: bool) -> str:
    if entry["status"] == "unreachable":
        return "none"
    if entry["status"] == "negative-cycle":
        return "none (a negative cycle makes it arbitrarily short)"
    if not has_pred:
        return NO_ROUTES
    return " -> ".join(str(x) for x in entry["route"])


def print_pair(result, entry, as_json: bool):
    if as_json:
        click.echo(json.dumps(jsonable(entry)))
        return
    click.echo(f"from: {entry['from']}")
    click.echo(f"to: {entry['to']}")
    click.echo(f"distance: {format_distance(entry)}")
    click.echo(f"route: {format_route(entry, result.pred is not None)}")


def jsonable(value):
    if isinstance(value, dict):
        return {k: jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if hasattr(value, "item"):
        return value.item()
    return value


# a vertex named like a negative number ("-3", an edge list's label) is a vertex, not an option
@app.command(short_help="Distance and shortest route between two vertices of a saved result.", epilog=(
    "Vertices are named as in the input file (DIMACS ids, edge-list names) when the result has labels, "
    "else by index 0..n-1; a name that starts with '-' is read as a vertex unless it is one of the "
    "options (write 'floydwarp path RESULT -- U V' for those).  Exit status 0 for any answer (including "
    "'unreachable'), 2 for an unknown vertex or an unreadable file."),
    context_settings={"ignore_unknown_options": True})
@result_file_argument
@click.argument("u", cls=Argument, description="Start vertex.")
@click.argument("v", cls=Argument, description="End vertex.")
@format_option
@json_option
def path(result_file, u, v, format, as_json):
    """Print the shortest distance from U to V and a shortest route (or 'unreachable', or
    'through a negative cycle')."""
    result = load(result_file, format)
    entry = answer(result, result.find_vertex(u), result.find_vertex(v))
    print_pair(result, entry, as_json)
