"""``floydwarp report RESULTS...``: rebuild benchmark reports (plots + Markdown) from saved JSON."""
from __future__ import annotations

from pathlib import Path

import click

from .app import Argument, app


@app.command(short_help="Rebuild benchmark plots and Markdown from saved JSON.", epilog=(
    "RESULTS are the STUDY.json files 'floydwarp bench STUDY' writes, or folders searched for them "
    "(recursively), e.g. results copied back from a GPU machine.  With -o, one report of every run, its plots "
    "in a folder named after it (docs/benchmarks.md -> docs/benchmarks/); without -o, each run's own folder "
    "gets its report.md and plots redrawn.  Ceilings (a 'ceilings' study among RESULTS, or --ceilings) are "
    "drawn on the runs of the same machine."))
@click.argument("results", cls=Argument, metavar="RESULTS...", nargs=-1, required=True,
                type=click.Path(exists=True, path_type=Path),
                description="Benchmark JSON files or folders holding them.")
@click.option("--output", "-o", metavar="FILE.md", type=click.Path(dir_okay=False, path_type=Path),
              help="Write one combined Markdown report here (plots beside it, in FILE/).")
@click.option("--ceilings", metavar="FILE", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="A ceilings JSON to draw on every plot (default: the ceilings runs among RESULTS).")
@click.option("--title", metavar="TEXT", default="floydwarp benchmarks", help="Title of the combined report.")
@click.option("--plots/--no-plots", default=True, help="Draw the PNG plots (needs matplotlib).")
def report(results, output, ceilings, title, plots):
    """Rebuild benchmark reports (plots + Markdown) from saved JSON runs."""
    from ..bench import results as R
    from ..bench.studies import ceilings as C

    if output is not None:
        path = R.build_report(results, output, ceilings_path=ceilings, title=title, plots=plots)
        runs = R.collect(results)
        pngs = len(list((path.parent / path.stem).glob("*.png"))) if (path.parent / path.stem).is_dir() else 0
        click.echo(f"wrote {path} ({len(runs)} runs, {pngs} plots in {path.parent / path.stem}/)")
        return
    runs = R.collect(results)
    all_ceilings = []
    if ceilings is not None:
        all_ceilings = C.load(ceilings)
    else:
        for data, f in reversed(runs):                    # the newest ceilings first
            if data.get("study") == "ceilings":
                all_ceilings += C.from_data(data, str(f))
    for data, f in runs:
        mine = all_ceilings if ceilings is not None else (C.matching(all_ceilings, data.get("environment") or {})
                                                          or None)
        written = R.save(data, f.parent, ceilings=mine, plots=plots, by="report")
        pngs = sum(1 for p in written if p.suffix == ".png")
        click.echo(f"rebuilt {f.parent}/report.md ({data.get('study')}, {pngs} plots)")
