"""Test root: the llama-decoder lesson's TinyLlama graph.

``models/tiny_llama.py`` is copied from ``lessons/models/`` by tests/test_graph_build.py when the
root is copied to a temporary folder, so the test always traces the lesson's current model.
"""

project = "tensorviz graph tests: TinyLlama"
extensions = ["myst_parser", "sphinx_tensorviz"]
exclude_patterns = ["_build", "tensorviz_artifacts"]
tensorviz_workers = 2
tensorviz_timeout = 240
