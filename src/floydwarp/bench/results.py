"""A study's output folder, and reports rebuilt from saved runs.

``floydwarp bench STUDY --out DIR`` writes into DIR:

* ``<study>.json`` -- the payload: records, summary, config and the environment
  (seed, versions, devices, clocks, argv; see environment.py), rewritten after each
  record while the study runs (``"complete": false``) so a stopped run keeps its data;
* ``<study>.csv`` -- the same records, one flat row each;
* ``*.png`` -- the study's plots (matplotlib, Agg);
* ``report.md`` -- the summary, the plots and the table.

:func:`build_report` turns any number of saved JSON files (or folders of them) into
one Markdown report with freshly drawn plots, on any machine.
"""
from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

from ..errors import FloydwarpError
from .report import write_csv, write_json

RESULTS_ROOT = Path("bench") / "results"


def default_out(study: str) -> Path:
    return RESULTS_ROOT / f"{study}-{datetime.now().strftime('%Y%m%d-%H%M%S')}"


def json_name(study: str) -> str:
    return f"{study}.json"


def checkpoint(data: dict, out_dir) -> None:
    """Rewrite ``<study>.json`` with the records so far (``"complete": false``)."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    write_json({**data, "complete": False}, out_dir / json_name(data["study"]))


def save(data: dict, out_dir, *, ceilings=None, plots: bool = True, by: str = "bench") -> list[Path]:
    """Write the JSON, the CSV, the plots and ``report.md`` of a finished study (``by="bench"``),
    or redraw only the plots and ``report.md`` of a saved one (``by="report"``: its JSON stays as it is)."""
    from . import markdown
    from . import plots as P

    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    if by == "bench":
        data = {**data, "complete": True}
        written += [write_json(data, out_dir / json_name(data["study"])),
                    write_csv(data.get("records", []), out_dir / f"{data['study']}.csv")]
    elif not (out_dir / f"{data['study']}.csv").exists() and data.get("records"):
        written.append(write_csv(data["records"], out_dir / f"{data['study']}.csv"))   # a run stopped early
    images = []
    if plots and P.available():
        images = draw(data, out_dir, ceilings)
        written += [out_dir / name for name, _ in images]
    section = markdown.study_section(data, images, heading="##")
    text = markdown.render([section], title=f"floydwarp bench {data['study']}", by=by)
    path = out_dir / "report.md"
    path.write_text(text)
    written.append(path)
    return written


def draw(data, out_dir, ceilings=None, prefix="") -> list[tuple[str, str]]:
    """The study's plots into ``out_dir``; ceilings default to those its run used."""
    from . import view
    from .studies import ceilings as C

    if ceilings is None:
        ceilings = (data.get("config") or {}).get("ceilings")
    ceilings = C.matching(ceilings, data.get("environment") or {}, strict=False) if ceilings else None
    try:
        module = view(data["study"])
    except KeyError:
        return []
    return module.plots(data, out_dir, ceilings, prefix)


# ---------------------------------------------------------------- reading saved runs
def load(path) -> dict:
    path = Path(path)
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise FloydwarpError(f"{path}: cannot read benchmark JSON ({exc})") from exc
    if not isinstance(data, dict) or data.get("format") != "floydwarp-bench":
        raise FloydwarpError(f"{path}: not a floydwarp bench JSON (no \"format\": \"floydwarp-bench\")")
    return data


def collect(paths) -> list[tuple[dict, Path]]:
    """Every benchmark JSON in ``paths`` (files, or folders searched recursively), oldest first."""
    found = []
    for p in paths:
        p = Path(p)
        if p.is_dir():
            for f in sorted(p.rglob("*.json")):
                try:
                    found.append((load(f), f))
                except FloydwarpError:
                    continue                    # other JSON files in the folder
        elif p.is_file():
            found.append((load(p), p))
        else:
            raise FloydwarpError(f"{p}: no such file or folder")
    if not found:
        raise FloydwarpError(f"no floydwarp bench JSON found in {', '.join(map(str, paths))}")
    unique = {}
    for data, f in found:
        unique.setdefault(f.resolve(), (data, f))
    order = {name: i for i, name in enumerate(["ceilings", "sizes", "run", "kernels", "block-size", "budget",
                                                "threads", "scaling", "breakdown"])}
    return sorted(unique.values(), key=lambda t: (order.get(t[0].get("study"), 99),
                                                  (t[0].get("environment") or {}).get("timestamp") or ""))


def build_report(paths, output, *, ceilings_path=None, title="floydwarp benchmarks", plots=True) -> Path:
    """One Markdown report of every saved run in ``paths``; plots go to ``<output stem>/``."""
    from . import markdown
    from . import plots as P
    from .studies import ceilings as C

    runs = collect(paths)
    output = Path(output)
    output.parent.mkdir(parents=True, exist_ok=True)
    image_dir = output.parent / output.stem
    all_ceilings = []
    if ceilings_path is not None:
        all_ceilings += C.load(ceilings_path)
    for data, f in reversed(runs):                        # the newest ceilings first
        if data.get("study") == "ceilings":
            all_ceilings += C.from_data(data, str(f))
    drawing = plots and P.available()
    if drawing and image_dir.is_dir():                 # plots of an earlier build: drawn again below
        for old in image_dir.glob("[0-9][0-9]-*.png"):
            old.unlink()
    sections = []
    for i, (data, f) in enumerate(runs, 1):
        images = []
        if drawing:
            forced = C.load(ceilings_path) if ceilings_path is not None else None
            mine = forced if forced is not None else (C.matching(all_ceilings, data.get("environment") or {})
                                                      or (data.get("config") or {}).get("ceilings"))
            images = draw(data, image_dir, mine, prefix=f"{i:02d}-")
        sections.append(markdown.study_section(data, images, heading="##", image_dir=image_dir.name,
                                               number=f"{i}. ") + f"\n*Source: `{f}`*\n")
    contents = ["## Contents", ""] + [f"{i}. {d.get('study')} ({(d.get('environment') or {}).get('timestamp', '?')})"
                                      for i, (d, _) in enumerate(runs, 1)] + [""]
    intro = "\n".join(contents)
    if plots and not P.available():
        intro += "\n(matplotlib is not installed: no plots were drawn.)\n"
    output.write_text(markdown.render(sections, title=title, intro=intro))
    return output
