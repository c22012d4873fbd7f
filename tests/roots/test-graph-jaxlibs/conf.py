"""Test root: tiny Flax NNX, Flax Linen and Equinox models traced with :backend: jax."""

project = "tensorviz graph tests: JAX libraries"
extensions = ["myst_parser", "sphinx_tensorviz"]
exclude_patterns = ["_build", "tensorviz_artifacts"]
tensorviz_workers = 1
tensorviz_timeout = 240
