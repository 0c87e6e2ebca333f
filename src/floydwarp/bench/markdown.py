"""Markdown reports: one section per saved study, with its summary, plots and table."""
from __future__ import annotations

from datetime import datetime, timezone


def environment_line(env: dict) -> str:
    gpus = ", ".join(g.get("name", "?") for g in env.get("gpus") or [])
    clocks = ""
    if env.get("gpu_clocks"):
        c = env["gpu_clocks"][0]
        clocks = f", SM clock {c.get('clocks_sm', '?')} of {c.get('clocks_max_sm', '?')} MHz"
    mhz = env.get("cpu_mhz") or {}
    cpu = f"{env.get('cpu', '?')} ({env.get('cpus_usable', '?')} of {env.get('cpu_count', '?')} cores"
    cpu += f", {mhz['mean']:.0f} MHz)" if mhz.get("mean") else ")"
    versions = ", ".join(f"{k} {env[k]}" for k in ("floydwarp", "python", "numpy", "scipy", "numba", "cupy", "mpi4py")
                         if env.get(k))
    rev = f", source {env['source_revision']}" if env.get("source_revision") else ""
    return f"{cpu}{'; ' + gpus + clocks if gpus else '; no GPU'}; {versions}{rev}"


def _command(env: dict) -> str:
    cmd = env.get("command")
    if not cmd and env.get("argv"):
        import shlex
        cmd = shlex.join(env["argv"])
    return cmd or "(not recorded)"


def study_section(data: dict, images, *, heading: str = "##", image_dir: str = "", number: str = "") -> str:
    """One study: heading, where and how it ran, summary, images, table."""
    from . import view
    from .report import markdown_table

    study = data.get("study", "?")
    env = data.get("environment") or {}
    try:
        module = view(study)
        title = module.TITLE if study != "run" else "Backends and algorithms side by side (floydwarp bench run)"
        columns = module.columns(data.get("records", []))
        summary = module.summary_lines(data)
    except (KeyError, ImportError):
        title, columns, summary = study, None, []
    status = "" if data.get("complete", True) else " (incomplete: the run stopped early)"
    lines = [f"{heading} {number}{study}: {title}{status}", "",
             f"Ran {env.get('timestamp', '?')} on {environment_line(env)}; generator seed "
             f"{env.get('seed', (data.get('config') or {}).get('seed', '?'))}.", "",
             "```", _command(env), "```", ""]
    if summary:
        lines += [f"- {s}" for s in summary] + [""]
    for name, caption in images:
        src = f"{image_dir}/{name}" if image_dir else name
        lines += [f"![{caption}]({src})", "", f"*{caption}*", ""]
    records = data.get("records", [])
    if columns and records:
        lines += [markdown_table(records, columns), ""]
    return "\n".join(lines)


def render(sections: list[str], *, title: str, intro: str = "", by: str = "report") -> str:
    now = datetime.now(timezone.utc).isoformat(timespec="seconds")
    how = ("by `floydwarp bench`; `floydwarp report DIR` redraws it from the JSON beside it" if by == "bench" else
           "by `floydwarp report` from saved benchmark JSON (`floydwarp bench STUDY --out DIR`)")
    head = [f"# {title}", "", f"Generated {now} {how}.", ""]
    if intro:
        head += [intro, ""]
    return "\n".join(head + sections).rstrip() + "\n"
