"""``floydwarp bench [STUDY]``: time backends and algorithms; studies with plots and reports."""
from __future__ import annotations

from pathlib import Path

import click
from click.core import ParameterSource

from .app import Argument, app, command_line, parse_sizes, percent_option, seed_option, split_names

#: one line per study for --help (the modules in floydwarp.bench.studies say more): every name of
#: floydwarp.bench.STUDIES in its order (a test checks), here so that starting any command does not
#: import the bench package
STUDY_HELP = {
    "run": "every backend x algorithm x size x dtype x block size asked for, SciPy side by side (a table; "
           "files only with --out)",
    "sizes": "time and relax/s vs n for every backend and algorithm, SciPy included; the CPU/GPU crossover",
    "kernels": "every algorithm of one backend (default gpu) at one n: time, GB/s, relax/s, % of the ceilings",
    "block-size": "rate vs tile size (or a plan option such as the GPU's R) for a backend's algorithms",
    "budget": "the largest n solved within each time budget (doubling, then bisection), and how far memory goes",
    "threads": "CPU speedup and efficiency vs threads (cpu blocked and rows)",
    "scaling": "MPI ranks (mpiexec), or GPUs with --gpus 1,2,4: strong and weak scaling, speedup, efficiency, "
               "communication; on GPUs end to end, with the round timeline",
    "breakdown": "where the time goes: file read, host->device, phases, device->host, file write",
    "ceilings": "measure the copy bandwidth and add-min rate: the roofline lines of the other plots",
    "networkx": "NetworkX's closeness, average path length and eccentricity: nx.f(G, backend='floydwarp') vs "
                "NetworkX itself on sparse and dense graphs (default --sizes 1000,5000,20000)",
    "batch": "many molecule-sized graphs at once vs per-graph loops (SciPy, Graphormer's Cython with "
             "-O graphormer=PATH, floydwarp's solve): graphs/s, from every input form, and the graph-learning "
             "drop-ins (Graphormer collate, DGL shortest_dist, the PyG transform); -O parts=pyg,inputs,learn",
    "networkx-stages": "every NetworkX function on the backend, first and second call split into convert, solve, "
                       "reduce, build and dispatch (default --sizes 2000)",
    "small": "microseconds a call on small graphs (n = 1..64 and a mix of 10..40): fw.floyd_warshall, fw.solve "
             "and SciPy, dense, CSR and edge arrays",
    "startup": "the user's wall time on the CPU: the call in process, the CLI as a process, the first run after "
               "install, the floor of any Numba process, each kernel's cold compile (--part to choose)",
    "inputs": "getting a graph: erdos_renyi, Graph.from_edges (sorted or shuffled, int64 or int32), reading a "
              "text edge list (default --sizes 8192)",
    "panel": "out of core on the GPU: panel product rate per dtype (--n M, K = M/4) and pinned PCIe copies",
}

#: options that only some studies use (an option given to another study is refused)
STUDY_OPTIONS = {
    "--n": ("kernels", "block-size", "budget", "threads", "scaling", "startup", "panel"),
    "--sizes": ("run", "sizes", "block-size", "breakdown", "networkx", "networkx-stages", "small", "inputs"),
    "--ranks": ("scaling",),
    "--gpus": ("scaling",),
    "--mode": ("scaling",),
    "--budgets": ("budget",),
    "--sweep": ("block-size",),
    "--max-seconds": ("sizes", "networkx"),
    "--graph": ("sizes", "kernels", "block-size", "budget"),
    "--real-weights": ("sizes", "kernels", "block-size", "budget"),
    "--file-formats": ("breakdown",),
    "--batches": ("batch",),
    "--part": ("startup",),
}


def _study_list() -> str:
    return "; ".join(f"{name}: {line}" for name, line in STUDY_HELP.items())


def parse_value(text: str):
    """An option value: int, float, true/false, else the text."""
    low = text.lower()
    if low in ("true", "yes", "on"):
        return True
    if low in ("false", "no", "off"):
        return False
    for conv in (int, float):
        try:
            return conv(text)
        except ValueError:
            pass
    return text


def parse_options(values) -> dict:
    options = {}
    for item in values or ():
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise click.BadParameter(f"expected KEY=VALUE, got {item!r}", param_hint="'--option'")
        options[key.strip()] = parse_value(value.strip())
    return options


def parse_sweep(text: str) -> dict:
    name, sep, values = text.partition("=")
    name = name.strip().replace("-", "_")
    if not sep or not name or not values:
        raise click.BadParameter(f"expected NAME=V,V,... (like R=1,2,4,8 or block_size=32,64), got {text!r}",
                                 param_hint="'--sweep'")
    return {"name": name, "values": [parse_value(v) for v in values.replace(" ", "").split(",") if v]}


def parse_floats(text: str, option: str) -> list[float]:
    try:
        values = [float(v) for v in text.replace(" ", "").split(",") if v]
    except ValueError:
        raise click.BadParameter(f"expected numbers separated by commas, got {text!r}",
                                 param_hint=f"'{option}'") from None
    if not values or min(values) <= 0:
        raise click.BadParameter(f"expected positive numbers separated by commas, got {text!r}",
                                 param_hint=f"'{option}'")
    return values


@app.command(short_help="Benchmark studies: time, rate, scaling, plots and reports.", epilog=(
    "Times are medians of --repeats runs after a warm-up run (so JIT/NVRTC compilation is excluded); 'time' "
    "is the whole solve() call, 'compute' the kernels alone, relax/s = n^3 / compute, 'vs SciPy' = SciPy's "
    "time / time (same graph, same run), GB/s = the algorithm's traffic model / compute.  Every study but "
    "'run' writes into --out (default bench/results/STUDY-TIMESTAMP/): STUDY.json (records, environment, seed, "
    "versions, clocks, the command), STUDY.csv, PNG plots and report.md; 'floydwarp report' redraws them from "
    "the JSON.  Examples: floydwarp bench sizes --sizes 256,512,1024,2048 -a all;  floydwarp bench kernels "
    "--n 8192;  floydwarp bench block-size --backend gpu -a pseudo-blocked --sweep R=1,2,4,8;  floydwarp bench "
    "budget --budgets 2,60;  floydwarp bench scaling --ranks 1,2,4 --n 1024."))
@click.argument("study", cls=Argument, default="run", description=f"What to measure.  {_study_list()}.")
@click.option("--backend", metavar="NAME", multiple=True,
              help="Backend to time (repeat or comma-separate; default: those --backend auto can pick; kernels: "
                   "gpu; threads: cpu; scaling: mpi).")
@click.option("--algorithm", "-a", metavar="NAME", multiple=True,
              help="Algorithm (repeat or comma-separate; auto: each backend's default; all: every one).  Default: "
                   "auto for run and budget, all for sizes and kernels, the blocked ones for block-size, blocked "
                   "and rows for threads, blocked-2d and rows for scaling.")
@click.option("--sizes", metavar="N,N,...",
              help="Vertex counts (run, sizes, block-size, breakdown; default 256,512,1024,2048).")
@click.option("--n", metavar="N", type=click.IntRange(min=1),
              help="The one size of kernels (default 8192 on a GPU, 1024 on the CPU), block-size (same), threads "
                   "(2048), scaling (n at one rank; default 1024) and the start of budget's doubling (256).")
@click.option("--dtype", metavar="TYPE", multiple=True,
              help="Distance type (repeat or comma-separate; default int32).")
@click.option("--block-size", "-b", metavar="B,B,...",
              help="Tile sizes: several for run and block-size (its sweep), one for the others (default: each "
                   "implementation's own).")
@click.option("--sweep", metavar="NAME=V,V,...",
              help="block-size: sweep this plan option instead of the tile size, e.g. R=1,2,4,8 (gpu "
                   "pseudo-blocked) or threads_per_block=64,128,256,512 (gpu work-per-thread, grid-sync).")
@click.option("--option", "-O", metavar="KEY=VALUE", multiple=True,
              help="A backend option passed to every solve (repeatable), e.g. -O R=8 or -O output=host.")
@click.option("--threads", metavar="T[,T...]",
              help="CPU threads (default: all); threads study: the counts to try (default 1..cores); scaling: per "
                   "rank (default 1).")
@click.option("--ranks", metavar="P,P,...", help="scaling: MPI process counts (default 1,2,4).")
@click.option("--gpus", metavar="P,P,...", help="scaling: GPU counts instead of MPI ranks (one GPU is the baseline).")
@click.option("--mode", metavar="strong|weak", multiple=True,
              help="scaling: strong (fixed n) and/or weak (n^3/P fixed: n_P = n * P^(1/3)); default both.")
@click.option("--budgets", metavar="S,S,...", help="budget: wall-time budgets in seconds (default 2,60).")
@click.option("--max-seconds", metavar="S", type=click.FloatRange(min=0),
              help="sizes: skip a case predicted (its time at the previous n, x n^3) to take longer than S per "
                   "solve, and the larger sizes after it (default 10).")
@click.option("--graph", metavar="host|device",
              help="Where the gpu cases' random graphs are made: host (erdos_renyi, uploaded; the default) or "
                   "device (built by CuPy on the GPU: no n^2 host work, for n in the tens of thousands).")
@click.option("--real-weights", is_flag=True,
              help="Random graphs with weights drawn uniformly from [1, 16) as reals instead of the integers 1..16 "
                   "(float runs without integer arithmetic).")
@click.option("--file-formats", metavar="GRAPH,RESULT",
              help="breakdown: the graph and result file extensions (default in,out: the NTHU binaries).")
@click.option("--batches", metavar="B,B,...",
              help="batch: graphs per batch (default 1000,10000,100000; and 1000000 on a GPU).")
@click.option("--part", metavar="NAME", multiple=True,
              help="startup: the parts to run (repeat or comma-separate; default all: in-process, process, "
                   "tiny-process, first-run, floor, cold-compile).")
@click.option("--repeats", "-r", metavar="R", type=click.IntRange(min=1), default=3,
              help="Timed runs per case (median kept).")
@click.option("--scipy/--no-scipy", default=True, help="Time SciPy's floyd_warshall too (run, sizes).")
@click.option("--scipy-max-n", metavar="N", type=click.IntRange(min=1), default=4096,
              help="Skip SciPy above this n (it is single-threaded O(n^3)).")
@percent_option
@seed_option
@click.option("--out", "-o", metavar="DIR", type=click.Path(file_okay=False, path_type=Path),
              help="Folder for STUDY.json, STUDY.csv, the plots and report.md (default "
                   "bench/results/STUDY-TIMESTAMP; run writes files only when given).")
@click.option("--ceilings", metavar="FILE", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="A ceilings JSON (floydwarp bench ceilings) for the roofline lines and % columns (default: the "
                   "newest ceilings.json in or beside --out, for this machine).")
@click.option("--plots/--no-plots", default=True, help="Draw the PNG plots (needs matplotlib).")
@click.option("--json", "json_path", metavar="FILE", type=click.Path(dir_okay=False, path_type=Path),
              help="Also write the records and environment as JSON.")
@click.pass_context
def bench(ctx, study, backend, algorithm, sizes, n, dtype, block_size, sweep, option, threads, ranks, gpus, mode,
          budgets, max_seconds, graph, real_weights, file_formats, batches, part, repeats, scipy, scipy_max_n, percent,
          seed, out, ceilings, plots, json_path):
    """Time backends and algorithms over sizes, SciPy side by side, or run one of the studies."""
    from .. import numeric
    from ..bench import STUDIES, BenchConfig, view

    if study not in STUDIES:
        raise click.BadParameter(f"unknown study {study!r}; choose one of: {', '.join(STUDIES)}",
                                 param_hint="'STUDY'")
    for flag, studies in STUDY_OPTIONS.items():
        given = ctx.get_parameter_source(flag.lstrip("-").replace("-", "_")) is ParameterSource.COMMANDLINE
        if given and study not in studies:
            raise click.UsageError(f"{flag} is for the {' and '.join(studies)} "
                                   f"stud{'ies' if len(studies) > 1 else 'y'}, not {study}", ctx)
    dtypes = split_names(dtype) or ["int32"]
    for name in dtypes:
        if name != "auto":
            numeric.canonical_dtype(name)
    blocks = parse_sizes(block_size, "--block-size") if block_size else None
    if blocks and len(blocks) > 1 and study not in ("run", "block-size"):
        raise click.UsageError(f"--block-size takes one value for the {study} study (several for run and "
                               "block-size)", ctx)
    thread_values = parse_sizes(threads, "--threads") if threads else None
    if thread_values and len(thread_values) > 1 and study != "threads":
        raise click.UsageError(f"--threads takes one value for the {study} study (a list for the threads study)", ctx)
    if graph is not None and graph not in ("host", "device"):
        raise click.BadParameter(f"expected host or device, got {graph!r}", param_hint="'--graph'")
    modes = split_names(mode) or ["strong", "weak"]
    for m in modes:
        if m not in ("strong", "weak"):
            raise click.BadParameter(f"expected strong or weak, got {m!r}", param_hint="'--mode'")
    formats = ["in", "out"]
    if file_formats:
        formats = [f.strip().lstrip(".") for f in file_formats.split(",")]
        if len(formats) != 2 or not all(formats):
            raise click.BadParameter(f"expected GRAPH,RESULT extensions like in,out or npy,npz; got {file_formats!r}",
                                     param_hint="'--file-formats'")

    config = BenchConfig(
        backends=split_names(backend) or None,
        algorithms=split_names(algorithm) or (["auto"] if study == "run" else None),
        dtypes=dtypes, repeats=repeats, scipy=scipy, scipy_max_n=scipy_max_n, percent=percent, seed=seed,
        threads=thread_values[0] if thread_values and study != "threads" else None,
        block_sizes=blocks if blocks and study in ("run", "block-size") else [blocks[0] if blocks else None],
        n=n, options=parse_options(option), modes=modes, file_formats=formats,
        thread_counts=thread_values if study == "threads" else None,
        sweep=parse_sweep(sweep) if sweep else None, graph_on=graph or "host", real_weights=real_weights)
    if sizes:
        config.sizes = parse_sizes(sizes, "--sizes")
    if ranks:
        config.ranks = parse_sizes(ranks, "--ranks")
    if gpus:
        config.gpus = parse_sizes(gpus, "--gpus")
    if budgets:
        config.budgets = parse_floats(budgets, "--budgets")
    if batches:
        config.batches = parse_sizes(batches, "--batches")
    if max_seconds is not None:
        config.max_seconds = max_seconds
    if study == "block-size" and not blocks:
        config.block_sizes = [None]
    if study == "block-size" and not sizes:
        config.sizes = []                     # one n: --n, else the backend's default
    if study in ("networkx", "networkx-stages", "small", "inputs") and not sizes:
        config.sizes = list(view(study).DEFAULT_SIZES)
    if part:
        config.parts = split_names(part)

    if study == "run":
        _run_table(config, out, json_path, ceilings, plots)
        return
    _run_study(study, config, out, json_path, ceilings, plots)


def _run_table(config, out, json_path, ceilings_file, plots):
    """The ``run`` study: a live table (the original ``floydwarp bench``); files only with --out/--json."""
    from ..bench import STUDIES, report

    printed_header = False

    def show(record):
        nonlocal printed_header
        if not printed_header:
            click.echo(report.header())
            printed_header = True
        click.echo(report.row(record))

    data = STUDIES["run"](config, command=command_line(), on_record=show)
    click.echo(f"on: {report.describe_environment(data['environment'])}")
    if json_path is not None:
        report.write_json(data, json_path)
        click.echo(f"wrote {json_path} ({len(data['records'])} records)")
    if out is not None:
        _save(data, out, _ceilings(ceilings_file, out), plots)


def _ceilings(path, out):
    from ..bench.environment import environment
    from ..bench.studies import ceilings as C

    if path is not None:
        return C.load(path)
    found = C.find(out)
    if found is None:
        return None
    try:
        mine = C.matching(C.load(found), environment())
    except Exception:  # noqa: BLE001 -- an unreadable file is no ceiling
        return None
    if mine:
        click.echo(f"ceilings: {found}")
    return mine or None


def _run_study(study, config, out, json_path, ceilings_file, plots):
    from dataclasses import asdict

    from ..bench import STUDIES, report, results, view
    from ..bench.environment import environment

    out = Path(out) if out is not None else results.default_out(study)
    module = view(study)
    if study != "ceilings":
        config.ceilings = _ceilings(ceilings_file, out)
    partial = {"format": "floydwarp-bench", "version": 1, "study": study,
               "environment": environment(command=command_line(), seed=config.seed, detailed=True),
               "config": asdict(config), "records": []}
    printed_header = False

    def show(record):
        nonlocal printed_header
        partial["records"].append(record)
        results.checkpoint(partial, out)
        if not getattr(module, "LIVE", True):
            return
        cols = module.columns([record])
        if not printed_header:
            click.echo(report.study_header(cols))
            printed_header = True
        click.echo(report.study_row(record, cols))

    data = STUDIES[study](config, command=command_line(), on_record=show)
    for line in module.summary_lines(data):
        click.echo(line)
    click.echo(f"on: {report.describe_environment(data['environment'])}")
    if json_path is not None:
        report.write_json(data, json_path)
        click.echo(f"wrote {json_path} ({len(data['records'])} records)")
    _save(data, out, config.ceilings, plots)


def _save(data, out, ceilings, plots):
    from ..bench import plots as P
    from ..bench import results

    written = results.save(data, out, ceilings=ceilings, plots=plots)
    pngs = sum(1 for p in written if p.suffix == ".png")
    note = "" if not plots or P.available() else " (matplotlib is not installed: no plots)"
    click.echo(f"wrote {out}/: {data['study']}.json, {data['study']}.csv, {pngs} plots, report.md{note}")
