"""``floydwarp info``: version, backends and their algorithms, CPU threads, GPUs."""
from __future__ import annotations

import click

from .app import app


@app.command(short_help="Version, backends, CPUs and GPUs.")
@click.option("--options", "meanings", is_flag=True,
              help="Also say what each solve option does (floydwarp.solve(..., NAME=VALUE)).")
def info(meanings):
    """Version, backends and algorithms (and why one is unusable), their solve options, CPUs, GPUs."""
    from ..bench.environment import backend_status, environment
    from ..options import GENERAL

    echo = click.echo
    env = environment()
    missing = "not installed"
    echo(f"floydwarp {env['floydwarp']} (python {env['python']}, numpy {env['numpy']}, scipy {env['scipy']}, "
         f"numba {env['numba'] or missing}, cupy {env['cupy'] or missing})")
    threads = env["numba_threads"] if env["numba_threads"] is not None else "numba not installed"
    echo(f"cpu: {env['cpu']}; {env['cpus_usable']} of {env['cpu_count']} cores usable; numba threads: {threads}")
    for d in env["gpus"]:
        echo(f"gpu {d['index']}: {d['name']}, {d['memory_bytes'] / 2**30:.1f} GiB, "
             f"compute capability {d['compute_capability']}")
    if not env["gpus"]:
        echo(f"gpu: {env['gpu_note']}")

    echo("backends:")
    status = backend_status()
    width = max(len(b["name"]) for b in status)
    for b in status:
        state = "available" if b["available"] else f"unavailable: {b['reason']}"
        echo(f"  {b['name']:<{width}}  {state}" + (f" -- {b['description']}" if b["description"] else ""))
        _options(echo, "    options of every algorithm", b["options"], meanings)
        for a in b["algorithms"]:
            extras = [", ".join(a["dtypes"])]
            if a["predecessors"]:
                extras.append("predecessors")
            if a["max_n"] is not None:
                extras.append(f"n <= {a['max_n']:,}")
            default = " (default)" if a["default"] else ""
            echo(f"    {a['name']}{default}: {a['description']} [{'; '.join(extras)}]")
            _options(echo, "      options", a["options"], meanings)
    _options(echo, "options of every backend", GENERAL, meanings)
    auto = sorted((b for b in status if b["available"] and b["auto_priority"] > 0), key=lambda b: -b["auto_priority"])
    picks = ", then ".join(b["name"] + (f" for n >= {b['auto_min_n']:,}" if b["auto_min_n"] else "") for b in auto)
    echo(f"--backend auto picks: {picks or 'nothing usable here; name a backend'}")


def _options(echo, title, options, meanings):
    """One line naming the solve options, or (``meanings``) a line each with what it does."""
    if not options:
        return
    if not meanings:
        echo(f"{title}: {', '.join(options)}")
        return
    echo(f"{title}:")
    indent = " " * (len(title) - len(title.lstrip()) + 2)
    for name, text in options.items():
        echo(f"{indent}{name}: {text}")
