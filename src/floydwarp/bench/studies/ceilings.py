"""``ceilings``: the device's copy bandwidth and add-min rate -- the roofline every plot draws.

* gpu: :func:`floydwarp.gpu.ceilings.measure` (a device-to-device copy; ``min(a + b, c)``
  in registers for int32, packed int16 pairs, float32 and float64);
* cpu: a large memory copy (``np.copyto`` on one thread and a Numba ``prange`` copy on
  every core: bytes read + written per second, the larger kept) and the add-min rate of
  a register-blocked Numba loop on cache-resident arrays on every core
  (:mod:`floydwarp.bench.microbench`), per dtype.

One record per backend: ``{"backend", "device", "copy_bytes_per_s", "addmin_per_s": {dtype: rate}}``.
Other studies read a ceilings JSON (``--ceilings FILE``, or the newest ``ceilings.json``
in the results folder) to draw these as lines and to report percentages of them.
"""
from __future__ import annotations

import json
from pathlib import Path

from ...errors import FloydwarpError
from ..report import Column, rate_cell
from . import common

NAME = "ceilings"
TITLE = "Device ceilings: copy bandwidth and add-min rate"

#: dtypes the cpu add-min rate is always measured for (config.dtypes are added)
CPU_DTYPES = ("int32", "float32")


def _addmin(dtype):
    return lambda r: (r.get("addmin_per_s") or {}).get(dtype)


def columns(records=()):
    kinds = list(dict.fromkeys(k for r in records for k in (r.get("addmin_per_s") or {})))
    return ([Column("backend", "backend", width=-8), Column("device", "device", width=-30),
             Column("copy GB/s", "copy_bytes_per_s", lambda v: f"{v / 1e9:.1f}", 10)]
            + [Column(f"add-min {k}/s", _addmin(k), rate_cell, 16) for k in kinds])


def run(config, *, command=None, on_record=None) -> dict:
    backends = common.backends_for(config, wanted=("cpu", "gpu"), default=None)
    env = common.environment(config, command)
    records = []
    emit = common.emitter(records, on_record)
    for backend in backends:
        if backend == "gpu":
            emit(measure_gpu())
        else:
            dtypes = list(dict.fromkeys([*CPU_DTYPES, *(d for d in config.dtypes if d != "auto")]))
            emit(measure_cpu(dtypes, env))
    return common.payload(NAME, config, env, records)


def measure_cpu(dtypes=CPU_DTYPES, env=None) -> dict:
    import numba

    from .. import microbench
    from ..environment import cpu_model

    copy = microbench.copy_bandwidth()
    rates = {}
    for dt in dtypes:
        try:
            rates[dt] = microbench.addmin_rate(dt)
        except Exception as exc:  # noqa: BLE001 -- a dtype Numba cannot vectorize here: warned, None
            rates[dt] = None
            common.warn(f"cpu add-min {dt}: {type(exc).__name__}: {exc}")
    return {"backend": "cpu", "device": (env or {}).get("cpu") or cpu_model(), "status": "ok", "note": "",
            "threads": numba.get_num_threads(), "copy_bytes_per_s": max(copy["numpy"], copy["parallel"]),
            "copy_bytes_per_s_numpy": copy["numpy"], "copy_bytes_per_s_parallel": copy["parallel"],
            "copy_bytes": copy["bytes"], "addmin_per_s": rates,
            "method": "copy: max(np.copyto, numba prange copy), bytes read + written; add-min: "
                      "register-blocked numba loop c = min(c, s + b), cache-resident, every thread, best of 3"}


def measure_gpu() -> dict:
    from ... import registry

    reason = registry.unavailable_reason("gpu")
    if reason:
        raise FloydwarpError(f"backend 'gpu' is not available: {reason}")
    try:
        from ...gpu import ceilings as gpu_ceilings
        measure = gpu_ceilings.measure
    except (ImportError, AttributeError) as exc:
        return {"backend": "gpu", "device": None, "status": "skipped",
                "note": f"floydwarp.gpu.ceilings.measure() is not available ({exc})"}
    try:
        measured = measure()
    except Exception as exc:  # noqa: BLE001 -- the cpu ceilings are still worth keeping
        return {"backend": "gpu", "device": None, "status": "error",
                "note": f"floydwarp.gpu.ceilings.measure() failed: {type(exc).__name__}: {exc}"[:400]}
    return {"backend": "gpu", "status": "ok", "note": "", **measured,
            "method": "floydwarp.gpu.ceilings.measure(): device-to-device copy (read + write); "
                      "min(a + b, c) in registers, every SM"}


# ---------------------------------------------------------------- reading and using ceilings
def load(path) -> list[dict]:
    """Ceilings records from a file: a ceilings study's JSON, a list of records, or the
    bare dict :func:`floydwarp.gpu.ceilings.measure` returns (taken as the gpu's)."""
    path = Path(path)
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise FloydwarpError(f"{path}: cannot read a ceilings JSON ({exc})") from exc
    return from_data(data, str(path))


def from_data(data, where="ceilings") -> list[dict]:
    if isinstance(data, dict) and data.get("format") == "floydwarp-bench":
        if data.get("study") != NAME:
            raise FloydwarpError(f"{where}: a {data.get('study')!r} study, not a ceilings one")
        env = data.get("environment") or {}
        return [dict(r, environment_cpu=env.get("cpu")) for r in data.get("records", []) if r.get("status") == "ok"]
    if isinstance(data, dict) and "copy_bytes_per_s" in data:
        return [dict(data, backend=data.get("backend", "gpu"))]
    if isinstance(data, list) and all(isinstance(r, dict) for r in data):
        return data
    raise FloydwarpError(f"{where}: not a ceilings JSON (expected a 'ceilings' study or "
                         "{device, copy_bytes_per_s, addmin_per_s})")


def find(folder) -> Path | None:
    """The newest ceilings study JSON in ``folder``, its subfolders, or beside it."""
    if folder is None:
        return None
    folder = Path(folder)
    candidates = []
    for base in (folder, folder.parent):
        if base.is_dir():
            candidates += [p for p in base.glob("ceilings.json")]
            candidates += [p for p in base.glob("*/ceilings.json")]
    candidates = [p for p in dict.fromkeys(candidates) if p.is_file()]
    return max(candidates, key=lambda p: p.stat().st_mtime) if candidates else None


#: the names an add-min rate may be stored under, per (backend, dtype)
def _keys(backend, dtype):
    if dtype == "int16":
        return ("int16x2", "int16") if backend == "gpu" else ("int16", "int16x2")
    return (dtype,)


def device_of(backend, env) -> str | None:
    """The device name a backend ran on, from a study's environment."""
    if backend == "gpu":
        gpus = env.get("gpus") or []
        return gpus[0]["name"] if gpus else None
    return env.get("cpu")


def matching(ceilings, env, *, strict=True) -> list[dict]:
    """The ceilings that belong to the machine of ``env`` (all of them when not ``strict``)."""
    out = []
    for c in ceilings or ():
        if c.get("status", "ok") != "ok":
            continue
        mine = device_of("gpu" if c.get("backend") == "gpu" else "cpu", env)
        if not strict or mine is None or c.get("device") is None or c.get("device") == mine:
            out.append(c)
    return out


def lookup(ceilings, backend, dtype) -> dict | None:
    """``{"copy", "addmin", "device", "key"}`` for a backend (mpi/reference: the cpu's) and dtype."""
    kind = "gpu" if backend == "gpu" else "cpu"
    for c in ceilings or ():
        if c.get("backend") != kind or c.get("status", "ok") != "ok":
            continue
        rates = c.get("addmin_per_s") or {}
        key = next((k for k in _keys(kind, dtype) if rates.get(k)), None)
        return {"copy": c.get("copy_bytes_per_s"), "addmin": rates.get(key) if key else None,
                "device": c.get("device"), "key": key}
    return None


def add_fractions(record, ceilings) -> dict:
    """Add ``pct_addmin`` (relax/s over the add-min ceiling) and ``pct_copy`` (GB/s over copy)."""
    if record.get("status", "ok") != "ok":
        return record
    c = lookup(ceilings, record.get("backend"), record.get("dtype"))
    if c is None:
        return record
    rate = record.get("relaxations_per_s")
    if c["addmin"] and rate:
        record["addmin_ceiling_per_s"] = c["addmin"]
        record["pct_addmin"] = rate / c["addmin"]
    gbps = record.get("gb_per_s")
    if c["copy"] and gbps:
        record["copy_ceiling_bytes_per_s"] = c["copy"]
        record["pct_copy"] = gbps * 1e9 / c["copy"]
    return record


# ---------------------------------------------------------------- views
def summary_lines(data) -> list[str]:
    lines = []
    for r in data.get("records", []):
        if r.get("status") != "ok":
            lines.append(f"{r.get('backend')}: {r.get('status')}: {r.get('note')}")
            continue
        rates = ", ".join(f"{k} {rate_cell(v)}/s" for k, v in (r.get("addmin_per_s") or {}).items() if v)
        lines.append(f"{r['backend']} ({r.get('device')}): copy {r['copy_bytes_per_s'] / 1e9:.1f} GB/s; "
                     f"add-min {rates}")
    return lines


def plots(data, out_dir, ceilings=None, prefix=""):
    from .. import plots as P

    recs = [r for r in data.get("records", []) if r.get("status") == "ok"]
    if not recs:
        return []
    bars = []
    for r in recs:
        for k, v in (r.get("addmin_per_s") or {}).items():
            if v:
                bars.append((f"{r['backend']} {k}", v))
    files = []
    if bars:
        path = Path(out_dir) / f"{prefix}ceilings-addmin.png"
        P.bar_chart(bars, path, ylabel="add-min relaxations / s", title="Add-min ceiling per device and type",
                    logy=True)
        files.append((path.name, "Add-min ceilings (relaxations per second, log scale)"))
    copies = [(f"{r['backend']} ({r.get('device')})", r["copy_bytes_per_s"] / 1e9) for r in recs
              if r.get("copy_bytes_per_s")]
    if copies:
        path = Path(out_dir) / f"{prefix}ceilings-copy.png"
        P.bar_chart(copies, path, ylabel="copy bandwidth (GB/s, read + write)", title="Copy bandwidth ceiling")
        files.append((path.name, "Copy bandwidth ceilings (GB/s, bytes read + written)"))
    return files


