"""Cold compile time of the blocked engine's kernels, one kernel per fresh process.

``python bench/compile_probe.py [--runs N] [--dtype int32] [--pred] [--kernels a,b] [--src PATH]
[--json FILE]`` compiles each kernel of the main job's blocked run (``close_pivot`` and
``update_tiles``, or their ``_pred`` forms) in a new Python process with an empty Numba cache,
after starting Numba's compiler there (as cpu/ahead.py does before its fork), so each number is
what that kernel costs on the first run's paths.  Per kernel it prints the median wall of the
compile over N processes, Numba's ``llvm_lock`` timer (LLVM's share) and every nested compile
(``numba:compile`` events).  ``--src`` puts another source tree first on ``PYTHONPATH`` (A/B
against e.g. a ``git archive`` of an older commit); runs of the variants interleave.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

CHILD = r'''
import json, sys, time
import numpy as np
from numba.core import event
from floydwarp.cpu import engine
from floydwarp.cpu import kernels as K

dtype, pred, name = sys.argv[1], sys.argv[2] == "1", sys.argv[3]
warm = engine.BlockedWarmUp(dtype, pred, True, True)
tiles = warm.tiles
if name.startswith("close_pivot"):
    kernel = K.close_pivot_pred if pred else K.close_pivot
    args = ((tiles.t, tiles.p, 0, tiles.clamp, tiles.lo) if pred else (tiles.t, 0, tiles.clamp, tiles.lo))
    names = kernel.py_func.__code__.co_varnames
    if "rowk" in names:                          # the engine's row buffers
        args += (tiles.rowk, tiles.prowk) if pred else (tiles.rowk,)
    elif "rowp" in names:                        # a tree from before close_pivot lost its panel copies
        args += (tiles.rowp, tiles.colp, tiles.prow) if pred else (tiles.rowp, tiles.colp)
else:
    kernel, args = tiles.crew.call(0, False)
sig = tuple(kernel.typeof_pyval(a) for a in args)
kernel.typingctx.refresh()
kernel.targetctx.refresh()
nested = []


class Listener(event.Listener):
    def on_start(self, ev):
        ev.data["t0"] = time.perf_counter()

    def on_end(self, ev):
        nested.append((str(ev.data["dispatcher"].py_func.__name__), time.perf_counter() - ev.data["t0"]))


with event.install_listener("numba:compile", Listener()):
    t0 = time.perf_counter()
    kernel.compile(sig)
    wall = time.perf_counter() - t0
timers = kernel.get_metadata(sig).get("timers", {})
print(json.dumps({"wall_s": wall, "llvm_s": timers.get("llvm_lock"), "nested": nested}))
'''


def run_one(src, dtype, pred, kernel):
    env = dict(os.environ)
    with tempfile.TemporaryDirectory() as cache:
        env["NUMBA_CACHE_DIR"] = cache
        if src:
            env["PYTHONPATH"] = os.pathsep.join([src, *filter(None, [env.get("PYTHONPATH")])])
        out = subprocess.run([sys.executable, "-c", CHILD, dtype, "1" if pred else "0", kernel], env=env,
                             check=True, capture_output=True, text=True)
    return json.loads(out.stdout.splitlines()[-1])


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--dtype", default="int32")
    parser.add_argument("--pred", action="store_true")
    parser.add_argument("--kernels", default="close_pivot,update_tiles")
    parser.add_argument("--src", action="append", default=None,
                        help="NAME=PATH of a source tree (repeatable; none: the installed tree)")
    parser.add_argument("--json")
    args = parser.parse_args(argv)
    variants = dict(s.split("=", 1) for s in args.src) if args.src else {"installed": ""}
    kernels = args.kernels.split(",")
    runs = {v: {k: [] for k in kernels} for v in variants}
    for r in range(args.runs):
        order = list(variants.items())
        for name, src in order if r % 2 == 0 else order[::-1]:
            for k in kernels:
                runs[name][k].append(run_one(src, args.dtype, args.pred, k))
    summary = {}
    for name in variants:
        for k in kernels:
            recs = runs[name][k]
            nested = {}
            for rec in recs:
                for fn, s in rec["nested"]:
                    nested.setdefault(fn, []).append(s)
            summary.setdefault(name, {})[k] = {
                "wall_median_s": statistics.median(r["wall_s"] for r in recs),
                "wall_range_s": [min(r["wall_s"] for r in recs), max(r["wall_s"] for r in recs)],
                "llvm_median_s": statistics.median(r["llvm_s"] or 0.0 for r in recs),
                "nested_median_s": {fn: statistics.median(v) for fn, v in nested.items()}}
            s = summary[name][k]
            print(f"{name:>10} {k:<18} wall {s['wall_median_s']:.3f} s {[round(x, 3) for x in s['wall_range_s']]}"
                  f" llvm {s['llvm_median_s']:.3f} s nested "
                  + ", ".join(f"{fn} {t:.3f}" for fn, t in s["nested_median_s"].items()), flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"dtype": args.dtype, "pred": args.pred, "runs": args.runs, "variants": variants,
                       "summary": summary, "records": runs}, f, indent=1)
            f.write("\n")


if __name__ == "__main__":
    main()
