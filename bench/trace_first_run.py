"""Timeline of the first run after install: where the main process and the compile helper spend
their time.

``python bench/trace_first_run.py [--runs N] [--cache] [--no-helper] [--json FILE]`` runs the
README's main job (``floydwarp solve --generate 2048 -p 25 -s 1``) as a process N times, each
with an empty Numba cache (a new ``NUMBA_CACHE_DIR``) and the package's ``__pycache__`` removed
(``--cache``: the cache filled once and kept, the warm second run; ``--no-helper``: without the
compile helper of cpu/ahead.py), and prints for each run the main process's
and the helper's marks in seconds from the moment the process was spawned: imports (Numba,
NumPy, SciPy, Click, floydwarp), the CLI's stages (generating the graph, ``solve``), the blocked
engine's (the helper's fork, the start tiles, the warm-up's kernels, the wait for the helper,
the compute), and every Numba compile or cache load.  The job is the CLI's own code, run by
``floydwarp.cli.main`` in a child process whose modules are wrapped as they are imported
(nothing is imported early: the order of imports is the CLI's); the marks cost microseconds.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

MAIN_JOB = ["solve", "--generate", "2048", "-p", "25", "-s", "1"]
#: modules whose import is timed (cumulative: what they import while they load counts)
TIMED_IMPORTS = ("numpy", "numba", "scipy", "click", "floydwarp", "floydwarp.cli.solve", "floydwarp.cpu.kernels",
                 "floydwarp.graph.kernels", "floydwarp.tiling", "llvmlite.binding")


# ----------------------------------------------------------------------------- the traced child
def _child(spawned, out, no_helper):
    import importlib.abc
    import importlib.machinery

    marks = []

    def mark(name, t0, t1=None):
        marks.append((name, t0 - spawned, None if t1 is None else t1 - spawned))

    def timed(fn, name):
        def wrapper(*a, **k):
            t0 = time.perf_counter()
            try:
                return fn(*a, **k)
            finally:
                mark(name, t0, time.perf_counter())
        return wrapper

    def patch_engine(engine):
        engine._solve_blocked = timed(engine._solve_blocked, "engine._solve_blocked")
        engine.start_tiles = timed(engine.start_tiles, "start_tiles")
        engine.unpacked = timed(engine.unpacked, "unpacked (result)")
        W = engine.BlockedWarmUp
        W.start_helper = timed(W.start_helper, "warm.start_helper (fork)")
        W.run = timed(W.run, "warm.run")
        engine.Tiles.__enter__ = timed(engine.Tiles.__enter__, "Tiles.__enter__ (crew start)")

    def patch_ahead(ahead):
        if no_helper:
            ahead.wanted = lambda: False
        ahead.Helper.wait = timed(ahead.Helper.wait, "helper.wait")
        original = ahead._compile_and_exit

        def traced(jobs, pipe, parent):            # in the helper: keep its marks in a file
            marks.clear()
            mark("helper: forked", time.perf_counter())
            real_exit = os._exit

            def leave(status):
                mark("helper: exit", time.perf_counter())
                with open(f"{out}.helper", "w") as f:
                    json.dump(marks, f)
                real_exit(status)

            os._exit = leave
            original(jobs, pipe, parent)
        ahead._compile_and_exit = traced

    def patch_dispatcher(dispatcher):
        depth = [0]
        compile_ = dispatcher.Dispatcher.compile

        def compile(self, sig):
            depth[0] += 1
            t0 = time.perf_counter()
            known = len(self.overloads)
            try:
                return compile_(self, sig)
            finally:
                depth[0] -= 1
                if len(self.overloads) > known:         # compiled or loaded (nested: indented)
                    name = f"{self.py_func.__module__}.{self.py_func.__qualname__}"
                    mark(f"{'  ' * depth[0]}numba {name}", t0, time.perf_counter())
        dispatcher.Dispatcher.compile = compile

    def patch_cli(cli_solve):
        cli_solve.generate_graph = timed(cli_solve.generate_graph, "cli: generate_graph")
        import floydwarp
        floydwarp.solve = timed(floydwarp.solve, "fw.solve")

    after = {"floydwarp.cpu.engine": patch_engine, "floydwarp.cpu.ahead": patch_ahead,
             "numba.core.dispatcher": patch_dispatcher, "floydwarp.cli.solve": patch_cli}

    def wrap(loader, name):
        exec_module = loader.exec_module

        def timed_exec(module):
            t0 = time.perf_counter()
            exec_module(module)
            if name in TIMED_IMPORTS:
                mark(f"import {name}", t0, time.perf_counter())
            if name in after:
                after[name](module)
        loader.exec_module = timed_exec              # this module's own loader object

    class Finder(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path, target=None):
            if name not in TIMED_IMPORTS and name not in after:
                return None
            spec = importlib.machinery.PathFinder.find_spec(name, path)
            if spec is not None and spec.loader is not None:
                wrap(spec.loader, name)
            return spec

    sys.meta_path.insert(0, Finder())
    mark("child: first line", time.perf_counter())
    sys.argv = ["floydwarp", *MAIN_JOB]
    from floydwarp.cli import main
    try:
        main()
    except SystemExit:
        pass
    mark("child: done", time.perf_counter())
    with open(out, "w") as f:
        json.dump(marks, f)


# ----------------------------------------------------------------------------- the driver
def _clear_bytecode():
    import floydwarp

    for folder in Path(floydwarp.__file__).parent.rglob("__pycache__"):
        shutil.rmtree(folder, ignore_errors=True)


def _one(env, out, no_helper):
    t0 = time.perf_counter()
    subprocess.run([sys.executable, __file__, "--child", repr(t0), out, str(int(no_helper))], env=env, check=True,
                   stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - t0
    with open(out) as f:
        main = json.load(f)
    helper = []
    if os.path.exists(out + ".helper"):
        with open(out + ".helper") as f:
            helper = json.load(f)
        os.remove(out + ".helper")
    return wall, main, helper


def _show(wall, main, helper):
    print(f"--- wall {wall:.3f} s")
    rows = [(t0, t1, name) for name, t0, t1 in main] + [(t0, t1, "    [helper] " + name) for name, t0, t1 in helper]
    for t0, t1, name in sorted(rows):
        span = f"{t0:7.3f} - {t1:7.3f} ({1e3 * (t1 - t0):7.1f} ms)" if t1 is not None else f"{t0:7.3f}"
        print(f"  {span:34s} {name}")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--cache", action="store_true", help="warm runs: the Numba cache filled and kept")
    parser.add_argument("--no-helper", action="store_true", help="no compile helper (ahead.wanted() False)")
    parser.add_argument("--json", default=None, help="also write every run's marks here")
    args = parser.parse_args(argv)
    env = dict(os.environ)
    runs = []
    with tempfile.TemporaryDirectory(prefix="fw-trace-") as work:
        out = os.path.join(work, "marks.json")
        for _ in range(args.runs):
            with tempfile.TemporaryDirectory(prefix="floydwarp-numba-cache-") as cache:
                if args.cache:
                    _one({**env, "NUMBA_CACHE_DIR": cache}, out, args.no_helper)
                else:
                    _clear_bytecode()
                run = _one({**env, "NUMBA_CACHE_DIR": cache}, out, args.no_helper)
            _show(*run)
            runs.append({"wall_s": run[0], "main": run[1], "helper": run[2]})
    if args.json:
        with open(args.json, "w") as f:
            json.dump(runs, f, indent=1)


if __name__ == "__main__":
    if len(sys.argv) == 5 and sys.argv[1] == "--child":
        _child(float(sys.argv[2]), sys.argv[3], sys.argv[4] == "1")
    else:
        main()
