"""``floydwarp query RESULT --from A --to B`` and ``--all-from A``: questions to a saved result."""
from __future__ import annotations

import json

import click

from .app import app
from .path import (answer, format_distance, format_option, format_route, json_option, jsonable, load, print_pair,
                   result_file_argument)


@app.command(short_help="Distances and routes from a saved result (one pair, or a table from one vertex).",
             epilog="Exit status 0 for any answer (including 'unreachable'), 2 for a bad option, an unknown "
                    "vertex or an unreadable file.")
@result_file_argument
@click.option("--from", "source", metavar="A", help="Start vertex (with --to: one pair; alone: like --all-from).")
@click.option("--to", "target", metavar="B", help="End vertex.")
@click.option("--all-from", metavar="A", help="Print a table of every vertex: target, distance, route from A.")
@format_option
@json_option
@click.pass_context
def query(ctx, result_file, source, target, all_from, format, as_json):
    """Ask a saved result for the distance and route from A to B, or for a table of
    every target from A (target, distance, route)."""
    if all_from is not None and (source is not None or target is not None):
        raise click.UsageError("give --all-from A, or --from A [--to B], not both", ctx)
    if target is not None and source is None:
        raise click.UsageError("--to needs --from", ctx)
    if all_from is None and source is None:
        raise click.UsageError("give --from A --to B, or --all-from A", ctx)
    result = load(result_file, format)
    if target is not None:
        entry = answer(result, result.find_vertex(source), result.find_vertex(target))
        print_pair(result, entry, as_json)
        return
    start = result.find_vertex(all_from if all_from is not None else source)
    print_table(result, start, as_json)


def print_table(result, start, as_json: bool):
    """One row per vertex: target, distance, route (routes computed once, as a tree)."""
    distances = result.distances_from(start)
    routes = result.paths_from(start) if result.pred is not None else {}
    rows = []
    for target, d in distances.items():
        if d == float("inf"):
            entry = {"to": target, "status": "unreachable", "distance": None, "route": None}
        elif d == float("-inf"):
            entry = {"to": target, "status": "negative-cycle", "distance": None, "route": None}
        else:
            entry = {"to": target, "status": "ok", "distance": d, "route": routes.get(target)}
        rows.append(entry)
    if as_json:
        click.echo(json.dumps(jsonable({"from": result.label(result.index(start)), "targets": rows})))
        return
    has_pred = result.pred is not None
    table = [("target", "distance", "route")]
    table += [(str(r["to"]), format_distance(r), format_route(r, has_pred) if r["status"] == "ok" else "")
              for r in rows]
    w0 = max(len(t[0]) for t in table)
    w1 = max(len(t[1]) for t in table)
    click.echo(f"from: {result.label(result.index(start))}")
    for t0, t1, t2 in table:
        click.echo(f"{t0:<{w0}}  {t1:<{w1}}  {t2}".rstrip())
