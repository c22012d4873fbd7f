"""Test root: one page per way lesson code or a directive can go wrong."""

project = "tensorviz failure tests"
extensions = ["myst_parser", "sphinx_tensorviz"]
exclude_patterns = ["_build", "tensorviz_artifacts"]
tensorviz_workers = 2
