"""``floydwarp generate``: write a random graph file."""
from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from .app import (DEFAULT_PERCENT, DEFAULT_WEIGHTS, Percent, Potential, Seed, Undirected, Weights, app,
                  generate_graph)
from .solve import FORMATS


@app.command(short_help="Write a random graph file.")
def generate(
    n: Annotated[int, typer.Argument(metavar="N", min=0, show_default=False, help="Number of vertices.")],
    output: Annotated[Path, typer.Option(
        "--output", "-o", metavar="FILE", dir_okay=False, show_default=False,
        help=f"Graph file to write; its format is chosen by extension: {FORMATS}.")],
    percent: Percent = DEFAULT_PERCENT,
    seed: Seed = 0,
    weights: Weights = DEFAULT_WEIGHTS,
    potential: Potential = 0,
    undirected: Undirected = False,
):
    """Write a random graph file (Erdos-Renyi, as seed 000 generates them)."""
    from ..io import check_graph_path, write_graph

    check_graph_path(output)                     # before generating: a path the write would refuse
    graph = generate_graph(n, percent, seed, weights, potential, undirected)
    write_graph(graph, output)
    typer.echo(f"wrote {output}: n={graph.n:,}, {graph.num_edges:,} edges")
