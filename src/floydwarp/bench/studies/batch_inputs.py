"""The ``batch`` study's input forms: the same molecule-like graphs handed to
:func:`floydwarp.solve_batch` as each form it takes besides PyG arrays, each against a SciPy
loop over that form.

``dense list``   B NumPy matrices (``inf`` = no edge, 1.0 for a bond);
``padded``       one (B, N, N) float64 array of them, with ``sizes``;
``padded adjacency``  one (B, N, N) uint8 0/1 adjacency with ``sizes``, read with
                 ``GraphBatch.from_padded(a, sizes, missing=0)`` (inside the clock): an
                 eighth of the bytes of ``padded``;
``sparse list``  B SciPy CSR matrices of ones;
``graph list``   B :class:`floydwarp.Graph` objects (edge lists).

Each record's ``kernel`` column is the engine's time (the solve and the output), the rest of
its time reading the form.  Each form runs twice: ``hops`` (``unweighted=True``: the PyG record's problem and uint8
output, so the rates compare per relaxation) and ``weights`` (the weights read and checked,
``dtype="auto"``: int16 output).  The SciPy loop of a form is ``floyd_warshall`` on each
matrix as given (dense for the dense list and the padded array, CSR for the sparse and the
graph list); its rate stands for the batch, timed on up to ``loop_max`` graphs.  A form's
``vs scipy`` compares it with its SciPy loop timed in turn with it (``LOOP_PAIRS`` loop calls
between the form's calls, ``scipy_us_paired``): a machine whose speed drifts over the study
(the 2-core box: the same loop 50-82 us a graph in runs minutes apart) moves both alike.  Forms are
built for batches of at most ``-O inputs_max=B`` graphs (default 20,000: a dense list of
10^6 molecules would take 10 GB).
"""
from __future__ import annotations

import statistics
import time

import numpy as np

FORMS = ("dense list", "padded", "padded adjacency", "sparse list", "graph list")
#: the SciPy loop each form is compared with
SCIPY_INPUT = {"dense list": "dense", "padded": "dense", "padded adjacency": "dense", "sparse list": "csr",
               "graph list": "csr"}
INPUTS_MAX = 20_000
#: SciPy loop calls timed in turn with each form's calls (the first ones of its ``repeats``)
LOOP_PAIRS = 3
#: seconds of a form's calls one timed sample runs at least, a rate over about as much work as
#: the SciPy loop it is compared with (0.15 s for 3,000 molecules on the 2-core box) gives its
#: own.  Timed one at a time, calls after any other work -- a SciPy loop, a 0.15 s sleep, a
#: 0.15 s spin of one core -- took 1.5-1.7x their steady time, shrinking over the next 8 calls
#: (about 60 ms: the box's second core waking up), so a median of single calls measured that
#: ramp (bench/results/batch-inputs-2core-s24/)
SAMPLE_S = 0.1


def build(edge_index, ptr):
    """``{form: (object, solve_batch keyword arguments)}`` and the per-graph dense and CSR
    matrices the SciPy loops read."""
    import scipy.sparse as sp

    from ...graph import Graph

    sizes = np.diff(ptr)
    count = sizes.size
    size = int(sizes.max(initial=0))
    dense, csr, graphs = [], [], []
    padded = np.full((count, size, size), np.inf)
    for g in range(count):
        lo, hi = int(ptr[g]), int(ptr[g + 1])
        a, b = np.searchsorted(edge_index[0], [lo, hi])
        s, d = edge_index[0, a:b] - lo, edge_index[1, a:b] - lo
        n = hi - lo
        m = np.full((n, n), np.inf)
        m[s, d] = 1.0
        dense.append(m)
        padded[g, :n, :n] = m
        c = sp.csr_matrix((np.ones(s.size), (s, d)), shape=(n, n))
        c.data[:] = 1.0                     # a bond listed twice summed to 2: it weighs 1
        csr.append(c)
        graphs.append(Graph.from_edges(s, d, n=n))
    adjacency = np.isfinite(padded).astype(np.uint8)
    forms = {"dense list": (dense, {}), "padded": (padded, {"sizes": sizes}),
             "padded adjacency": (_Adjacency(adjacency, sizes), {}), "sparse list": (csr, {}),
             "graph list": (graphs, {})}
    return forms, {"dense": dense, "csr": csr}


class _Adjacency:
    """A padded 0/1 adjacency, made a batch inside the timed call."""

    def __init__(self, array, sizes):
        self.array, self.sizes = array, sizes

    def batch(self):
        from ...batch import GraphBatch

        return GraphBatch.from_padded(self.array, self.sizes, missing=0)


def records(count, edge_index, ptr, config, base, loop_max, reference, emit) -> list:
    """The form records of one batch (and their SciPy loops), checked against ``reference``
    (the PyG record's uint8 hop counts)."""
    from ...batch import solve_batch

    if count > int(config.options.get("inputs_max", INPUTS_MAX)):
        return []
    forms, scipy_inputs = build(edge_index, ptr)
    timed = min(count, loop_max)
    loops = {name: emit(_scipy_record(name, mats[:timed], reference, config, base))
             for name, mats in scipy_inputs.items()}
    out = list(loops.values())
    for form in FORMS:
        obj, kwargs = forms[form]
        mats = scipy_inputs[SCIPY_INPUT[form]][:timed]
        for problem, extra in (("hops", {"unweighted": True}), ("weights", {})):
            def call(obj=obj, kwargs=kwargs, extra=extra):
                given = obj.batch() if isinstance(obj, _Adjacency) else obj
                return solve_batch(given, backend="cpu", **kwargs, **extra)

            loop_times = []
            t, times, r, kernels = _median_call(call, config.repeats, sample_s=SAMPLE_S,
                                                between=lambda mats=mats: loop_times.append(_scipy_loop_time(mats)))
            dist = r.dist
            matches = bool(np.array_equal(np.where(dist >= r.inf, 255, dist).astype(np.uint8), reference))
            rec = {**base, "method": "floydwarp batch", "backend": "cpu", "input": form, "problem": problem,
                   "status": "ok", "timed_graphs": count, "time_s": t, "times_s": times, "compute_s": kernels,
                   "graphs_per_s": count / t,
                   "us_per_graph": t / count * 1e6, "relaxations_per_s": base["relaxations"] / t,
                   "dtype": r.dtype.name, "kernel_dtype": r.metadata.get("kernel_dtype"), "matches": matches,
                   "scipy_input": SCIPY_INPUT[form]}
            paired = statistics.median(loop_times) / len(mats)
            rec["scipy_us_paired"] = paired * 1e6
            rec["speedup_vs_scipy"] = paired * count / t
            out.append(emit(rec))
    return out


def _scipy_loop(mats) -> list:
    """SciPy's ``floyd_warshall`` of each matrix."""
    from scipy.sparse.csgraph import floyd_warshall

    return [floyd_warshall(m) for m in mats]


def _scipy_loop_time(mats) -> float:
    """Seconds of :func:`_scipy_loop`."""
    t0 = time.perf_counter()
    _scipy_loop(mats)
    return time.perf_counter() - t0


def _median_call(call, repeats, between=None, sample_s=0.0):
    """``(median seconds a call, every sample's seconds a call, last result, median seconds in
    the engine)`` of ``repeats`` samples after one warm-up call; a sample is as many calls in a
    row as take ``sample_s`` seconds (at least one), its time their mean.  The engine's time is
    the kernels' and the output's (``BatchResult.compute_time``; None for results without it),
    of a sample's last call.  ``between()`` runs before each of the first :data:`LOOP_PAIRS`
    samples (outside the clock)."""
    call()
    times, engine, result = [], [], None
    for i in range(max(1, repeats)):
        if between is not None and i < LOOP_PAIRS:
            between()
        calls, t0 = 0, time.perf_counter()
        while not calls or time.perf_counter() - t0 < sample_s:
            result = None                  # the last result's memory is free for the next
            result = call()
            calls += 1
        times.append((time.perf_counter() - t0) / calls)
        engine.append(getattr(result, "compute_time", None))
    inside = statistics.median(engine) if None not in engine else None
    return statistics.median(times), times, result, inside


def _scipy_record(name, mats, reference, config, base):
    count = len(mats)
    t, times, out, _ = _median_call(lambda: _scipy_loop(mats), min(config.repeats, 3))
    matches = all(np.array_equal(np.where(np.isinf(d), 255, d).astype(np.uint8),
                                 reference[g, :d.shape[0], :d.shape[0]]) for g, d in enumerate(out))
    sizes = np.array([m.shape[0] for m in mats], dtype=np.float64)
    return {**base, "method": "scipy loop", "backend": "cpu", "input": name, "status": "ok", "timed_graphs": count,
            "time_s": t, "times_s": times, "graphs_per_s": count / t, "us_per_graph": t / count * 1e6,
            "relaxations_per_s": float((sizes ** 3).sum()) / t, "matches": matches}
