"""Test root: a causal language model's logit lens and activation patching, in PyTorch and Flax NNX."""

project = "tensorviz frameworks lm tests"
extensions = ["myst_parser", "sphinx_design", "sphinx_tensorviz"]
exclude_patterns = ["_build", "tensorviz_artifacts"]
tensorviz_workers = 2
tensorviz_timeout = 240
