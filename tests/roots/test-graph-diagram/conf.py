"""Test root: authored diagrams (a YAML file and an inline body) and a broken one."""

project = "tensorviz graph tests: diagrams"
extensions = ["myst_parser", "sphinx_tensorviz"]
exclude_patterns = ["_build", "tensorviz_artifacts"]
