"""Test root for the tensorviz command: two NumPy heatmaps, one importing a local helper."""

project = "tensorviz cli tests"
extensions = ["myst_parser", "sphinx_tensorviz"]
exclude_patterns = ["_build", "tensorviz_artifacts"]
tensorviz_workers = 2
tensorviz_timeout = 60
