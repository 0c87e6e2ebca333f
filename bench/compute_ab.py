"""In-process compute rates of two or more source trees, interleaved (before/after a kernel change).

``python bench/compute_ab.py VARIANTS [--rounds R] [--repeats K] [--n 2048] [--cases C,..] [--out FILE]``, VARIANTS
a JSON object ``{"name": "path/to/src" or "", ...}`` as for bench/e2e_cpu_ab.py.  Each round starts
one process per variant (order reversed every other round) that solves the same graphs (Erdos-Renyi,
n vertices, 25 edges a vertex, seed 1) on the cpu backend and reports, per case, the median of K
``timings["compute"]`` after a warm-up: int32, int16, float32, int32 with predecessors (``--cases``: a comma-separated subset).  The summary
is, per variant and case, the median over rounds of the per-round medians (and their range).  Run it
under ``flock -x /tmp/fw-cpu.lock``.
"""
from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

CHILD = r'''
import json, sys, floydwarp as fw
n, repeats, cases = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3].split(",")
g = fw.generate.erdos_renyi(n, 25, seed=1)
out = {}
for name, dtype, pred in (("int32", "int32", False), ("int16", "int16", False), ("float32", "float32", False),
                          ("int32 pred", "int32", True)):
    if name not in cases:
        continue
    fw.solve(g, dtype=dtype, backend="cpu", predecessors=pred)
    times = sorted(fw.solve(g, dtype=dtype, backend="cpu", predecessors=pred).timings["compute"]
                   for _ in range(repeats))
    out[name] = times[len(times) // 2]
print(json.dumps(out))
'''


def main(argv=None):
    sys.path.insert(0, str(Path(__file__).parent))
    from e2e_cpu_ab import _env

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("variants", type=json.loads)
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--n", type=int, default=2048)
    parser.add_argument("--cases", default="int32,int16,float32,int32 pred")
    parser.add_argument("--out")
    args = parser.parse_args(argv)
    rounds = {name: [] for name in args.variants}
    for r in range(args.rounds):
        order = list(args.variants.items())
        for name, path in order if r % 2 == 0 else order[::-1]:
            out = subprocess.run([sys.executable, "-c", CHILD, str(args.n), str(args.repeats), args.cases], env=_env(path),
                                 check=True, capture_output=True, text=True)
            record = json.loads(out.stdout.splitlines()[-1])
            rounds[name].append(record)
            print(name, r, {k: round(1e3 * x, 1) for k, x in record.items()}, flush=True)
    summary = {name: {case: {"median_ms": 1e3 * statistics.median(rec[case] for rec in recs),
                             "range_ms": [1e3 * min(rec[case] for rec in recs), 1e3 * max(rec[case] for rec in recs)]}
                      for case in recs[0]} for name, recs in rounds.items()}
    for name, cases in summary.items():
        print(name, {case: round(s["median_ms"], 1) for case, s in cases.items()})
    if args.out:
        Path(args.out).write_text(json.dumps({"n": args.n, "repeats": args.repeats, "variants": args.variants,
                                              "summary": summary, "rounds": rounds}, indent=1) + "\n")


if __name__ == "__main__":
    main()
