"""``floydwarp batch``: many small graphs at once, into one padded ``.npz``."""
from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated, Optional

import typer

from .app import UsageError, app


@app.command(short_help="Solve many small graphs at once (graph learning, chemistry) into one .npz.", epilog=(
    "INPUT is many graph files (any format 'floydwarp solve' reads, one graph each) or one .npz batch: PyG "
    "arrays edge_index with ptr or batch (and edge_weight), or graphs (B, N, N) with sizes.  The output .npz "
    "holds dist (B, N, N; unreachable and padding at the dtype's INF: inf, or 255 for uint8), sizes, "
    "negative_cycle and, with --predecessors, pred; floydwarp.BatchResult.load reads it.  Example: floydwarp "
    "batch mols.npz --unweighted --max-distance 20 -o spatial.npz"))
def batch(
    ctx: typer.Context,
    inputs: Annotated[list[Path], typer.Argument(
        metavar="INPUT...", exists=True, dir_okay=False, show_default=False,
        help="Graph files, or one .npz batch.")],
    output: Annotated[Path, typer.Option(
        "--output", "-o", metavar="FILE.npz", dir_okay=False, show_default=False, help="The .npz to write.")],
    dtype: Annotated[str, typer.Option("--dtype", metavar="TYPE",
                                       help="auto, uint8, int16, int32, int64, float32 or float64.")] = "auto",
    backend: Annotated[str, typer.Option("--backend", metavar="NAME", help="auto, cpu or gpu.")] = "auto",
    unweighted: Annotated[bool, typer.Option("--unweighted", help="Every edge weighs 1: hop counts.")] = False,
    max_distance: Annotated[Optional[float], typer.Option(
        "--max-distance", metavar="D", min=0, show_default=False,
        help="Store reachable distances above D as D (Graphormer's spatial encoding).")] = None,
    max_n: Annotated[Optional[int], typer.Option(
        "--max-n", metavar="N", min=0, show_default=False, help="Pad to N vertices (default: the largest graph).")] = None,
    predecessors: Annotated[bool, typer.Option("--predecessors", help="Also write the predecessors (pred).")] = False,
    progress: Annotated[bool, typer.Option("--progress/--no-progress", help="Progress bars.")] = True,
):
    """Solve many small graphs at once and write their padded distances to one .npz."""
    from tqdm.auto import tqdm

    from ..batch import GraphBatch, solve_batch
    from ..io import read_graph

    if output.suffix.lower() != ".npz":
        raise UsageError(f"the output must be a .npz file, got {output}", ctx)
    if len(inputs) == 1 and inputs[0].suffix.lower() == ".npz":
        graphs = GraphBatch.load(inputs[0])
    else:
        graphs = [read_graph(p) for p in tqdm(inputs, desc="reading", unit="file", disable=not progress,
                                              leave=False, delay=1.0)]
    t0 = time.perf_counter()
    cap = None if max_distance is None else (int(max_distance) if max_distance == int(max_distance) else max_distance)
    r = solve_batch(graphs, dtype=dtype, backend=backend, predecessors=predecessors, unweighted=unweighted,
                    max_n=max_n, max_distance=cap, progress=progress)
    seconds = time.perf_counter() - t0
    r.save(output, inputs=inputs)
    n = r.dist.shape[1]
    cycles = int(r.negative_cycle.sum())
    typer.echo(f"solved {len(r):,} graphs (n <= {n}) on {r.backend} in {seconds:.3g} s: "
               f"{len(r) / seconds if seconds else 0:,.0f} graphs/s, {r.relaxations / seconds if seconds else 0:.3g} "
               f"relax/s, dtype {r.dtype.name}" + (f", {cycles} with a negative cycle" if cycles else ""))
    typer.echo(f"wrote {output}")
