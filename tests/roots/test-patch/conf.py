"""Test root: ``tv-patch`` on a model small enough to patch by hand, on unmodified transformers causal
LMs built from tiny configs (random weights, no download), and (the test copies the course's model in)
on a briefly trained course model."""

project = "tensorviz tests: activation patching"
extensions = ["myst_parser", "sphinx_tensorviz"]
exclude_patterns = ["_build", "tensorviz_artifacts"]
tensorviz_workers = 2
tensorviz_timeout = 240
