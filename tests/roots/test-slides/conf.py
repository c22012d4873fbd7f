"""Test root: the slide deck (tests/test_slides.py). A heading per slide, a heatmap with a
prediction, a traced graph with a guided tour, and a closing slide.

The build executes nothing: the artifacts in tensorviz_artifacts/ are committed. To record them
again (after a schema change), delete the folder and build once with
``-D tensorviz_execution_mode=auto``.
"""

project = "tensorviz slides"
author = "sphinx-tensorviz tests"
extensions = ["myst_parser", "sphinx_tensorviz", "sphinx_revealjs"]
exclude_patterns = ["_build"]
tensorviz_execution_mode = "cache-only"
tensorviz_workers = 1
tensorviz_timeout = 120
revealjs_style_theme = "white"
