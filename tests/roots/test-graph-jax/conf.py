"""Test root: a small JAX model with jax.named_scope, traced with :backend: jax."""

project = "tensorviz graph tests: JAX"
extensions = ["myst_parser", "sphinx_tensorviz"]
exclude_patterns = ["_build", "tensorviz_artifacts"]
tensorviz_workers = 1
tensorviz_timeout = 240
