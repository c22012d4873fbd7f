"""Test root: every executed figure kind, and the figures drawn from a graph's artifact, whose
hashed options tests/test_part_keys.py changes one by one (the page is written from
``index.md.in`` with each variant; nothing is committed, everything executes)."""

project = "tensorviz kept keys"
extensions = ["myst_parser", "sphinx_tensorviz"]
html_theme = "basic"
exclude_patterns = ["_build"]
tensorviz_execution_mode = "auto"
tensorviz_workers = 1
tensorviz_timeout = 120
