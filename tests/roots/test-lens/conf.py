"""Test root: ``tv-lens`` on unmodified transformers causal LMs built from tiny configs (random
weights, no download), on the course's induction model after a short recorded training
(``models/induction.py`` is copied in from ``lessons/`` by the test), and on a Flax NNX model that
names its pieces."""

project = "tensorviz tests: logit lens"
extensions = ["myst_parser", "sphinx_tensorviz"]
exclude_patterns = ["_build", "tensorviz_artifacts"]
tensorviz_workers = 2
tensorviz_timeout = 240
