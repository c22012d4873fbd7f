"""Test root: NumPy (inline and :source:), JAX and PyTorch heatmaps."""

project = "tensorviz heatmap tests"
extensions = ["myst_parser", "sphinx_tensorviz"]
exclude_patterns = ["_build", "tensorviz_artifacts"]
tensorviz_workers = 2
tensorviz_timeout = 90
