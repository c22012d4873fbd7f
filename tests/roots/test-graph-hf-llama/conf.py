"""Test root: a Hugging Face ``transformers`` Llama (tiny config, random weights, no hub download).

The model is wrapped to return ``.logits`` until capture accepts a ``ModelOutput`` (issue 10).
Benchmarks copy this root and change ``:model-args:`` to draw 8- and 24-layer pages.
"""

project = "tensorviz graph tests: transformers Llama"
extensions = ["myst_parser", "sphinx_tensorviz"]
exclude_patterns = ["_build", "tensorviz_artifacts"]
tensorviz_workers = 1
tensorviz_timeout = 240
# the course's fix for the default theme's too-light footer, so axe checks the whole page
html_static_path = ["_static"]
html_css_files = ["alabaster-contrast.css"]
