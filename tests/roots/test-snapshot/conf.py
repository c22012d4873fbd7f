"""Test root: the output snapshots (tests/test_snapshots.py), one figure of each kind.

The build executes nothing: the artifacts in tensorviz_artifacts/ are committed, so every machine
draws the same figures. To record them again (after a schema change), delete the folder and build
once with ``-D tensorviz_execution_mode=auto``; see tests/snapshots/README.md.
"""

project = "tensorviz snapshots"
author = "sphinx-tensorviz tests"
copyright = "2026, sphinx-tensorviz tests"
version = release = "1.0"
today = "1 January 2026"  # the man page and LaTeX title carry the build date otherwise
extensions = ["myst_parser", "sphinx_tensorviz"]
html_theme = "basic"  # Sphinx's own (SphinxTestApp would switch alabaster to it anyway)
exclude_patterns = ["_build"]
myst_enable_extensions = ["dollarmath"]
tensorviz_execution_mode = "cache-only"
tensorviz_workers = 1
tensorviz_timeout = 120
man_pages = [("index", "snapshots", "tensorviz snapshots", [author], 1)]
