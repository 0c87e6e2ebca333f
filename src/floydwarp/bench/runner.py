"""Time floydwarp's backends and algorithms side by side with SciPy, on generated graphs.

A benchmark is a list of cases (backend, algorithm, dtype, n, block size) run
on Erdos-Renyi graphs (one graph per n, the same for every case and for
SciPy).  Each case runs once to warm up -- JIT and NVRTC compilation, first
allocations -- and then ``repeats`` times.  A record keeps every repeat and
the medians:

``time_s``
    wall time of the whole ``solve()`` call: matrix build, copies, compute, checks;
``compute_s``
    the engine's "compute" stage; ``relaxations_per_s`` = n^3 / ``compute_s``;
``speedup_vs_scipy``
    SciPy's ``time_s`` / this ``time_s`` -- wall time against wall time;
``matches_scipy``
    whether the distances equal SciPy's;
``bytes_moved``, ``gb_per_s``
    when the implementation declares ``bytes_moved=f(n, itemsize, block_size)``
    when it registers (``block_size`` None: its default):
    ``gb_per_s`` = bytes_moved / ``compute_s``.

SciPy's ``floyd_warshall`` gets the graph as a CSR matrix and is timed the
same way (no warm-up run: nothing to compile); above ``scipy_max_n`` it is
skipped, with a record that says so -- it is single-threaded O(n^3).
"""
from __future__ import annotations

import math
import statistics
import time
from dataclasses import asdict, dataclass, field, replace
from typing import Callable, Sequence

import numpy as np

from ..errors import BackendUnavailableError, FloydwarpError


@dataclass
class BenchConfig:
    #: None: every usable backend that ``backend="auto"`` may pick (reference when there is none)
    backends: Sequence[str] | None = None
    #: per backend: "auto" (its default), "all", or names (a backend without one is skipped)
    algorithms: Sequence[str] = ("auto",)
    sizes: Sequence[int] = (256, 512, 1024, 2048)
    dtypes: Sequence[str] = ("int32",)
    #: None: the implementation's default block size
    block_sizes: Sequence[int | None] = (None,)
    repeats: int = 3
    warmup: bool = True
    scipy: bool = True
    scipy_max_n: int = 4096
    percent: float = 25.0
    seed: int = 0
    #: the studies' random graphs (bench/graphs.py) with fractional weights instead of 1..16
    real_weights: bool = False
    threads: int | None = None
    # ---- used by the studies other than ``run`` (bench/studies/); None: the study's default
    #: the one size of the kernels, block-size, threads and scaling studies
    n: int | None = None
    #: backend-specific options passed to every solve (``solve(..., **options)``), e.g. {"R": 8}
    options: dict = field(default_factory=dict)
    #: block-size study: sweep this plan option (or "block_size") over these values
    sweep: dict | None = None
    #: threads study: thread counts (default 1..cores)
    thread_counts: Sequence[int] | None = None
    #: scaling study: MPI process counts, modes, and what each rank runs
    ranks: Sequence[int] = (1, 2, 4)
    modes: Sequence[str] = ("strong", "weak")
    scaling_backend: str = "mpi"
    devices_per_rank: int | None = None
    mpiexec: str | None = None
    mpi_timeout: float = 1800.0
    #: scaling study on GPUs instead of MPI ranks: the GPU counts (one GPU is always the baseline)
    gpus: Sequence[int] | None = None
    #: budget study: wall-time budgets (seconds) and the size the doubling starts from
    budgets: Sequence[float] = (2.0, 60.0)
    budget_start_n: int = 256
    #: sizes study: skip a case whose single solve is predicted to take longer than this
    max_seconds: float = 10.0
    #: where gpu cases get their graphs: "host" (erdos_renyi, uploaded) or "device" (CuPy)
    graph_on: str = "host"
    #: breakdown study: graph and result file extensions
    file_formats: Sequence[str] = ("in", "out")
    #: folder for the breakdown study's temporary files (None: the system's)
    tmp_dir: str | None = None
    #: batch study: the batch sizes B (None: the study's default)
    batches: Sequence[int] | None = None
    #: startup study: the parts to run (None: all)
    parts: Sequence[str] | None = None
    #: ceilings records (studies/ceilings.py) for the percent-of-ceiling columns and roofline lines
    ceilings: list | None = None


@dataclass(frozen=True)
class Case:
    backend: str
    algorithm: str
    dtype: str
    n: int
    block_size: int | None = None


def default_backends() -> list[str]:
    from .environment import backend_status

    usable = [b for b in backend_status() if b["available"] and b["auto_priority"] > 0]
    return [b["name"] for b in sorted(usable, key=lambda b: -b["auto_priority"])] or ["reference"]


def plan_cases(config: BenchConfig) -> list[Case]:
    """The cases a config asks for; unknown or unusable backends and algorithms are refused here."""
    from .. import registry

    if config.repeats < 1:
        raise FloydwarpError(f"repeats must be at least 1, got {config.repeats}")
    backends = list(dict.fromkeys(config.backends or default_backends()))
    pairs, unmatched = [], set(a for a in config.algorithms if a not in ("auto", "all"))
    for name in backends:
        try:
            registry.resolve_backend(name, 0)
            impls = registry.algorithms(name)
        except ImportError as exc:
            raise BackendUnavailableError(f"backend {name!r} cannot be imported: {exc}") from exc
        for wanted in config.algorithms:
            # "all": the algorithms for any graph (as common.algorithm_names: the random graphs are weighted)
            chosen = ([i for i in impls if i.accepts is None] if wanted == "all"
                      else [i for i in impls if i.default] if wanted == "auto"
                      else [i for i in impls if i.algorithm == wanted])
            unmatched -= {i.algorithm for i in chosen}
            pairs += [(name, i.algorithm) for i in chosen]
    if unmatched:
        have = "; ".join(f"{b}: {', '.join(i.algorithm for i in registry.algorithms(b))}" for b in backends)
        raise FloydwarpError(f"no chosen backend has algorithm {', '.join(sorted(unmatched))}; they have {have}")
    pairs = list(dict.fromkeys(pairs))
    return [Case(b, a, dt, n, bs) for n in config.sizes for b, a in pairs
            for dt in config.dtypes for bs in config.block_sizes]


def run(config: BenchConfig, *, study: str = "run", command: str | None = None,
        on_record: Callable[[dict], None] | None = None) -> dict:
    """Run every case of ``config``; return ``{"study", "environment", "config", "records"}``.

    ``on_record(record)`` is called as each record is made (for a live table).
    """
    from ..generate import erdos_renyi
    from .environment import environment

    cases = plan_cases(config)
    env = environment(command=command, seed=config.seed)
    records = []

    def emit(record):
        records.append(record)
        if on_record is not None:
            on_record(record)

    for n in dict.fromkeys(config.sizes):
        graph = erdos_renyi(n, config.percent, seed=config.seed)
        scipy_record, scipy_dist = None, None
        if config.scipy:
            scipy_record, scipy_dist = time_scipy(graph, config)
            emit(scipy_record)
        for case in (c for c in cases if c.n == n):
            emit(time_case(case, graph, config, scipy_record, scipy_dist))
    return {"format": "floydwarp-bench", "version": 1, "study": study, "environment": env,
            "config": asdict(config), "records": records}


# ---------------------------------------------------------------- one case
def base_record(graph, config, backend, algorithm, dtype, block_size) -> dict:
    return {"n": graph.n, "edges": graph.num_edges, "percent": config.percent, "seed": config.seed,
            "backend": backend, "algorithm": algorithm, "dtype": dtype, "block_size": block_size,
            "threads": config.threads, "repeats": config.repeats, "status": "ok", "note": ""}


def time_case(case: Case, graph, config: BenchConfig, scipy_record=None, scipy_dist=None, *,
              options: dict | None = None) -> dict:
    """Time one case on ``graph``; ``options`` (default ``config.options``) go to ``solve()``."""
    import floydwarp as fw
    from .. import registry

    options = dict(config.options if options is None else options)
    record = base_record(graph, config, case.backend, case.algorithm, case.dtype, case.block_size)
    if options:
        record["options"] = options
    kwargs = dict(dtype=case.dtype, backend=case.backend, algorithm=case.algorithm,
                  block_size=case.block_size, threads=config.threads, **options)
    impl = next(i for i in registry.algorithms(case.backend) if i.algorithm == case.algorithm)
    walls, stages = [], []
    try:
        if case.dtype != "auto":
            registry.lookup(case.backend, case.algorithm, dtype=np.dtype(case.dtype), predecessors=False, n=case.n)
        if config.warmup:
            fw.solve(graph, **kwargs)
        for _ in range(config.repeats):
            start = time.perf_counter()
            result = fw.solve(graph, **kwargs)
            synchronize(result)
            walls.append(time.perf_counter() - start)
            stages.append(dict(result.timings))
    except FloydwarpError as exc:
        return {**record, "status": "skipped", "note": str(exc)}
    except MemoryError:
        return {**record, "status": "error", "note": "out of memory"}

    compute = statistics.median(s.get("compute", sum(s.values())) for s in stages)
    record.update(
        dtype=result.dtype.name,
        time_s=statistics.median(walls),
        compute_s=compute,
        times_s=walls,
        stages_s={k: statistics.median(s.get(k, 0.0) for s in stages) for k in stages[-1]},
        relaxations_per_s=_rate(case.n, compute),
    )
    if result.metadata.get("predecessors"):
        record["predecessors"] = result.metadata["predecessors"]     # how the engine computed them
    if scipy_record is not None and scipy_record["status"] == "ok":
        record["speedup_vs_scipy"] = scipy_record["time_s"] / record["time_s"]
    if scipy_dist is not None and not result.has_negative_cycle:
        got = result.to_host().to_dense()
        same = np.array_equal if graph.weight_stats().integral else (
            lambda a, b: np.allclose(a, b, rtol=1e-5 if result.dtype == np.float32 else 1e-12, atol=0))
        record["matches_scipy"] = bool(same(got, scipy_dist))
        if not record["matches_scipy"]:
            record["note"] = "DIFFERS FROM SCIPY"
    bytes_moved = impl.bytes_moved
    if bytes_moved is not None:
        moved = float(bytes_moved(case.n, result.dtype.itemsize, case.block_size))
        record.update(bytes_moved=moved, gb_per_s=moved / compute / 1e9 if compute > 0 else None)
    return record


def synchronize(result) -> None:
    """Wait for the device when the result stayed there (its last kernels may still run)."""
    from ..arrays import is_device_array

    if result is not None and is_device_array(result.dist):
        import cupy

        cupy.cuda.get_current_stream().synchronize()


def time_scipy(graph, config: BenchConfig):
    """SciPy's floyd_warshall on the same graph: (record, distances or None)."""
    import scipy.sparse as sp
    from scipy.sparse.csgraph import NegativeCycleError, floyd_warshall

    record = base_record(graph, replace(config, threads=1), "scipy", "floyd_warshall", "float64", None)
    if graph.n > config.scipy_max_n:
        return {**record, "status": "skipped",
                "note": f"SciPy skipped above n = {config.scipy_max_n} (single-threaded O(n^3))"}, None
    src, dst, w = graph.edges()
    csr = sp.csr_matrix((np.asarray(w, dtype=np.float64), (src, dst)), shape=(graph.n, graph.n))
    walls = []
    try:
        for _ in range(config.repeats):
            start = time.perf_counter()
            dist = floyd_warshall(csr, directed=True)
            walls.append(time.perf_counter() - start)
    except NegativeCycleError:
        return {**record, "status": "skipped", "note": "negative cycle: SciPy refuses the graph"}, None
    t = statistics.median(walls)
    record.update(time_s=t, compute_s=t, times_s=walls, relaxations_per_s=_rate(graph.n, t))
    return record, dist


def _rate(n, seconds):
    return float(n) ** 3 / seconds if seconds > 0 else math.inf
