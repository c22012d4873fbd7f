"""Test root: training runs that diverge or log a million steps."""

project = "tensorviz train limits"
extensions = ["myst_parser", "sphinx_tensorviz"]
exclude_patterns = ["_build", "tensorviz_artifacts"]
tensorviz_workers = 2
tensorviz_timeout = 120
