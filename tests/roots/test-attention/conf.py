"""Test root: ``tv-attention`` on the course's kind of model, on unmodified transformers models built
from tiny configs (random weights, no download), and on a Flax NNX model."""

project = "tensorviz tests: attention grids"
extensions = ["myst_parser", "sphinx_tensorviz"]
exclude_patterns = ["_build", "tensorviz_artifacts"]
tensorviz_workers = 2
tensorviz_timeout = 240
