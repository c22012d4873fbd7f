"""Test root: one unusable value for every kind of check, and a value the project's own extension
declares the way a figure kind declares one (``_ext/tensorviz_course_values.py``)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent / "_ext"))

project = "tensorviz config tests"
extensions = ["myst_parser", "sphinx_tensorviz", "tensorviz_course_values"]
exclude_patterns = ["_build", "tensorviz_artifacts"]

tensorviz_execution_mode = "sometimes"
tensorviz_workers = 0
tensorviz_memory_limit_mb = -1
tensorviz_max_result_mb = True
tensorviz_timeout = "soon"
tensorviz_drawing_cache = "yes"
tensorviz_artifact_dir = 42
tensorviz_python = ["python3"]
tensorviz_course_level = 0
globals().update(tensorviz_device="tpu")  # not an assignment the check can find: unlocated
