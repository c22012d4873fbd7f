"""Test root: a figure kind from outside the package, ``tv-bar``, all of it in the package ``barchart/``
beside this file (``tests/test_new_kind.py``)."""

import os
import sys

sys.path.insert(0, os.path.dirname(__file__))

project = "tensorviz bar kind"
extensions = ["myst_parser", "sphinx_tensorviz", "barchart"]
exclude_patterns = ["_build", "tensorviz_artifacts"]
tensorviz_workers = 1
