"""The sphinx-tensorviz transformers course."""

project = "Transformers, executed"
author = "sphinx-tensorviz contributors"
copyright = "2026, sphinx-tensorviz contributors"

extensions = ["myst_parser", "sphinx_tensorviz"]
myst_enable_extensions = ["dollarmath", "colon_fence", "deflist"]
exclude_patterns = ["_build", "README.md"]

html_theme = "alabaster"
html_title = "Transformers, executed"

# Lessons run once; their artifacts are committed in tensorviz_artifacts/.
tensorviz_execution_mode = "auto"
tensorviz_workers = 2
tensorviz_timeout = 300
