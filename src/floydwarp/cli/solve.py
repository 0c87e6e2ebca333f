"""``floydwarp solve``: shortest paths of a graph file or of a generated graph."""
from __future__ import annotations

import json
import os
import socket
import sys
import time
from pathlib import Path

import click
import numpy as np
from click.core import ParameterSource

from .. import registry
from .app import (GENERATION_OPTIONS, Argument, app, describe_generation, generate_graph, generation_options,
                  parse_bytes)

#: --check recomputes with the reference backend up to this n, with the cpu backend above it.
CHECK_REFERENCE_MAX_N = 3000
#: -V prints the whole matrix up to this n, else its corners.
PRINT_FULL_MAX_N = 12
PRINT_EDGE = 4
MAX_LISTED = 10

FORMATS = ".in (NTHU homework), .gr (DIMACS), .mtx, .csv/.tsv/.txt (edge lists), .npy, .npz"


@app.command(short_help="Shortest paths of a graph file or a random graph.", epilog=(
    "Exit status: 0 when solved (a negative cycle is reported, not an error), 1 when --check finds "
    "a mismatch, 2 for a bad option or value, 3 when stopped by SIGTERM/Ctrl-C after saving a checkpoint, "
    "4 when the device fails ('floydwarp --help' lists them all)."))
@click.argument("input", cls=Argument, required=False, type=click.Path(exists=True, dir_okay=False, path_type=Path),
                description=f"Graph file; its format is chosen by extension: {FORMATS}.")
@click.option("--generate", "-g", metavar="N", type=click.IntRange(min=0),
              help="Solve a random graph of N vertices instead of INPUT (with -p, -s, --weights, ...).")
@generation_options
@click.option("--dtype", metavar="TYPE", default="auto",
              help="Distance type: auto, int16, int32, int64, float32 or float64.  auto takes the narrowest "
                   "that provably holds every shortest path; a type that cannot is refused.")
@click.option("--backend", metavar="NAME", default="auto", help="auto, cpu, gpu, mpi or reference (see 'floydwarp info').")
@click.option("--algorithm", "-a", metavar="NAME", default="auto",
              help="The backend's algorithm (see 'floydwarp info'); auto is its default.")
@click.option("--block-size", "-b", metavar="B", type=click.IntRange(min=1),
              help="Tile size of blocked algorithms (default: the backend's tuned value).")
@click.option("--threads", metavar="T", type=click.IntRange(min=1), help="CPU threads (default: all).")
@click.option("--vectorize", "-v", is_flag=True,
              help="Use the vectorized variant of the GPU algorithm (-a blocked -v runs blocked-vec).  The CPU "
                   "kernels are vectorized already: on the CPU -v changes nothing.")
@click.option("--predecessors", is_flag=True,
              help="Also compute the predecessor matrix (routes), written with --output.")
@click.option("--check", "-c", is_flag=True,
              help=f"Recompute with the reference backend (the cpu backend for n > {CHECK_REFERENCE_MAX_N}), print "
                   "'check: match' or the first mismatches, and the result's Fletcher-16 checksum.")
@click.option("--verbose", "-V", is_flag=True,
              help=f"Print the distance matrix (its corners when n > {PRINT_FULL_MAX_N}).")
@click.option("--distributed", is_flag=True,
              help="Run as one rank of an MPI job (mpiexec -n P floydwarp solve ... --distributed): the mpi "
                   "backend; rank 0 prints and writes the result.")
@click.option("--gpus", metavar="N", type=click.IntRange(min=1),
              help="Run on N GPUs of this machine, one worker process each, started by floydwarp itself (no "
                   "mpiexec): the multigpu backend (-a gpu-2d, gpu-rows or rows-p2p).")
@click.option("--output", "-o", metavar="OUT", type=click.Path(dir_okay=False, path_type=Path),
              help="Write the result here; format by extension (.npz keeps everything, .out is the NTHU binary).")
@click.option("--parallel-write", is_flag=True,
              help="With --distributed and -o NAME.npy: every rank writes its part of the result into the file "
                   "even when rank 0 could gather it (it does so anyway when the result does not fit in rank 0's "
                   "memory).")
@click.option("--workdir", metavar="DIR", type=click.Path(exists=True, file_okay=False, path_type=Path),
              help="Keep the matrix in memory-mapped files in DIR (for matrices larger than RAM; cpu blocked, gpu "
                   "out of core); the distances end in DIR/dist.npy.")
@click.option("--max-gpu-memory", metavar="BYTES",
              help="Use at most this much GPU memory (e.g. 4GB, 512MiB, 4e9); a matrix that does not fit streams "
                   "through the GPU from host memory (gpu fast / out-of-core).")
@click.option("--checkpoint", metavar="DIR", type=click.Path(file_okay=False, path_type=Path),
              help="Save the run's state in DIR at round boundaries (cpu blocked, mpi blocked-2d, gpu fast and "
                   "out-of-core: the matrix then lives in host memory); SIGTERM or Ctrl-C then stop after saving.")
@click.option("--checkpoint-every", metavar="SECONDS", type=click.FloatRange(min=0),
              help="Seconds between checkpoints (default: only when stopped by a signal).")
@click.option("--resume", metavar="DIR", type=click.Path(exists=True, file_okay=False, path_type=Path),
              help="Finish the run checkpointed in DIR, with the settings it was started with.")
@click.pass_context
def solve(ctx, input, generate, percent, seed, weights, potential, undirected, dtype, backend, algorithm, block_size,
          threads, vectorize, predecessors, check, verbose, distributed, gpus, output, parallel_write, workdir,
          max_gpu_memory, checkpoint, checkpoint_every, resume):
    """All-pairs shortest paths of a graph file or of a generated graph."""
    import floydwarp as fw
    from .. import numeric

    if resume is not None:
        given = [f"--{name.replace('_', '-')}" for name in RUN_SETTINGS
                 if ctx.get_parameter_source(name) is ParameterSource.COMMANDLINE]
        if given or checkpoint is not None:
            raise click.UsageError(f"--resume continues the run saved in {resume} with its own settings; "
                             f"drop {', '.join(given) or '--checkpoint'}", ctx)
        saved = load_run_settings(resume)
        (input, generate, percent, seed, weights, potential, undirected, dtype, backend, algorithm,
         block_size, predecessors, distributed, output, checkpoint_every, max_gpu_memory) = (
            saved.get(k) for k in RUN_SETTINGS)
        checkpoint = resume
    if (input is None) == (generate is None):
        raise click.UsageError("give a graph file INPUT or --generate N (one of them)", ctx)
    if input is not None:
        given = [f"--{name}" for name in GENERATION_OPTIONS
                 if ctx.get_parameter_source(name) is ParameterSource.COMMANDLINE]
        if given:
            raise click.UsageError(f"{', '.join(given)} only apply with --generate", ctx)
    if dtype != "auto":
        numeric.canonical_dtype(dtype)               # refuse int8, "foo", ... before any work
    if output is not None:
        from ..io import check_result_path
        # now, not after the solve: a format, folder or input the write would refuse
        check_result_path(output, inputs=() if input is None else (input,))

    if input is not None:
        from ..io import read_graph
        graph = read_graph(input)
        source = str(input)
    else:
        graph = generate_graph(generate, percent, seed, weights, potential, undirected)
        source = describe_generation(percent, seed, weights, potential, undirected)
    if vectorize:
        backend, algorithm = vectorized_variant(backend, algorithm, graph.n)
    if distributed:
        if backend not in ("auto", "mpi"):
            raise click.UsageError(f"--distributed runs the mpi backend, not {backend!r}", ctx)
        backend = "mpi"
        announce_ranks()

    options = {} if workdir is None else {"workdir": workdir}
    if max_gpu_memory is not None:
        options["max_gpu_memory"] = parse_bytes(max_gpu_memory, "--max-gpu-memory")
    if parallel_write and not (distributed and output is not None and output.suffix.lower() == ".npy"):
        raise click.UsageError("--parallel-write needs --distributed and -o NAME.npy (the file every rank writes into)", ctx)
    if distributed and output is not None and output.suffix.lower() == ".npy":
        # the ranks write this file themselves when rank 0 cannot gather the result (or with --parallel-write)
        options.update(output_file=output, parallel_write=True if parallel_write else None)
    if gpus is not None:
        if distributed or backend not in ("auto", "multigpu"):
            raise click.UsageError("--gpus runs a thread per GPU of this machine (the multigpu backend); under "
                                   "mpiexec use --distributed -a gpu-2d instead", ctx)
        backend = "multigpu"
        options["gpus"] = gpus
    if output is not None and output.suffix.lower() == ".npy" and not distributed \
            and registry.resolve_backend(backend, graph.n) == "gpu":
        # the result stays on the device and streams from there into the file (io/npy.save):
        # no full copy of it is made in host memory
        options["output"] = "device"
    if checkpoint is not None:
        if resume is None:
            save_run_settings(checkpoint, dict(
                input=input, generate=generate, percent=percent, seed=seed, weights=weights, potential=potential,
                undirected=undirected, dtype=dtype, backend=backend, algorithm=algorithm, block_size=block_size,
                predecessors=predecessors, distributed=distributed, output=output, checkpoint_every=checkpoint_every,
                max_gpu_memory=max_gpu_memory))
        options.update(checkpoint=checkpoint, checkpoint_every=checkpoint_every, resume=resume)
    start = time.perf_counter()
    result = fw.solve(graph, dtype=dtype, backend=backend, algorithm=algorithm, predecessors=predecessors,
                      block_size=block_size, threads=threads, progress=progress_wanted(), **options)
    wall = time.perf_counter() - start
    if result is None:
        return                                       # an MPI rank other than 0: rank 0 reports

    from ..bench.report import format_rate, format_seconds   # the bench package: only when printing

    echo = click.echo
    echo(f"input:     {source}")
    echo(f"n:         {result.n:,}")
    echo(f"edges:     {graph.num_edges:,}")
    echo(f"dtype:     {result.dtype.name}")
    echo(f"backend:   {result.backend}/{result.algorithm}")
    echo(f"time:      {format_seconds(wall)} (compute {format_seconds(result.compute_time)})")
    echo(f"stages:    {', '.join(f'{k} {format_seconds(v)}' for k, v in result.timings.items())}")
    echo(f"rate:      {format_rate(result.relaxations_per_second)} (n^3 / compute time)")
    echo(f"negative cycle: {describe_cycles(result)}")

    failed = False
    if check:
        failed = not run_check(result, graph)
    if output is not None:
        written_by = result.metadata.get("written_by_ranks") if result.metadata.get("output_file") == str(output) else None
        if written_by is None:
            from ..io import write_result
            write_result(result, output, inputs=() if input is None else (input,))
        echo(f"output:    {output}" + (f" (written by {written_by} ranks)" if written_by else ""))
    if verbose:
        echo(format_matrix(result))
    if failed:
        ctx.exit(1)


# ---------------------------------------------------------------- pieces
#: The options a checkpointed run saves beside its checkpoint, for --resume.
RUN_SETTINGS = ("input", "generate", "percent", "seed", "weights", "potential", "undirected", "dtype", "backend",
                "algorithm", "block_size", "predecessors", "distributed", "output", "checkpoint_every",
                "max_gpu_memory")
RUN_FILE = "run.json"


def save_run_settings(folder: Path, settings: dict):
    """Write the run's settings beside its checkpoint (paths made absolute)."""
    from ..io.atomic import atomic_path

    folder.mkdir(parents=True, exist_ok=True)
    plain = {k: str(v.resolve()) if isinstance(v, Path) else v for k, v in settings.items()}
    with atomic_path(folder / RUN_FILE) as tmp:
        tmp.write_text(json.dumps(plain, indent=1))


def load_run_settings(folder: Path) -> dict:
    from ..errors import FloydwarpError

    try:
        saved = json.loads((folder / RUN_FILE).read_text())
    except (OSError, ValueError) as exc:
        raise FloydwarpError(f"{folder}: no run to resume ({RUN_FILE} missing or unreadable: {exc})") from exc
    saved = {k: saved.get(k) for k in RUN_SETTINGS}
    for key in ("input", "output"):
        saved[key] = None if saved[key] is None else Path(saved[key])
    return saved


def progress_wanted() -> bool:
    """A progress bar (tqdm, with ETA) only on a terminal: nothing extra in pipes, files and logs."""
    return sys.stderr.isatty()


def announce_ranks():
    """One stderr line from rank 0 mapping ranks to processes, so that a launcher's report of a
    dead PID names the rank."""
    from ..mpi.comm import world

    comm = world()
    table = comm.gather(f"{comm.Get_rank()}:{os.getpid()}@{socket.gethostname()}", root=0)
    if comm.Get_rank() == 0:
        click.echo(f"floydwarp: {comm.Get_size()} MPI ranks (rank:pid@host) {' '.join(table)}", err=True)


def vectorized_variant(backend: str, algorithm: str, n: int) -> tuple[str, str]:
    """Seed 000's -v: the ``<algorithm>-vec`` variant where the backend has vectorized variants."""
    from .. import registry
    from ..errors import FloydwarpError

    name = registry.resolve_backend(backend, n)
    impls = registry.algorithms(name)
    variants = [i.algorithm for i in impls if i.algorithm.endswith("-vec")]
    if not variants:                                  # e.g. the CPU: nothing to switch
        return name, algorithm
    base = next(i.algorithm for i in impls if i.default) if algorithm == "auto" else algorithm
    if base.endswith("-vec"):
        return name, base
    if f"{base}-vec" in variants:
        return name, f"{base}-vec"
    bases = ", ".join(f"-a {v.removesuffix('-vec')}" for v in variants)
    raise FloydwarpError(f"{name}/{base} has no vectorized variant; -v works with {bases}")


def describe_cycles(result) -> str:
    if not result.has_negative_cycle:
        return "none"
    vertices = [result.label(int(v)) for v in result.negative_cycle_vertices]
    listed = ", ".join(map(str, vertices[:MAX_LISTED]))
    more = f", ... ({len(vertices)} vertices)" if len(vertices) > MAX_LISTED else ""
    return f"yes, through vertices [{listed}{more}]; pairs it reaches have no shortest path"


def run_check(result, graph) -> bool:
    """Recompute independently, print the verdict and the checksum; True when they match."""
    import floydwarp as fw
    from ..checksum import checksum, format_checksum

    # Above the reference's reach, check with a cpu algorithm other than the one being checked.
    if result.n <= CHECK_REFERENCE_MAX_N:
        check_backend, check_algorithm = "reference", "auto"
    else:
        same = result.backend == "cpu" and result.algorithm == "blocked"
        check_backend, check_algorithm = "cpu", "rows" if same else "blocked"
    # a result narrowed to a storage dtype (uint8 hop counts) is checked against the auto choice
    dtype = result.dtype.name if result.dtype.name in fw.DTYPES else "auto"
    expected = fw.solve(graph, dtype=dtype, backend=check_backend, algorithm=check_algorithm,
                        progress=progress_wanted())
    count, first = mismatches(result, expected, exact=graph.weight_stats().integral)
    against = f"{expected.backend}/{expected.algorithm}"
    if count == 0:
        click.echo(f"check:     match ({against}, {result.dtype.name})")
    else:
        click.echo(f"check:     MISMATCH in {count:,} entries against {against}; first {len(first)} (i, j, got, expected):")
        for i, j, got, exp in first:
            click.echo(f"  {i} {j} {got} {exp}")
    click.echo(f"checksum:  {format_checksum(checksum(result))} (Fletcher-16 of the int64 distances)")
    return count == 0


def mismatches(result, expected, *, exact=True, limit=MAX_LISTED):
    """How many entries differ, and the first ``limit`` as (i, j, got, expected).

    ``exact``: compare exactly (integer weights); else float results may differ by rounding.
    Entries with a negative cycle on the way have no defined value (it depends on the
    order of the updates): there only reachability is compared.
    """
    from ..arrays import to_host

    got_d, exp_d = result.dist, expected.dist
    cycles = result.negative_cycles
    n = result.n
    exact = exact or result.dtype.kind in "iu"
    rtol = 1e-5 if result.dtype == np.float32 else 1e-12
    rows = max(1, (16 << 20) // (8 * max(n, 1)))
    count, first = 0, []
    for s in range(0, n, rows):
        g, e = to_host(got_d[s:s + rows]), to_host(exp_d[s:s + rows])
        # reachability first: the two results' INF may differ (uint8 hop counts against int16)
        reached = g < result.inf
        same = (g == e) if exact else np.isclose(g, e, rtol=rtol, atol=0)
        bad = (reached != (e < expected.inf)) | (reached & ~same)
        if cycles:
            through = (cycles.reach_to[:, s:s + rows].T.astype(np.float32)
                       @ cycles.reach_from.astype(np.float32)) > 0
            bad = np.where(through, (g < result.inf) != (e < expected.inf), bad)
        count += int(bad.sum())
        for i, j in np.argwhere(bad)[:limit - len(first)]:
            first.append((s + int(i), int(j), _cell(g[i, j], result.inf), _cell(e[i, j], expected.inf)))
    if sorted(result.negative_cycle_vertices.tolist()) != sorted(expected.negative_cycle_vertices.tolist()):
        count += 1
    return count, first


def _cell(value, inf) -> str:
    if not value < inf:
        return "inf"
    return str(int(value)) if float(value).is_integer() else f"{float(value):.6g}"


def format_matrix(result) -> str:
    """The distance matrix as text: 'inf' unreachable, '-inf' through a negative cycle; corners when large."""
    from ..arrays import to_host

    n = result.n
    if n <= PRINT_FULL_MAX_N:
        idx = list(range(n))
    else:
        idx = list(range(PRINT_EDGE)) + [None] + list(range(n - PRINT_EDGE, n))
    real = [i for i in idx if i is not None]
    sub = to_host(result.dist[np.ix_(real, real)]) if real else np.zeros((0, 0))
    pos = {v: k for k, v in enumerate(real)}

    def cell(i, j):
        if i is None or j is None:
            return "..."
        if result.has_negative_cycle and result.negative_cycles.affects(i, j) and sub[pos[i], pos[j]] < result.inf:
            return "-inf"
        return _cell(sub[pos[i], pos[j]], result.inf)

    header = [""] + ["..." if j is None else str(result.label(j)) for j in idx]
    table = [header] + [["..." if i is None else str(result.label(i))] + [cell(i, j) for j in idx] for i in idx]
    width = max(len(c) for row in table for c in row)
    lines = [" ".join(c.rjust(width) for c in row) for row in table]
    if n > PRINT_FULL_MAX_N:
        lines.append(f"(first and last {PRINT_EDGE} of {n:,} rows and columns)")
    return "distances:\n" + "\n".join(lines)
