"""Test root: figures computed in PyTorch and in JAX (Flax NNX, Equinox), with shared weights, compared."""

project = "tensorviz frameworks tests"
extensions = ["myst_parser", "sphinx_design", "sphinx_tensorviz"]
exclude_patterns = ["_build", "tensorviz_artifacts"]
tensorviz_workers = 2
tensorviz_timeout = 240
