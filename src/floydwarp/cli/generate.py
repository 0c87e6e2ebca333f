"""``floydwarp generate``: write a random graph file."""
from __future__ import annotations

from pathlib import Path

import click

from .app import Argument, app, generation_options, generate_graph
from .solve import FORMATS


@app.command(short_help="Write a random graph file.")
@click.argument("n", cls=Argument, type=click.IntRange(min=0), description="Number of vertices.")
@click.option("--output", "-o", metavar="FILE", required=True, type=click.Path(dir_okay=False, path_type=Path),
              help=f"Graph file to write; its format is chosen by extension: {FORMATS}.")
@generation_options
def generate(n, output, percent, seed, weights, potential, undirected):
    """Write a random graph file (Erdos-Renyi, as seed 000 generates them)."""
    from ..io import check_graph_path, write_graph

    check_graph_path(output)                     # before generating: a path the write would refuse
    graph = generate_graph(n, percent, seed, weights, potential, undirected)
    write_graph(graph, output)
    click.echo(f"wrote {output}: n={graph.n:,}, {graph.num_edges:,} edges")
