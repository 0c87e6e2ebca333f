"""The package's import hygiene: no module imports another module's private names or reads a
private attribute of an object it did not define, floydwarp's import graph (function-level
imports included) has no cycle, and every import keeps to the layers below."""
from __future__ import annotations

import ast
from pathlib import Path

import floydwarp

ROOT = Path(floydwarp.__file__).resolve().parent


def _modules() -> dict[str, Path]:
    found = {}
    for path in ROOT.rglob("*.py"):
        parts = path.relative_to(ROOT.parent).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


MODULES = _modules()


def _package(name: str) -> str:
    """The package a module's relative imports start from."""
    return name if MODULES[name].name == "__init__.py" else name.rpartition(".")[0]


def _resolve(name: str, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    base = _package(name)
    for _ in range(node.level - 1):
        base = base.rpartition(".")[0]
    return f"{base}.{node.module}" if node.module else base


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def _sibling_module(importer: str, target: str) -> bool:
    """A private module used inside its own package (io/_text.py by io's parsers)."""
    return target in MODULES and _package(importer) == target.rpartition(".")[0]


def _scan(name: str, text: str | None = None):
    """(floydwarp modules ``name`` imports, the private names it takes from other modules)."""
    tree = ast.parse(MODULES[name].read_text() if text is None else text)
    edges, private, aliases = set(), [], {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            source = _resolve(name, node)
            if not source.startswith("floydwarp"):
                continue
            for alias in node.names:
                sub = f"{source}.{alias.name}"
                if sub in MODULES:                      # a module: ``from . import device``
                    edges.add(sub)
                    aliases[alias.asname or alias.name] = sub
                    if _private(alias.name) and not _sibling_module(name, sub):
                        private.append(f"{name} imports module {sub}")
                else:
                    edges.add(source)
                    if _private(alias.name):
                        private.append(f"{name} imports {alias.name} from {source}")
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("floydwarp") and alias.name in MODULES:
                    edges.add(alias.name)
                    if alias.asname:
                        aliases[alias.asname] = alias.name
    own = _own_private_names(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and _private(node.attr):
            base = node.value.id if isinstance(node.value, ast.Name) else None
            if base in aliases:
                private.append(f"{name} uses {aliases[base]}.{node.attr}")
            elif base not in ("self", "cls") and node.attr not in own and (name, node.attr) not in FOREIGN_PRIVATE:
                private.append(f"{name} reads {ast.unparse(node)}")
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
              and node.func.id in ("getattr", "hasattr", "setattr") and len(node.args) > 1
              and isinstance(node.args[1], ast.Constant) and isinstance(node.args[1].value, str)
              and _private(node.args[1].value) and node.args[1].value not in own):
            private.append(f"{name} reads {ast.unparse(node)}")
    edges.discard(name)
    return edges, private


def _own_private_names(tree) -> set[str]:
    """The private names a module defines: its functions, classes and variables, the attributes
    its methods set on ``self``/``cls``, its ``__slots__`` -- what it may read on any object."""
    own = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            own.add(node.name)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            own.add(node.id)
        elif (isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store) and isinstance(node.value, ast.Name)
              and node.value.id in ("self", "cls")):
            own.add(node.attr)
        elif isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__slots__"
                                                  for t in node.targets):
            own |= {c.value for c in ast.walk(node.value) if isinstance(c, ast.Constant) and isinstance(c.value, str)}
    return {n for n in own if _private(n)}


#: Private attributes of other libraries' objects that a module reads on purpose, and why.
FOREIGN_PRIVATE = {
    **{("floydwarp.cpu.ahead", attr): "Numba's dispatcher cache: whether a kernel is in the on-disk cache"
       for attr in ("_cache", "_enabled", "_index_key", "_cache_file", "_load_index")},
    ("floydwarp.cpu.ahead", "_exit"): "os._exit: the forked compile helper leaves without its parent's exit handlers",
    ("floydwarp.cli", "_exit"): "os._exit: an MPI rank that has finalized MPI ends without the interpreter's teardown",
    ("floydwarp.mpi.rows", "_typedict"): "mpi4py's NumPy type code -> MPI datatype table",
    ("floydwarp.nx_backend.edges", "_adj"): "NetworkX's adjacency dicts, read directly (G.adj makes a view a call)",
    ("floydwarp.nx_backend.measures", "_clear_cache"): "NetworkX's cache of converted graphs",
}


GRAPH = {}
PRIVATE = []
for _name in MODULES:
    GRAPH[_name], _found = _scan(_name)
    PRIVATE += _found


def test_no_module_imports_a_private_name_of_another():
    assert PRIVATE == []
    stale = [key for key in FOREIGN_PRIVATE if key[0] not in MODULES or f".{key[1]}" not in MODULES[key[0]].read_text()]
    assert stale == []


def _cycle(graph):
    """One cycle of the graph as a list of modules, or None."""
    state, stack = {}, []

    def visit(node):
        state[node] = "open"
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == "open":
                return stack[stack.index(nxt):] + [nxt]
            if nxt not in state:
                found = visit(nxt)
                if found:
                    return found
        stack.pop()
        state[node] = "done"
        return None

    for node in sorted(graph):
        if node not in state:
            found = visit(node)
            if found:
                return found
    return None


#: floydwarp's layers (docs/architecture.md draws them): the modules of each -- a package stands
#: for all of its modules, the longest name that matches decides -- and the layers they may
#: import.  The base imports no engine: an engine gives it what it needs by registering it
#: (``registry.register``, ``arrays.DEVICE_HELPERS``).  Front ends reach the engines through
#: ``solve`` and the registry.
LAYERS = {
    "base": (("errors", "numeric", "casts", "arrays", "progress", "plan", "options", "registry", "schedule",
              "tiling", "grid", "checkpoint", "predecessors", "cycles", "bfs", "team", "jit", "passes", "reductions",
              "graph", "io", "inputs", "dlpack", "draws", "result", "metrics", "dynamic", "certify", "checksum",
              "batch.graphs", "batch.pyg_layout", "batch.result", "batch.engines", "batch.lists", "batch.convert",
              "batch.dense"),
             {"base"}),
    "engines": (("cpu", "gpu", "mpi", "multigpu", "batch.cpu", "batch.gpu", "batch.kernels", "batch.steps",
                 "batch.vectors", "learn.graphormer_kernels", "learn.graphormer_gpu"),
                {"base", "engines"}),
    "front": (("", "__main__", "solver", "scipy_compat", "nx_backend", "cli", "generate", "batch"),
              {"base", "front", "bench"}),
    # the benchmarks measure the engines themselves (ceilings, panel products, kernels)
    "bench": (("bench",), {"base", "engines", "front", "bench"}),
}
#: imports across the layers by design, and why
CROSSINGS = {
    ("floydwarp.batch.gpu", "floydwarp.solver"): "a batch's graphs over 128 vertices go through solve()",
    ("floydwarp.batch.pyg_layout", "floydwarp.batch.kernels"): "PyG edges are read by one Numba pass (pyg_edges), "
                                                              "which lives with the batch CPU engine's kernels",
    ("floydwarp.batch.dense", "floydwarp.batch.kernels"): "the weights' scan of dense matrices reads them with the "
                                                         "solve's own vector loader (scan_dense)",
    ("floydwarp.batch.dense", "floydwarp.batch.steps"): "the scan is handed that loader (steps.load_dense)",
    ("floydwarp.cpu.precompile", "floydwarp"): "a script (python -m, at install) that runs the public API",
    ("floydwarp.scipy_compat", "floydwarp.cpu.steps"):
        "floyd_warshall on at most 64 vertices runs SciPy's loop in one Numba call, by measurement",
    ("floydwarp.cli.solve", "floydwarp.mpi.comm"): "under mpiexec only rank 0 prints",
    ("floydwarp.cli.solve", "floydwarp.mpi"): "a rank of an mpi GPU algorithm draws its graph on its own GPU",
    ("floydwarp.launch", "floydwarp.mpi"): "the command's entry point reads which GPU an MPI rank drives",
    ("floydwarp.launch", "floydwarp.mpi.comm"): "... and whether the launcher put every rank on one node",
    ("floydwarp.launch", "floydwarp.multigpu.nccl"): "a rank of an mpi GPU algorithm on several nodes starts NCCL "
                                                    "while its options are parsed and CuPy imports",
    **{("floydwarp.cli.solve", f"floydwarp.gpu.{m}"): "the CLI starts the GPU (CuPy, the generator's kernels) "
       "while it reads or draws the graph, and asks whether the GPU can draw it"
       for m in ("warm", "generate", "device")},
    ("floydwarp.generate", "floydwarp.gpu.generate"): "erdos_renyi(device=True) draws the graph on the GPU",
    ("floydwarp.nx_backend.dispatch", "floydwarp.cpu.storage"): "the memory a NetworkX call may take",
    **{("floydwarp.learn.graphormer", f"floydwarp.{m}"): "Graphormer's drop-ins run the batch engines' kernels "
       "themselves: a one-graph call takes microseconds, less than solve()'s dispatch, and a collate's edge "
       "inputs are kernels of their own"
       for m in ("batch.vectors", "learn.graphormer_kernels", "learn.graphormer_gpu")},
}


def _layer(module: str) -> str:
    relative = module.partition(".")[2]
    found, length = "front", -1
    for layer, (members, _) in LAYERS.items():
        for m in members:
            if (relative == m or relative.startswith(m + ".")) and len(m) > length:
                found, length = layer, len(m)
    return found


def _layer_breaches(graph) -> list[str]:
    return [f"{a} ({_layer(a)}) imports {b} ({_layer(b)})" for a, targets in sorted(graph.items())
            for b in sorted(targets)
            if _layer(b) not in LAYERS[_layer(a)][1] and (a, b) not in CROSSINGS]


def test_every_import_keeps_to_the_layers():
    assert _layer_breaches(GRAPH) == []
    assert all(pair in {(a, b) for a, bs in GRAPH.items() for b in bs} for pair in CROSSINGS)   # none stale


def test_the_import_graph_has_no_cycle():
    assert _cycle(GRAPH) is None, " -> ".join(_cycle(GRAPH))


def test_the_checks_see_what_they_must():
    """A private import, a private attribute of an imported module and a cycle are found
    where there is one (so a green run means something); lazy imports count."""
    code = "def f():\n    from .device import _blocks_per_sm\n    from . import device, tiles\n    device._x\n"
    edges, private = _scan("floydwarp.gpu.fast", code)
    assert edges == {"floydwarp.gpu.device", "floydwarp.gpu.tiles"}
    assert private == ["floydwarp.gpu.fast imports _blocks_per_sm from floydwarp.gpu.device",
                       "floydwarp.gpu.fast uses floydwarp.gpu.device._x"]
    assert _scan("floydwarp.io.mtx", "from . import _text")[1] == []      # private to its package
    code = "class A:\n    def f(self, g):\n        self._own = g._dense, getattr(g, '_csr'), self._own\n"
    assert _scan("floydwarp.dynamic", code)[1] == ["floydwarp.dynamic reads g._dense",
                                                   "floydwarp.dynamic reads getattr(g, '_csr')"]
    assert _layer_breaches({"floydwarp.numeric": {"floydwarp.gpu.checks", "floydwarp.errors"},
                            "floydwarp.mpi.output": {"floydwarp.io"}, "floydwarp.cpu.engine": {"floydwarp.solver"},
                            "floydwarp.solver": {"floydwarp.cpu.engine"}}) == [
        "floydwarp.cpu.engine (engines) imports floydwarp.solver (front)",
        "floydwarp.numeric (base) imports floydwarp.gpu.checks (engines)",
        "floydwarp.solver (front) imports floydwarp.cpu.engine (engines)"]
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) is None


def _imported_after(code: str) -> set[str]:
    """The modules a fresh interpreter holds after running ``code``."""
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-c", f"{code}\nimport sys; print(' '.join(sys.modules))"],
                         capture_output=True, text=True, check=True).stdout
    return set(out.split())


def test_the_command_starts_its_gpus_before_importing_anything():
    """``floydwarp.launch`` (the script's entry point) imports neither NumPy nor the rest of
    floydwarp before it has started the GPUs' contexts: ``import floydwarp`` is lazy."""
    held = _imported_after("import floydwarp.launch")
    assert not {m for m in held if m.startswith(("numpy", "click"))}
    assert {m for m in held if m.startswith("floydwarp")} == {"floydwarp", "floydwarp.launch"}


def test_the_package_loads_its_names_and_modules_when_first_used():
    """``fw.solve`` is the function even when the module that defines it was imported first (a
    submodule called ``solve`` would have replaced it); ``fw.io`` needs no import of its own."""
    held = _imported_after("import floydwarp.solver, floydwarp as fw; assert callable(fw.solve); "
                           "assert fw.io.read_graph and fw.generate.erdos_renyi; assert not hasattr(fw, 'nothing')")
    assert "floydwarp.io" in held


def test_start_up_imports_only_what_the_call_needs():
    """``import floydwarp`` imports neither SciPy, Numba nor Click (Numba's start-up imports
    SciPy's BLAS wrappers itself when a kernel first runs), ``import floydwarp.cli`` neither
    SciPy, Numba nor CuPy; backend="auto" imports no backend past the one it takes (AUTO_ORDER)."""
    held = _imported_after("import floydwarp")
    assert not {"scipy", "numba", "click"} & held
    held = _imported_after("import floydwarp.cli")          # every command registered, none run
    assert not {"scipy", "numba", "cupy"} & held
    held = _imported_after("import floydwarp as fw; fw.solve([[0, 1], [2, 0]], backend='auto')")
    assert "floydwarp.mpi.engine" not in held and "floydwarp.multigpu.engine" not in held
    # the main job on the CPU: no GPU module (gpu.generate's import took 15-20 ms of a 0.55 s process)
    held = _imported_after("from floydwarp.cli import main\ntry: main(['solve', '-g', '3'])\nexcept SystemExit: pass")
    assert "floydwarp.cpu.engine" in held and not {m for m in held if m.startswith("floydwarp.gpu")}


#: the most lines a module of the package may have: past it, a module does more than one thing
MAX_MODULE_LINES = 450


def test_no_module_is_over_the_line_limit():
    long = {name: n for name, path in MODULES.items() if (n := len(path.read_text().splitlines())) > MAX_MODULE_LINES}
    assert long == {}
