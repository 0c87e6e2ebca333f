import time, os, cupy as cp
from cupy.cuda import compiler
from cupy import _util
calls = []
_orig = compiler._compile_using_nvrtc_no_warning
def counted(*a, **k):
    t = time.perf_counter()
    try:
        return _orig(*a, **k)
    finally:
        calls.append(time.perf_counter() - t)
compiler._compile_using_nvrtc_no_warning = counted
print("accelerators", cp._core.get_reduction_accelerators() if hasattr(cp._core, "get_reduction_accelerators") else "?", os.environ.get("CUPY_ACCELERATORS"))
m = cp.random.random((300, 300)) < 0.5
x = cp.arange(1000, dtype=cp.int64)
ops = {
 "count_nonzero 2d": lambda: int(cp.count_nonzero(m)),
 "bool sum 2d": lambda: int(m.sum()),
 "bool sum int64": lambda: int(m.sum(dtype=cp.int64)),
 "any 1d": lambda: bool((x < 0).any()),
 "max int64": lambda: int(x.max()),
 "searchsorted": lambda: cp.searchsorted(x, cp.arange(10)),
 "cumsum int64": lambda: cp.cumsum(x),
 "nonzero 2d": lambda: cp.nonzero(m),
 "bincount": lambda: cp.bincount(x, minlength=2000),
}
for name, f in ops.items():
    n0, s0 = len(calls), sum(calls); t = time.perf_counter(); f(); cp.cuda.Device().synchronize()
    print(f"{name:18s} wall {time.perf_counter()-t:6.2f}s nvrtc {len(calls)-n0} calls {sum(calls)-s0:6.2f}s", flush=True)
