"""Test root: one page per way a tv-graph can go wrong (and a model with data-dependent control flow)."""

project = "tensorviz graph tests: bad inputs"
extensions = ["myst_parser", "sphinx_tensorviz"]
exclude_patterns = ["_build", "tensorviz_artifacts"]
tensorviz_workers = 2
tensorviz_timeout = 240
