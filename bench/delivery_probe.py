"""When the last round's bands reach the host (gpu/delivery.py), n = 32768 from host edges.

    PYTHONPATH=src python3 bench/delivery_probe.py [N] [DTYPES]
"""
import sys
import time

import numpy as np

import floydwarp as fw
from floydwarp.gpu import delivery, transfer

n = int(sys.argv[1]) if len(sys.argv) > 1 else 32768
dtypes = (sys.argv[2] if len(sys.argv) > 2 else "int32,int16").split(",")
log = []
locked_rows = transfer.HostMatrix.locked_rows


def logged(self, lo, hi):
    got = locked_rows(self, lo, hi)
    log.append((time.perf_counter(), lo, hi, sum(b - a for a, b in got)))
    return got


transfer.HostMatrix.locked_rows = logged
adopt = transfer.HostMatrix._adopt


def adopt_logged(self, *args, **kwargs):
    adopt(self, *args, **kwargs)
    for i, f in enumerate(getattr(self, "_futures", ())):
        f.add_done_callback(lambda f, i=i: log.append((time.perf_counter(), f"piece {i}", f.result())))


transfer.HostMatrix._adopt = adopt_logged
finish = delivery.Rows.finish


def timed_finish(self):
    t = time.perf_counter()
    out = finish(self)
    log.append((time.perf_counter(), "finish", round(time.perf_counter() - t, 4), len(self.sent)))
    return out


delivery.Rows.finish = timed_finish
g = fw.generate.erdos_renyi(n, 5, seed=1)
for dtype in dtypes:
    for _ in range(2):
        log.clear()
        t0 = time.perf_counter()
        r = fw.solve(g, dtype=dtype, backend="gpu")
        print(dtype, {k: round(v, 4) for k, v in r.timings.items()}, r.metadata.get("d2h_overlapped"))
        print("   ", [(round(t - t0, 3), *rest) for t, *rest in log])
        del r
