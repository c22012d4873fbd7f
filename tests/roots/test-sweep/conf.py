"""Test root: swept heatmaps (NumPy, so builds stay cheap), cross-sweep checks and choices."""

project = "tensorviz sweep tests"
extensions = ["myst_parser", "sphinx_tensorviz"]
exclude_patterns = ["_build", "tensorviz_artifacts"]
tensorviz_workers = 2
tensorviz_timeout = 90
copyright = "2026, tests"
version = release = "1"
