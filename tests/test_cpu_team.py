"""team.py and cpu/crew.py: passes split over threads, and the rounds' crew, against
plain references (a Python kernel that records its shares; the reference backend)."""
from __future__ import annotations

import subprocess
import sys
import threading

import numpy as np
import pytest

import floydwarp as fw
from floydwarp import team

pytest.importorskip("numba")


def recording_kernel():
    """A Python stand-in for a range kernel: records (first, stop, thread) and returns first."""
    calls, lock = [], threading.Lock()

    def kernel(scale, first, stop):
        with lock:
            calls.append((first, stop, threading.get_ident()))
        return first * scale

    return kernel, calls


@pytest.mark.parametrize("tasks", [0, 1, 2, 5, 100])
@pytest.mark.parametrize("threads", [1, 2, 3, 4])
def test_run_covers_the_tasks_in_contiguous_shares_in_order(tasks, threads):
    kernel, calls = recording_kernel()
    results = team.run(kernel, tasks, 10, threads=threads)
    shares = sorted(calls)
    count = 1 if tasks <= 1 or threads <= 1 else min(threads, tasks)
    assert len(shares) == count == len(results)
    assert shares[0][0] == 0 and shares[-1][1] == tasks
    assert all(a[1] == b[0] for a, b in zip(shares, shares[1:]))        # contiguous, no gaps
    sizes = [stop - first for first, stop, _ in shares]
    assert max(sizes) - min(sizes) <= 1                                  # equal shares
    assert results == [first * 10 for first, _, _ in shares]            # in task order
    assert (len({t for _, _, t in calls}) == count) if count > 1 else calls[0][2] == threading.get_ident()


def test_run_raises_a_share_error_and_stays_usable():
    def kernel(first, stop):
        if first > 0:
            raise ValueError(f"share {first}")
        return first

    with pytest.raises(ValueError, match="share"):
        team.run(kernel, 10, threads=2)
    assert team.run(lambda first, stop: stop - first, 10, threads=2) == [5, 5]


def test_run_alone_when_the_workers_are_busy():
    kernel, calls = recording_kernel()
    with team._lock:                     # another caller holds the workers
        assert team.run(kernel, 10, 1, threads=2) == [0]
    assert calls == [(0, 10, threading.get_ident())]


def test_shares_follow_the_work():
    assert team.shares(1000, 10, threads=4) == 1                       # too little work
    assert team.shares(1, 10 ** 9, threads=4) == 1                     # one task
    assert team.shares(3, 10 ** 9, threads=4) == 3                     # one thread a task at most
    assert team.shares(100, 10 ** 9, threads=4) == 4
    assert team.shares(100, 3 * team.GRAIN, threads=4) == 3            # one per grain of work


def blocked(graph, dtype, **kw):
    return fw.solve(graph, backend="cpu", algorithm="blocked", dtype=dtype, **kw)


@pytest.mark.parametrize("dtype", ["int16", "int32", "float64"])
@pytest.mark.parametrize("predecessors", [False, True])
def test_crew_many_rounds_match_the_reference(dtype, predecessors):
    """38 rounds of 8-vertex tiles: 76 jobs handed to the crew, with negative weights."""
    graph = fw.generate.erdos_renyi(300, 8, seed=3, weights=(0, 9), potential=5)
    ref = fw.solve(graph, backend="reference", dtype=dtype)
    for threads in (1, 2):
        r = blocked(graph, dtype, predecessors=predecessors, block_size=8, threads=threads)
        assert np.array_equal(r.dist, ref.dist)
        if predecessors:
            i, j = np.nonzero((r.dist < r.inf) & ~np.eye(300, dtype=bool))
            k = r.pred[i, j]
            w = np.full((300, 300), np.inf)
            src, dst, wt = graph.edges()
            w[src, dst] = wt
            assert np.all(r.dist[i, k] + w[k, j] == r.dist[i, j])


def test_crew_goes_home_when_a_run_stops():
    """A run stopped between rounds (here its progress callback raises) frees the crew."""
    graph = fw.generate.erdos_renyi(200, 10, seed=1)

    def progress(done, total):
        if done == 3:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        blocked(graph, "int32", block_size=16, threads=2, progress=progress)
    assert not team._lock.locked()
    ref = fw.solve(graph, backend="reference", dtype="int32")
    assert np.array_equal(blocked(graph, "int32", block_size=16, threads=2).dist, ref.dist)


def test_one_tile_reports_its_negative_diagonal():
    w = np.array([[0, 1, np.inf], [-3, 0, 1], [np.inf, np.inf, 0]])
    r = blocked(w, "int32")
    assert r.has_negative_cycle and r.negative_cycle_vertices.tolist() == [0, 1]
    assert not blocked(np.abs(w), "int32").has_negative_cycle


def test_auto_passes_over_a_backend_whose_package_is_missing():
    """backend='auto' without CuPy does not import the gpu module (nor CuPy)."""
    pytest.importorskip("numba")
    from floydwarp import registry

    if registry._installed("cupy"):
        pytest.skip("CuPy is installed here")
    code = ("import sys, numpy as np, floydwarp as fw; r = fw.solve(np.ones((3, 3)));"
            "print(r.backend, 'floydwarp.gpu.engine' in sys.modules, 'floydwarp.batch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout.split()
    assert out == ["cpu", "False", "False"]
    assert "CuPy" in registry.unavailable_reason("gpu")                 # asked by name: the module's own probe


def test_batch_api_on_first_use():
    assert fw.solve_batch is __import__("floydwarp.batch", fromlist=["solve_batch"]).solve_batch
    assert fw.GraphBatch.__name__ == "GraphBatch" and fw.BatchResult.__name__ == "BatchResult"
