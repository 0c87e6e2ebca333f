"""The documented behaviour runs as documented: every Python block of docs/graph-learning.md
(the PyG ones need torch_geometric) and the doctests of the batch and graph-learning
modules, the INF marker's among them."""
from __future__ import annotations

import doctest
import importlib
import re
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parent.parent / "docs" / "graph-learning.md"
BLOCKS = re.findall(r"```python\n(.*?)```", DOC.read_text(), re.S)
MODULES = ["floydwarp.batch.solve", "floydwarp.batch.graphs", "floydwarp.learn.graphormer",
           "floydwarp.learn.dgl", "floydwarp.pyg"]


@pytest.mark.parametrize("k", range(len(BLOCKS)))
def test_doc_block_runs(k):
    if "torch_geometric" in BLOCKS[k]:
        pytest.importorskip("torch_geometric")
    exec(compile(BLOCKS[k], f"{DOC.name} block {k}", "exec"), {})


@pytest.mark.parametrize("name", MODULES)
def test_module_doctests(name):
    if name == "floydwarp.pyg":
        pytest.importorskip("torch_geometric")
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.failed == 0 and result.attempted > 0
