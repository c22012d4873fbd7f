"""Test root: a recorded training run whose model later figures use (``:model: @fit``, ``@fit:10``)."""

project = "tensorviz trained-model tests"
extensions = ["myst_parser", "sphinx_tensorviz"]
exclude_patterns = ["_build", "tensorviz_artifacts"]
tensorviz_workers = 2
tensorviz_timeout = 120
