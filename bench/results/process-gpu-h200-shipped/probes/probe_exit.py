"""Where a `floydwarp solve` process's seconds go: imports, the command, the report, teardown."""
import sys, time, os, json
t_enter = time.time()
from floydwarp.cli.clock import process_age
age0 = process_age()
t1 = time.time()
from floydwarp.cli import main
import floydwarp.cli.solve as S
t_imp = time.time()
marks = {}
KEPT = []
_report = S._report
def timed_report(*a, **k):
    marks["report_start"] = time.time()
    if os.environ.get("PROBE_EXIT", "").startswith("hold"):
        KEPT.append(a[4])
    try:
        return _report(*a, **k)
    finally:
        marks["report_end"] = time.time()
S._report = timed_report
import floydwarp.gpu.modules as M
groups = []
orig = M.module
def rec(filename, names, cooperative=False):
    groups.append([filename, list(names), cooperative])
    return orig(filename, names, cooperative)
M.module = rec
try:
    main(sys.argv[1:])
except SystemExit as e:
    pass
t_end = time.time()
mode = os.environ.get("PROBE_EXIT", "normal")
if mode in ("free", "fast"):
    import cupy, gc
    gc.collect()
    cupy.get_default_memory_pool().free_all_blocks()
    cupy.get_default_pinned_memory_pool().free_all_blocks()
t_free = time.time()
print("PROBE " + json.dumps({"mode": mode, "t_enter": t_enter, "age_at_probe": age0, "cli_import": t_imp - t1,
      "main": t_end - t_imp, "report": marks.get("report_end", 0) - marks.get("report_start", 0),
      "report_start": marks.get("report_start"), "t_end": t_end, "free": t_free - t_end, "t_free": t_free,
      "groups": groups}), file=sys.stderr, flush=True)
sys.stdout.flush()
if mode in ("fast", "holdfast"):
    os._exit(0)
