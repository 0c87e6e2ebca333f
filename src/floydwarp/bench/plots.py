"""Matplotlib figures for the studies (Agg, no display, no pyplot state).

Every figure has labelled axes with units, log scales where the data spans
decades, and the device ceilings drawn as dashed lines when they are known.
``available()`` says whether matplotlib is installed; the studies skip their
plots (and say so) when it is not.
"""
from __future__ import annotations

import itertools
import math
from pathlib import Path

DPI = 120
SIZE = (8.0, 5.0)
MARKERS = "osD^v<>pPhX*"
LINESTYLES = ("-", "--", "-.", ":")


def available() -> bool:
    import importlib.util

    return importlib.util.find_spec("matplotlib") is not None


def _figure(size=SIZE):
    import matplotlib
    matplotlib.use("Agg", force=False)
    from matplotlib.figure import Figure

    fig = Figure(figsize=size, dpi=DPI, layout="constrained")
    return fig, fig.add_subplot(1, 1, 1)


def _colors(count):
    import matplotlib

    cmap = matplotlib.colormaps["tab10" if count <= 10 else "tab20"]
    return [cmap(i % cmap.N) for i in range(max(count, 1))]


def _save(fig, path) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=DPI)
    return path


def format_count(v, _pos=None) -> str:
    """Tick text for sizes: 512, 16384, 131k, 1.5M."""
    if v <= 0 or not math.isfinite(v):
        return ""
    if v >= 1e6:
        return f"{v / 1e6:.3g}M"
    if v >= 1e5:
        return f"{v / 1e3:.3g}k"
    return f"{v:.6g}"


def _size_axis(ax, values, base=2, ticks="values"):
    """A log axis whose ticks are the measured values (n, threads, ranks, block sizes), or
    powers of ``base`` (``ticks="powers"``) when the values crowd."""
    from matplotlib.ticker import FixedLocator, FuncFormatter, LogLocator, NullLocator

    values = sorted({v for v in values if v and v > 0})
    ax.set_xscale("log", base=base)
    if ticks == "powers" or (len(values) > 2 and min(b / a for a, b in zip(values, values[1:])) < 1.3):
        ax.xaxis.set_major_locator(LogLocator(base=base))
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, p: format_count(v)))
        ax.xaxis.set_minor_locator(NullLocator())
        return
    if values:
        if len(values) > 12:                        # thin out: every other tick
            values = values[::2]
        ax.xaxis.set_major_locator(FixedLocator(values))
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, p: format_count(v)))
        ax.xaxis.set_minor_locator(NullLocator())


def line_plot(series, path, *, xlabel, ylabel, title, logx=True, logy=True, xbase=2, hlines=(), vlines=(),
              ideal=None, ylim=None, note=None) -> Path:
    """``series``: [{"label", "x", "y", "style"?}]; ``hlines``: [(y, label)] (ceilings, dashed);
    ``vlines``: [(x, label)]; ``ideal``: [(x, y)] drawn as a grey "ideal" line."""
    fig, ax = _figure()
    colors = _colors(len(series))
    markers = itertools.cycle(MARKERS)
    styles = itertools.cycle(LINESTYLES[:1] if len(series) <= 10 else LINESTYLES[:2])
    xs_all = []
    for s, color in zip(series, colors):
        pts = [(x, y) for x, y in zip(s["x"], s["y"]) if x is not None and y is not None and
               math.isfinite(y) and (not logy or y > 0)]
        if not pts:
            continue
        pts.sort()
        x, y = zip(*pts)
        xs_all += x
        ax.plot(x, y, marker=s.get("marker", next(markers)), linestyle=s.get("style", next(styles)),
                color=s.get("color", color), label=s["label"], linewidth=1.6, markersize=5)
    if ideal:
        x, y = zip(*sorted(ideal))
        ax.plot(x, y, color="0.5", linestyle=":", linewidth=1.2, label="ideal")
    for i, (y, text) in enumerate(hlines):
        if y and math.isfinite(y) and (not logy or y > 0):
            ax.axhline(y, color=_ceiling_color(i), linestyle="--", linewidth=1.2, label=text)
    for x, text in vlines:
        if x:
            ax.axvline(x, color="0.3", linestyle=":", linewidth=1.2, label=text)
    if logx:
        _size_axis(ax, xs_all, xbase)
    elif xs_all and all(float(x).is_integer() for x in xs_all):
        from matplotlib.ticker import MaxNLocator

        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    if logy:
        _log_y(ax)
    if ylim:
        ax.set_ylim(*ylim)
    _finish(ax, xlabel, ylabel, title, note)
    return _save(fig, path)


def si(v, _pos=None) -> str:
    """Axis text: 20G, 1.5T, 512, 0.01."""
    if v <= 0 or not math.isfinite(v):
        return "0" if v == 0 else ""
    for scale, suffix in ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if v >= scale:
            return f"{v / scale:g}{suffix}"
    return f"{v:g}"


def _log_y(ax):
    """A log y axis with readable labels; 1-2-5 ticks when the data spans under two decades."""
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    ax.set_yscale("log")
    lo, hi = ax.get_ylim()
    if lo > 0 and hi / lo < 100:
        ax.yaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    ax.yaxis.set_major_formatter(FuncFormatter(si))
    ax.yaxis.set_minor_formatter(NullFormatter())


def _ceiling_color(i):
    return ("crimson", "darkorange", "purple", "saddlebrown", "teal")[i % 5]


def _finish(ax, xlabel, ylabel, title, note=None):
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.grid(True, which="major", alpha=0.3)
    handles, labels = ax.get_legend_handles_labels()
    if len(handles) > 7:                            # many series: the legend goes beside the axes
        fig = ax.get_figure()
        w, h = fig.get_size_inches()
        fig.set_size_inches(w + 2.6, h)
        ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0)
    elif handles:
        ax.legend(fontsize=8, loc="best")
    if note:
        ax.annotate(note, xy=(0.01, 0.01), xycoords="axes fraction", fontsize=7, color="0.35")


def bar_chart(bars, path, *, ylabel, title, logy=False, hlines=(), note=None, xlabel="") -> Path:
    """``bars``: [(label, value)]; ``hlines``: [(y, label)] ceilings."""
    fig, ax = _figure((max(6.0, 0.55 * len(bars) + 3), 5.0))
    labels = [b[0] for b in bars]
    values = [b[1] if b[1] is not None and math.isfinite(b[1]) else 0.0 for b in bars]
    colors = _colors(len(bars))
    pos = range(len(bars))
    ax.bar(pos, values, color=colors)
    ax.set_xticks(list(pos))
    ax.set_xticklabels(labels, rotation=35 if len(bars) > 4 else 0, ha="right" if len(bars) > 4 else "center",
                       fontsize=8)
    for i, (y, text) in enumerate(hlines):
        if y and math.isfinite(y):
            ax.axhline(y, color=_ceiling_color(i), linestyle="--", linewidth=1.2, label=text)
    if logy and any(v > 0 for v in values):
        _log_y(ax)
    for p, v in zip(pos, values):
        if v > 0:
            ax.annotate(_value_text(v), (p, v), ha="center", va="bottom", fontsize=7)
    _finish(ax, xlabel, ylabel, title, note)
    return _save(fig, path)


def _value_text(v) -> str:
    if v >= 1e6:
        for scale, suffix in ((1e12, "T"), (1e9, "G"), (1e6, "M")):
            if v >= scale:
                return f"{v / scale:.3g}{suffix}"
    if v >= 1000 and float(v).is_integer():
        return f"{v:,.0f}"
    return f"{v:.3g}"


def stacked_bars(categories, segments, path, *, ylabel, title, note=None, xlabel="", normalize=False) -> Path:
    """``segments``: {name: [value per category]} stacked bottom-up in the order given;
    ``normalize``: each bar as percentages of its total."""
    fig, ax = _figure((max(6.0, 0.7 * len(categories) + 3.5), 5.0))
    colors = _colors(len(segments))
    bottom = [0.0] * len(categories)
    pos = list(range(len(categories)))
    totals = [sum(v for v in vals if v is not None and math.isfinite(v)) for vals in zip(*segments.values())] \
        if segments else []
    for (name, values), color in zip(segments.items(), colors):
        vals = [v if v is not None and math.isfinite(v) else 0.0 for v in values]
        if normalize:
            vals = [100.0 * v / t if t else 0.0 for v, t in zip(vals, totals)]
        if not any(vals):
            continue
        ax.bar(pos, vals, bottom=bottom, color=color, label=name, width=0.7)
        bottom = [b + v for b, v in zip(bottom, vals)]
    ax.set_xticks(pos)
    ax.set_xticklabels(categories, rotation=30 if len(categories) > 3 else 0,
                       ha="right" if len(categories) > 3 else "center", fontsize=8)
    for p, total, raw in zip(pos, bottom, totals or bottom):
        if total > 0:
            ax.annotate(_seconds(raw), (p, total), ha="center", va="bottom", fontsize=7)
    if normalize:
        ax.set_ylim(0, 108)
    _finish(ax, xlabel, ylabel, title, note)
    return _save(fig, path)


def _seconds(t):
    from .report import format_seconds

    return format_seconds(t)


def roofline(points, path, *, copy_bytes_per_s, addmin_per_s, title, note=None) -> Path:
    """Relaxations/s against arithmetic intensity (relaxations per byte moved), with the
    roofline min(add-min, intensity x copy).  ``points``: [(label, intensity, rate)]."""
    fig, ax = _figure()
    colors = _colors(len(points))
    markers = itertools.cycle(MARKERS)
    xs = [p[1] for p in points if p[1] and p[1] > 0]
    lo = min(xs + [addmin_per_s / copy_bytes_per_s if copy_bytes_per_s and addmin_per_s else 1.0]) / 4
    hi = max(xs + [addmin_per_s / copy_bytes_per_s if copy_bytes_per_s and addmin_per_s else 1.0]) * 4
    if copy_bytes_per_s and addmin_per_s:
        import numpy as np

        grid = np.geomspace(lo, hi, 200)
        ax.plot(grid, np.minimum(addmin_per_s, grid * copy_bytes_per_s), color="crimson", linestyle="--",
                linewidth=1.4, label=f"roofline: copy {copy_bytes_per_s / 1e9:.0f} GB/s, "
                                     f"add-min {addmin_per_s:.3g}/s")
    for (text, x, y), color in zip(points, colors):
        if x and y and x > 0 and y > 0:
            ax.plot([x], [y], marker=next(markers), linestyle="none", color=color, markersize=7, label=text)
    ax.set_xscale("log")
    _log_y(ax)
    _finish(ax, "arithmetic intensity (relaxations per byte moved, traffic model)", "relaxations / s", title,
            note)
    return _save(fig, path)


def gantt(lanes, path, *, xlabel, title, colors=None) -> Path:
    """``lanes``: [(label, [(start, length, category)])], top to bottom; one bar per span, coloured
    by category (``colors``: category -> colour, else the default cycle)."""
    fig, ax = _figure((11.0, 1.0 + 0.45 * len(lanes)))
    categories = list(dict.fromkeys(c for _, spans in lanes for _, _, c in spans))
    palette = dict(zip(categories, _colors(len(categories))), **(colors or {}))
    seen = set()
    for i, (_, spans) in enumerate(lanes):
        y = len(lanes) - 1 - i
        for start, length, category in spans:
            ax.broken_barh([(start, max(length, 1e-9))], (y - 0.4, 0.8), color=palette[category],
                           label=None if category in seen else category)
            seen.add(category)
    ax.set_yticks(range(len(lanes)), [label for label, _ in reversed(lanes)])
    ax.set_xlabel(xlabel)
    ax.set_title(title)
    if seen:
        ax.legend(loc="upper right", fontsize="small", ncols=4)
    return _save(fig, path)
