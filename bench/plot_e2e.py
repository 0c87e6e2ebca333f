"""Stacked bars of a user's whole solve() by stage, before and after (issue #22).

    python3 bench/plot_e2e.py OUT.png LABEL=FILE.json[:DTYPE] ...

Each FILE is a bench/e2e_gpu.py JSON or one of the retired bench/e2e_cpu.py (bench/results/e2e-cpu/);
a bar per record (per DTYPE if given), its segments the medians of ``Result.timings`` in the order
they happen, "other" the rest of the whole call.
"""
import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

ORDER = ("prepare", "start", "share", "compile", "h2d", "setup", "compute", "check", "gather", "dispatch", "d2h",
         "finish")


def bars(spec):
    label, _, rest = spec.partition("=")
    path, _, dtype = rest.partition(":")
    data = json.load(open(path))
    records = data["records"] if "records" in data else [data["in_process"]]
    for r in records:
        if dtype and r["dtype"] != dtype:
            continue
        stages = r["stages_s"]
        seg = {k: stages.get(k, 0.0) for k in ORDER}
        seg["other"] = max(0.0, r["whole_s"] - sum(seg.values()))
        yield f"{label}\nn={r['n']:,} {r['dtype']}\n{r['whole_s'] / stages['compute']:.2f}x compute", seg


def main():
    out, specs = sys.argv[1], sys.argv[2:]
    rows = [b for s in specs for b in bars(s)]
    fig, ax = plt.subplots(figsize=(2.2 * len(rows) + 2, 4.5))
    bottoms = [0.0] * len(rows)
    for key in (*ORDER, "other"):
        heights = [seg[key] for _, seg in rows]
        if not any(heights):
            continue
        ax.bar(range(len(rows)), heights, bottom=bottoms, label=key)
        bottoms = [b + h for b, h in zip(bottoms, heights)]
    ax.set_xticks(range(len(rows)), [name for name, _ in rows], fontsize=8)
    ax.set_ylabel("seconds (median)")
    ax.set_title("A user's whole solve(), stage by stage")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out, dpi=110)


if __name__ == "__main__":
    main()
