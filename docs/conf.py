"""Sphinx configuration of floydwarp's documentation (docs/README.md says how to build it).

The API reference is read from the docstrings (autodoc, numpydoc); the Markdown pages (the README,
docs/*.md, bench/README.md and the notes) are read by MyST.  CI builds it with warnings as errors.
"""
import os
import sys

sys.path.insert(0, os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "src")))

import floydwarp  # noqa: E402 -- after the path above: the checkout's floydwarp, installed or not

project = "floydwarp"
author = "the floydwarp authors"
release = version = floydwarp.__version__

extensions = ["sphinx.ext.autodoc", "numpydoc", "myst_parser"]
source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
exclude_patterns = ["_build", "README.md"]          # docs/README.md: how to build these pages, for the repository
root_doc = "index"

# the docstrings: their own order, type hints in the signatures, no member tables numpydoc would add again
autodoc_member_order = "bysource"
autodoc_default_options = {"members": True, "show-inheritance": True}
autodoc_typehints = "signature"
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False

# Markdown: anchors for the README's section links, ``$`` left alone (shell and money, not maths)
myst_heading_anchors = 3
myst_enable_extensions = ["colon_fence"]

html_theme = "alabaster"
html_title = f"floydwarp {release}"
