"""cpu/ahead.py: kernels compiled ahead by a forked helper into Numba's on-disk cache; whatever
becomes of the helper, the caller gets its kernel and no process is left behind."""
from __future__ import annotations

import importlib.util
import os
import signal
import subprocess
import sys
import textwrap

import numpy as np
import pytest

pytest.importorskip("numba")

from floydwarp.cpu import ahead  # noqa: E402

KERNELS = '''
from numba import njit


@njit(cache=True)
def twice_sum(a):
    s = 0
    for x in a:
        s += x
    return 2 * s


@njit(cache=True)
def untypable(a):
    return a.no_such_attribute
'''

needs_fork = pytest.mark.skipif(not hasattr(os, "fork") or not sys.platform.startswith("linux"),
                                reason="the helper is forked (Linux)")


@pytest.fixture
def kernels(tmp_path, monkeypatch):
    """A fresh module of cache=True kernels (its cache is tmp_path/__pycache__: cold), and a
    helper allowed whatever this machine's core count."""
    path = tmp_path / f"ahead_kernels_{tmp_path.name}.py"
    path.write_text(KERNELS)
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, path.stem, module)        # a cache entry is loaded by module name
    spec.loader.exec_module(module)
    monkeypatch.setattr(ahead, "wanted", lambda: True)
    return module


def no_child_left(pid):
    with pytest.raises(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)


@needs_fork
def test_the_helper_compiles_into_the_cache_and_the_call_loads_it(kernels):
    a = np.arange(5, dtype=np.int32)
    sig = ahead.signature(kernels.twice_sum, (a,))
    assert ahead.cold(kernels.twice_sum, sig)
    helper = ahead.start([(kernels.twice_sum, (a,))])
    pid = helper.pid
    assert helper.wait()
    no_child_left(pid)
    assert ahead._in_cache(kernels.twice_sum, sig)
    assert sig not in kernels.twice_sum.overloads                       # compiled there, not here
    assert kernels.twice_sum(a) == 2 * int(a.sum())
    assert sum(kernels.twice_sum.stats.cache_hits.values()) == 1        # loaded, not compiled
    assert ahead.start([(kernels.twice_sum, (a,))]) is None             # warm: no helper
    b = np.arange(4, dtype=np.float64)                                  # another specialization: cold
    assert ahead.cold(kernels.twice_sum, ahead.signature(kernels.twice_sum, (b,)))


# The helper is forked with Numba's compiler started (its registries loaded), which the caller
# pays at its own first compile anyway; checked in a fresh interpreter, where nothing else has
# started it.
STARTED = textwrap.dedent('''
    import importlib.util, os, sys
    import numpy as np
    from floydwarp.cpu import ahead
    spec = importlib.util.spec_from_file_location("cold_kernels", sys.argv[1])
    module = importlib.util.module_from_spec(spec)
    sys.modules["cold_kernels"] = module
    spec.loader.exec_module(module)
    at_fork = []
    fork = os.fork

    def noting_fork():
        at_fork.append("numba.np.arraymath" in sys.modules)     # loaded by the compiler's start
        return fork()

    os.fork = noting_fork
    ahead.wanted = lambda: True
    before = "numba.np.arraymath" in sys.modules
    a = np.arange(4, dtype=np.int64)
    helper = ahead.start([(module.twice_sum, (a,))])
    print(before, at_fork, helper.wait(), module.twice_sum(a), sum(module.twice_sum.stats.cache_hits.values()))
''')


@needs_fork
def test_the_helper_is_forked_with_the_compiler_started(tmp_path):
    path = tmp_path / "cold_kernels.py"
    path.write_text(KERNELS)
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "cache")}
    out = subprocess.run([sys.executable, "-c", STARTED, str(path)], env=env, capture_output=True, text=True,
                         check=True, timeout=600).stdout
    assert out.split() == ["False", "[True]", "True", "12", "1"], out


class Refuses:
    def refresh(self):
        raise RuntimeError("another Numba")


@needs_fork
def test_a_compiler_that_cannot_be_started_ahead_is_started_by_the_helper(kernels, monkeypatch):
    a = np.arange(6, dtype=np.int32)
    sig = ahead.signature(kernels.twice_sum, (a,))
    with monkeypatch.context() as m:
        m.setattr(kernels.twice_sum, "typingctx", Refuses())
        helper = ahead.start([(kernels.twice_sum, (a,))])
        assert helper.wait()
    assert ahead._in_cache(kernels.twice_sum, sig)
    assert kernels.twice_sum(a) == 30
    assert sum(kernels.twice_sum.stats.cache_hits.values()) == 1


def kill_it(helper):
    os.kill(helper.pid, signal.SIGKILL)
    return helper.wait()


def stuck(helper):
    return helper.wait(patience=0)          # out of patience at once: killed


@needs_fork
@pytest.mark.parametrize("fate", [kill_it, stuck])
def test_a_killed_or_stuck_helper_leaves_the_kernel_to_the_caller(kernels, fate):
    a = np.arange(7, dtype=np.int64)
    helper = ahead.start([(kernels.twice_sum, (a,))])
    pid = helper.pid
    assert fate(helper) is False
    no_child_left(pid)
    assert helper.wait() is False                                       # waiting again: nothing to wait for
    assert kernels.twice_sum(a) == 2 * int(a.sum())


@needs_fork
def test_a_helper_that_cannot_save_is_not_trusted(kernels, monkeypatch):
    monkeypatch.setattr(ahead, "_in_cache", lambda kernel, sig: False)  # the child inherits this
    a = np.arange(3, dtype=np.int32)
    helper = ahead.start([(kernels.twice_sum, (a,))])
    assert helper.wait() is False
    assert kernels.twice_sum(a) == 6


@needs_fork
def test_a_kernel_that_does_not_compile_fails_in_the_caller(kernels):
    import numba

    a = np.arange(3, dtype=np.int32)
    helper = ahead.start([(kernels.untypable, (a,))])
    pid = helper.pid
    assert helper.wait() is False
    no_child_left(pid)
    with pytest.raises(numba.TypingError):
        kernels.untypable(a)


def test_no_helper_where_it_cannot_help(kernels, monkeypatch):
    a = np.arange(3, dtype=np.int32)
    calls = [(kernels.twice_sum, (a,))]
    assert ahead.start([(lambda x: x, (a,))]) is None                   # not a Numba dispatcher
    with monkeypatch.context() as m:
        m.setattr(ahead.os, "access", lambda path, mode: False)         # a read-only cache
        assert ahead.start(calls) is None
    kernels.twice_sum._cache.disable()
    assert ahead.start(calls) is None                                   # no on-disk cache
    monkeypatch.undo()                                                  # the real ahead.wanted
    with monkeypatch.context() as m:
        m.setattr(sys, "platform", "darwin")
        assert not ahead.wanted()
    with monkeypatch.context() as m:
        m.setitem(sys.modules, "mpi4py.MPI", object())
        assert not ahead.wanted()
    if hasattr(os, "sched_getaffinity"):
        with monkeypatch.context() as m:
            m.setattr(os, "sched_getaffinity", lambda pid: {0})
            assert not ahead.wanted()


# The blocked engine end to end with an empty cache, in a fresh process: the result against
# SciPy, which kernels that process compiled itself, and no process left behind.
SOLVE = textwrap.dedent('''
    import os, sys
    import numpy as np
    from scipy.sparse.csgraph import floyd_warshall
    import floydwarp as fw
    from floydwarp.cpu import ahead
    from numba.core import event

    compiled = []

    class Compiles(event.Listener):
        def on_start(self, e):
            compiled.append(e.data["dispatcher"].py_func.__name__)

        def on_end(self, e):
            pass

    event.register("numba:compile", Compiles())
    if sys.argv[1] == "killed":
        start = ahead.Helper.__init__

        def start_and_kill(self, jobs):
            start(self, jobs)
            os.kill(self.pid, 9)

        ahead.Helper.__init__ = start_and_kill
    dtype = "int32"
    g = fw.generate.erdos_renyi(150, 10, seed=3)
    want = floyd_warshall(g.to_matrix("float64", np.inf), directed=True)
    for pred in (False, True):
        r = fw.solve(g, dtype=dtype, backend="cpu", algorithm="blocked", block_size=32, predecessors=pred)
        assert np.array_equal(np.where(np.isinf(want), r.inf, want).astype(dtype), r.dist), dtype
    try:
        os.waitpid(-1, os.WNOHANG)
        print("a child is left")
    except ChildProcessError:
        pass
    print("helper" if ahead.wanted() else "no helper", sorted(set(compiled)))
''')


@pytest.mark.parametrize("fate", ["normal", "killed"])
def test_the_blocked_engine_with_an_empty_cache(tmp_path, fate):
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path)}
    out = subprocess.run([sys.executable, "-c", SOLVE, fate], env=env, capture_output=True, text=True,
                         check=True, timeout=600).stdout
    assert "a child is left" not in out
    helper = out.startswith("helper")
    main_compiled = "update_tiles" in out and "update_tiles_pred" in out
    assert main_compiled == (fate == "killed" or not helper), out
    assert "close_pivot" in out and "close_pivot_pred" in out           # compiled here in any case
