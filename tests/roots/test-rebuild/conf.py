"""Test root: two small NumPy figures on one page, for incremental-build tests."""

project = "tensorviz rebuild tests"
extensions = ["myst_parser", "sphinx_tensorviz"]
exclude_patterns = ["_build", "tensorviz_artifacts"]
tensorviz_workers = 2
tensorviz_timeout = 60
