"""Test root: what a result or a checkpoint *is* (issue 24: JAX pytree results, channels x length,
attention heads, complex results), drawn from real PyTorch, JAX and Equinox code."""

project = "tensorviz tests: layouts and results"
extensions = ["myst_parser", "sphinx_tensorviz"]
exclude_patterns = ["_build", "tensorviz_artifacts"]
tensorviz_workers = 1
tensorviz_timeout = 240
