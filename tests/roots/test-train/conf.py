"""Test root: tiny recorded training runs (PyTorch, Flax NNX and Equinox)."""

project = "tensorviz train tests"
extensions = ["myst_parser", "sphinx_tensorviz"]
exclude_patterns = ["_build", "tensorviz_artifacts"]
tensorviz_workers = 2
tensorviz_timeout = 120
