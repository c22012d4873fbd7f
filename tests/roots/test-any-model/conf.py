"""Test root: PyTorch models that return structures, built by factories in helper files."""

project = "tensorviz tests: any PyTorch model"
extensions = ["myst_parser", "sphinx_tensorviz"]
exclude_patterns = ["_build", "tensorviz_artifacts"]
tensorviz_workers = 2
tensorviz_timeout = 120
