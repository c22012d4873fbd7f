"""Test root: torch.compile models, :expand: and :checkpoints: names that match nothing, and a tour
and activations that refer to a graph whose options failed (issue 24, points 3, 8, 18, 19)."""

project = "tensorviz graph tests: torch pages"
extensions = ["myst_parser", "sphinx_tensorviz"]
exclude_patterns = ["_build", "tensorviz_artifacts"]
tensorviz_workers = 2
tensorviz_timeout = 240
