"""Test root: each structured option written the ways a MyST author writes it (tests/test_yaml_options.py).

The pages are written by the test; nothing executes (the requests the directives read are compared).
"""

project = "tensorviz option forms"
extensions = ["myst_parser", "sphinx_tensorviz"]
exclude_patterns = ["_build", "tensorviz_artifacts"]
tensorviz_execution_mode = "off"
