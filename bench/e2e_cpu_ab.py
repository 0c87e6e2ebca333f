"""Two or more source trees of floydwarp measured interleaved on this box (before/after).

``python bench/e2e_cpu_ab.py VARIANTS --rounds R --out FILE [--first-runs F]`` where VARIANTS is
a JSON object ``{"name": "path/to/src" or "", ...}`` ("" is the installed tree; a path goes first
on ``PYTHONPATH``, e.g. a ``git archive`` of an older commit's ``src``).  Each round runs, for
every variant in turn (the order reversed every other round):

* ``bench/e2e_cpu.py --studies process --repeats 7 --first-runs F``: the README's main job as a
  process, warm (median of 7) and its first run after install (F runs, empty Numba cache);
* ``compute``: in one process, ``solve()``'s ``timings["compute"]`` at n = 2048 (median of 5
  after a warm-up) for int32, int16, int32 with negative weights (clamped) and float32 with
  predecessors.

The file holds every round's records and, per variant, the median over all rounds' first runs,
of the warm walls and of the compute times.  Run it under ``flock -x /tmp/fw-cpu.lock``.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

COMPUTE = r'''
import json, floydwarp as fw
out = {}
for name, dtype, potential, pred in (("int32", "int32", 0, False), ("int16", "int16", 0, False),
                                     ("int32 clamped", "int32", 8, False), ("float32 pred", "float32", 0, True)):
    g = fw.generate.erdos_renyi(2048, 25, seed=1, potential=potential)
    fw.solve(g, dtype=dtype, backend="cpu", predecessors=pred)
    out[name] = sorted(fw.solve(g, dtype=dtype, backend="cpu", predecessors=pred).timings["compute"]
                       for _ in range(5))[2]
print(json.dumps(out))
'''


def _env(path):
    env = dict(os.environ)
    if path:
        env["PYTHONPATH"] = os.pathsep.join([path, *filter(None, [env.get("PYTHONPATH")])])
    return env


def _process(path, first_runs):
    with tempfile.TemporaryDirectory() as work:
        out = Path(work) / "process.json"
        subprocess.run([sys.executable, str(Path(__file__).with_name("e2e_cpu.py")), "--studies", "process",
                        "--repeats", "7", "--first-runs", str(first_runs), "--out", str(out)],
                       env=_env(path), check=True, stdout=subprocess.DEVNULL)
        record = json.loads(out.read_text())
    return {"floydwarp": record["floydwarp"], **record["process"]}


def _compute(path):
    out = subprocess.run([sys.executable, "-c", COMPUTE], env=_env(path), check=True, capture_output=True, text=True)
    return json.loads(out.stdout.splitlines()[-1])


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("variants", type=json.loads)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--first-runs", type=int, default=4)
    parser.add_argument("--out", required=True)
    args = parser.parse_args(argv)
    rounds = {name: [] for name in args.variants}
    for r in range(args.rounds):
        order = list(args.variants.items())
        for name, path in order if r % 2 == 0 else order[::-1]:
            record = {"process": _process(path, args.first_runs), "compute_s": _compute(path)}
            rounds[name].append(record)
            p = record["process"]
            print(name, r, "first runs", [round(x, 3) for x in p["first_runs_s"]], "warm", round(p["wall_s"], 3),
                  "compute ms", {k: round(1e3 * x, 1) for k, x in record["compute_s"].items()}, flush=True)
    summary = {}
    for name, records in rounds.items():
        firsts = [x for rec in records for x in rec["process"]["first_runs_s"]]
        summary[name] = {
            "first_run_median_s": statistics.median(firsts), "first_run_range_s": [min(firsts), max(firsts)],
            "first_runs": len(firsts),
            "warm_wall_median_s": statistics.median(rec["process"]["wall_s"] for rec in records),
            "warm_compute_median_s": statistics.median(rec["process"]["compute_s"] for rec in records),
            "compute_median_s": {k: statistics.median(rec["compute_s"][k] for rec in records)
                                 for k in records[0]["compute_s"]}}
        print(name, json.dumps(summary[name]))
    Path(args.out).write_text(json.dumps({"variants": args.variants, "summary": summary, "rounds": rounds},
                                         indent=1) + "\n")


if __name__ == "__main__":
    main()
