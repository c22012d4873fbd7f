"""The sphinx-tensorviz manual."""

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent / "_ext"))

from sphinx_tensorviz import __version__  # noqa: E402

project = "sphinx-tensorviz"
author = "sphinx-tensorviz contributors"
copyright = "2026, sphinx-tensorviz contributors"
release = version = __version__

extensions = ["myst_parser", "sphinx_tensorviz", "schema_fields", "config_values"]
myst_enable_extensions = ["colon_fence", "deflist", "dollarmath"]
myst_heading_anchors = 3
exclude_patterns = ["_build", "tensorviz_artifacts", "README.md"]

html_theme = "alabaster"
html_title = "sphinx-tensorviz"

# The manual's own figures run once; their artifacts are committed in tensorviz_artifacts/.
# On Read the Docs nothing may execute: a missing artifact fails the build (fail_on_warning).
tensorviz_execution_mode = "cache-only" if os.environ.get("READTHEDOCS") == "True" else "auto"
tensorviz_workers = 1
