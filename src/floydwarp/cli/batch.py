"""``floydwarp batch``: many small graphs at once, into one padded ``.npz``."""
from __future__ import annotations

import time
from pathlib import Path

import click

from .app import Argument, app, progress_wanted


@app.command(short_help="Solve many small graphs at once (graph learning, chemistry) into one .npz.", epilog=(
    "INPUT is many graph files (any format 'floydwarp solve' reads, one graph each) or one .npz batch: PyG "
    "arrays edge_index with ptr or batch (and edge_weight), or graphs (B, N, N) with sizes.  The output .npz "
    "holds dist (B, N, N; unreachable and padding at the dtype's INF: inf, or 255 for uint8), sizes, "
    "negative_cycle and, with --predecessors, pred; floydwarp.BatchResult.load reads it.  Example: floydwarp "
    "batch mols.npz --unweighted --max-distance 20 -o spatial.npz"))
@click.argument("inputs", cls=Argument, metavar="INPUT...", nargs=-1, required=True,
                type=click.Path(exists=True, dir_okay=False, path_type=Path),
                description="Graph files, or one .npz batch.")
@click.option("--output", "-o", metavar="FILE.npz", required=True, type=click.Path(dir_okay=False, path_type=Path),
              help="The .npz to write.")
@click.option("--dtype", metavar="TYPE", default="auto", help="auto, uint8, int16, int32, int64, float32 or float64.")
@click.option("--backend", metavar="NAME", default="auto", help="auto, cpu or gpu.")
@click.option("--unweighted", is_flag=True, help="Every edge weighs 1: hop counts.")
@click.option("--max-distance", metavar="D", type=click.FloatRange(min=0),
              help="Store reachable distances above D as D (Graphormer's spatial encoding).")
@click.option("--max-n", metavar="N", type=click.IntRange(min=0),
              help="Pad to N vertices (default: the largest graph).")
@click.option("--predecessors", is_flag=True, help="Also write the predecessors (pred).")
@click.option("--progress/--no-progress", default=None,
              help="Progress bars on stderr (default: when stderr is a terminal).")
@click.pass_context
def batch(ctx, inputs, output, dtype, backend, unweighted, max_distance, max_n, predecessors, progress):
    """Solve many small graphs at once and write their padded distances to one .npz."""
    from tqdm.auto import tqdm

    from ..batch import GraphBatch, solve_batch
    from ..io import read_graph

    progress = progress_wanted(progress)
    if output.suffix.lower() != ".npz":
        raise click.UsageError(f"the output must be a .npz file, got {output}", ctx)
    if len(inputs) == 1 and inputs[0].suffix.lower() == ".npz":
        graphs = GraphBatch.load(inputs[0])
    else:
        graphs = [read_graph(p) for p in tqdm(inputs, desc="reading", unit="file", disable=not progress,
                                              leave=False, delay=1.0)]
    t0 = time.perf_counter()
    r = solve_batch(graphs, dtype=dtype, backend=backend, predecessors=predecessors, unweighted=unweighted,
                    max_n=max_n, max_distance=max_distance, progress=progress)
    seconds = time.perf_counter() - t0
    r.save(output, inputs=inputs)
    n = r.dist.shape[1]
    cycles = int(r.negative_cycle.sum())
    click.echo(f"solved {len(r):,} graphs (n <= {n}) on {r.backend} in {seconds:.3g} s: "
               f"{len(r) / seconds if seconds else 0:,.0f} graphs/s, {r.relaxations / seconds if seconds else 0:.3g} "
               f"relax/s, dtype {r.dtype.name}" + (f", {cycles} with a negative cycle" if cycles else ""))
    click.echo(f"wrote {output}")
