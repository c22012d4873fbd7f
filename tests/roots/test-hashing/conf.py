"""Test root: variants of one figure, to compare content and renderer hashes (nothing executes)."""

project = "tensorviz hashing tests"
extensions = ["myst_parser", "sphinx_tensorviz"]
exclude_patterns = ["_build", "tensorviz_artifacts"]
tensorviz_execution_mode = "off"
