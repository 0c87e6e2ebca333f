"""``floydwarp solve``: shortest paths of a graph file or of a generated graph.

The command is its arguments, checked before any work, and one call of ``floydwarp.solve``;
which backend runs and where its result lives are the library's choices (a result bound for
``-o NAME.npy`` is named to the call as ``output_file``: the gpu backend keeps it on the device
and the file is written from there, the mpi ranks write their parts themselves).
"""
from __future__ import annotations

import contextlib
import json
import os
import socket
import time
from pathlib import Path

import click
from click.core import ParameterSource

from .app import (GENERATION_OPTIONS, Argument, app, describe_generation, generate_graph, generation_options,
                  parse_bytes, progress_wanted)
from .clock import Before
from .solve_report import CHECK_REFERENCE_MAX_N, PRINT_FULL_MAX_N, describe_cycles, format_matrix, run_check

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
@click.option("--generate-on", type=click.Choice(["auto", "host", "gpu"]), default="auto",
              help="Where --generate draws the graph: gpu draws the same graph as host on the GPU (milliseconds "
                   "where the host takes seconds; its edges stay in GPU memory); auto: on the GPU when --backend "
                   "gpu or --gpus solves it.")
@click.option("--backend", metavar="NAME", default="auto",
              help="auto, cpu, gpu, mpi or reference (see 'floydwarp info').")
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
              help="Run on N GPUs of this machine, a thread each in this process (no mpiexec): the multigpu "
                   "backend (-a gpu-2d, gpu-rows or rows-p2p).")
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
def solve(ctx, **given):
    """All-pairs shortest paths of a graph file or of a generated graph."""
    from ..checkpoint import stop_on_signals

    # From run.json on (_checked writes it), SIGTERM / Ctrl-C stop the run after its next round,
    # saved (exit 3), as they do once the rounds run: it can always be resumed (issue 35: a
    # SIGTERM before the first round killed it, with no checkpoint and no message)
    with stop_on_signals() if given["checkpoint"] or given["resume"] else contextlib.nullcontext():
        before = Before()
        job = _checked(ctx, given)
        gpu = _gpu_start(job)
        graph, source = _graph(job, before, gpu)
        if gpu is not None:
            waited = gpu.wait()
            if waited > 0.001:
                before.mark("gpu start", "CuPy and the CUDA context")
        import floydwarp as fw

        start = time.perf_counter()
        result = fw.solve(graph, **_call_arguments(job, graph.n))
        wall = time.perf_counter() - start
    if result is None:
        return                                       # an MPI rank other than 0: rank 0 reports
    _report(ctx, job, graph, source, result, wall, before)


# ---------------------------------------------------------------- the arguments
#: The options a checkpointed run saves beside its checkpoint, for --resume.
RUN_SETTINGS = ("input", "generate", "percent", "seed", "weights", "potential", "undirected", "dtype", "backend",
                "algorithm", "block_size", "predecessors", "distributed", "output", "checkpoint_every",
                "max_gpu_memory")
RUN_FILE = "run.json"


def _checked(ctx, given: dict) -> dict:
    """The command's settings, every combination checked before any work (a resumed run's
    settings are those it saved)."""
    from .. import numeric

    job = dict(given)
    if job["resume"] is not None:
        named = [f"--{name.replace('_', '-')}" for name in RUN_SETTINGS
                 if ctx.get_parameter_source(name) is ParameterSource.COMMANDLINE]
        if named or job["checkpoint"] is not None:
            raise click.UsageError(f"--resume continues the run saved in {job['resume']} with its own settings; "
                                   f"drop {', '.join(named) or '--checkpoint'}", ctx)
        job.update(load_run_settings(job["resume"]), checkpoint=job["resume"])
        from ..checkpoint import saved

        if not saved(job["resume"]):                   # stopped (or killed) before its first save
            click.echo(f"note: {job['resume']} holds no saved round yet: the run starts from its beginning", err=True)
            job["resume"] = None
    if (job["input"] is None) == (job["generate"] is None):
        raise click.UsageError("give a graph file INPUT or --generate N (one of them)", ctx)
    if job["input"] is not None:
        named = [f"--{name.replace('_', '-')}" for name in (*GENERATION_OPTIONS, "generate_on")
                 if ctx.get_parameter_source(name) is ParameterSource.COMMANDLINE]
        if named:
            raise click.UsageError(f"{', '.join(named)} only apply with --generate", ctx)
    if job["dtype"] != "auto":
        numeric.canonical_dtype(job["dtype"])        # refuse int8, "foo", ... before any work
    output = job["output"]
    job["npy"] = output is not None and output.suffix.lower() == ".npy"
    if output is not None:
        from ..io import check_result_path
        # now, not after the solve: a format, folder or input the write would refuse
        check_result_path(output, inputs=_inputs(job))
    if job["distributed"] and job["backend"] not in ("auto", "mpi"):
        raise click.UsageError(f"--distributed runs the mpi backend, not {job['backend']!r}", ctx)
    if job["parallel_write"] and not (job["distributed"] and job["npy"]):
        raise click.UsageError("--parallel-write needs --distributed and -o NAME.npy (the file every rank writes "
                               "into)", ctx)
    if job["gpus"] is not None and (job["distributed"] or job["backend"] not in ("auto", "multigpu")):
        raise click.UsageError("--gpus runs a thread per GPU of this machine (the multigpu backend); under "
                               "mpiexec use --distributed -a gpu-2d instead", ctx)
    if job["max_gpu_memory"] is not None:
        job["max_gpu_bytes"] = parse_bytes(job["max_gpu_memory"], "--max-gpu-memory")
    job["rank_gpu"] = _rank_gpu(job)
    if job["checkpoint"] is not None and job["resume"] is None:
        save_run_settings(job["checkpoint"], {k: job[k] for k in RUN_SETTINGS})
    return job


def _inputs(job) -> tuple:
    return () if job["input"] is None else (job["input"],)


def _rank_gpu(job) -> int | None:
    """Under --distributed with a GPU algorithm: the GPU this rank drives (its index among the
    ranks of its node, as the mpi backend picks it), where its graph is generated; else None.
    Read from the launcher where it says, so that MPI starts later, once CuPy's import has
    begun (:func:`_gpu_start`); else asked of MPI."""
    if not job["distributed"]:
        return None
    from ..mpi import GPU_ALGORITHMS
    from ..mpi.comm import local_rank

    if job["algorithm"] not in GPU_ALGORITHMS:
        return None
    return local_rank()


def _solves_on_gpu(job) -> bool:
    return job["backend"] == "gpu" or job["gpus"] is not None or job["rank_gpu"] is not None


def _on_gpu(job) -> bool:
    """Whether --generate draws the graph on the GPU."""
    if job["generate"] is None or job["generate_on"] == "host":
        return False
    if job["generate_on"] == "gpu":
        return True
    if not _solves_on_gpu(job):
        return False
    from ..gpu.generate import unsupported      # (the gpu package: not imported by a CPU run)

    return unsupported(_weights(job)) is None


def _weights(job):
    from .app import parse_weights

    return parse_weights(job["weights"])


def _gpu_start(job):
    """The GPU's start (CuPy, the CUDA context, the generator's kernels) in a thread of its
    own, for a run that names the GPU: it goes on while the graph is read or generated."""
    if not _solves_on_gpu(job) and not _on_gpu(job):
        return None
    from ..gpu.warm import Start
    from ..gpu.generate import MODULE

    modules = [MODULE] if _on_gpu(job) else []
    if job["gpus"] is not None:
        return Start(modules, gpus=job["gpus"], backend="multigpu")
    if job["rank_gpu"] is not None:
        return Start(modules, first=job["rank_gpu"], backend="mpi")
    return Start(modules)


def _graph(job, before, gpu):
    """The graph and how the output names it: read from INPUT, or generated."""
    if job["input"] is not None:
        from ..io import read_graph

        graph = read_graph(job["input"])
        before.mark("read")
        return graph, str(job["input"])
    on_gpu = _on_gpu(job)
    if on_gpu and gpu is not None and gpu.wait() > 0.001:
        before.mark("gpu start", "CuPy and the CUDA context")
    if on_gpu and job["generate_on"] == "auto":
        from ..gpu.device import probe

        on_gpu = probe() is None                     # no GPU here: the solve says why
    if on_gpu and job["rank_gpu"] is not None:
        import cupy

        cupy.cuda.Device(job["rank_gpu"]).use()      # the rank's own GPU, where its block is built
    graph = generate_graph(job["generate"], job["percent"], job["seed"], job["weights"], job["potential"],
                           job["undirected"], device=on_gpu)
    before.mark("generate", "on the GPU" if on_gpu else "on the host")
    source = describe_generation(job["percent"], job["seed"], job["weights"], job["potential"], job["undirected"])
    return graph, source


def _call_arguments(job, n: int) -> dict:
    """The keyword arguments of the ``floydwarp.solve`` call for a graph of n vertices."""
    backend, algorithm = job["backend"], job["algorithm"]
    if job["vectorize"]:
        from ..registry import vectorized_variant

        backend, algorithm = vectorized_variant(backend, algorithm, n)
    options = {}
    if job["distributed"]:
        backend = "mpi"
        announce_ranks()
    if job["gpus"] is not None:
        backend = "multigpu"
        options["gpus"] = job["gpus"]
    if job["workdir"] is not None:
        options["workdir"] = job["workdir"]
    if job.get("max_gpu_bytes") is not None:
        options["max_gpu_memory"] = job["max_gpu_bytes"]
    if job["output"] is None and not (job["check"] or job["verbose"]):
        # The command prints a summary and reads no entry on the host: the gpu backend leaves
        # the matrix in GPU memory.  A host copy of n = 32768 (4.3 GB, page-locked for the
        # DMA) cost 0.6 s to unlock and unmap at the end, a quarter of the compute.
        options["output"] = "device"
    if job["npy"]:
        # where the result goes: the backend may write it there itself (mpi ranks) or keep it
        # where the file is written from (the gpu backend keeps it on the device)
        options["output_file"] = job["output"]
        if job["distributed"]:
            options["parallel_write"] = True if job["parallel_write"] else None
    if job["checkpoint"] is not None:
        options.update(checkpoint=job["checkpoint"], checkpoint_every=job["checkpoint_every"], resume=job["resume"])
    return dict(dtype=job["dtype"], backend=backend, algorithm=algorithm, predecessors=job["predecessors"],
                block_size=job["block_size"], threads=job["threads"], progress=progress_wanted(), **options)


def _report(ctx, job, graph, source, result, wall, before):
    from ..bench.report import format_rate, format_seconds   # the bench package: only when printing

    echo = click.echo
    echo(f"input:     {source}")
    echo(f"n:         {result.n:,}")
    echo(f"edges:     {graph.num_edges:,}")
    echo(f"dtype:     {result.dtype.name}")
    echo(f"backend:   {result.backend}/{result.algorithm}")
    echo(f"before:    {before.line(format_seconds)}")
    echo(f"time:      {format_seconds(wall)} (compute {format_seconds(result.compute_time)})")
    echo(f"stages:    {', '.join(f'{k} {format_seconds(v)}' for k, v in result.timings.items())}")
    echo(f"rate:      {format_rate(result.relaxations_per_second)} (n^3 / compute time)")
    echo(f"negative cycle: {describe_cycles(result)}")
    failed = job["check"] and not run_check(result, graph)
    output = job["output"]
    if output is not None:
        written_by = result.metadata.get("written_by_ranks") if result.metadata.get("output_file") == str(output) \
            else None
        if written_by is None:
            from ..io import write_result
            write_result(result, output, inputs=_inputs(job))
        echo(f"output:    {output}" + (f" (written by {written_by} ranks)" if written_by else ""))
    if job["verbose"]:
        echo(format_matrix(result))
    if failed:
        ctx.exit(1)


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


def announce_ranks():
    """One stderr line from rank 0 mapping ranks to processes, so that a launcher's report of a
    dead PID names the rank."""
    from ..mpi.comm import world

    comm = world()
    table = comm.gather(f"{comm.Get_rank()}:{os.getpid()}@{socket.gethostname()}", root=0)
    if comm.Get_rank() == 0:
        click.echo(f"floydwarp: {comm.Get_size()} MPI ranks (rank:pid@host) {' '.join(table)}", err=True)
