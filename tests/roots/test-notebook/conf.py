"""Test root: a lesson's notebook (tests/test_notebook.py): MyST that must become plain CommonMark,
figures from a model file and from inline code, a page in a subfolder, and a page in reStructuredText."""

project = "tensorviz notebooks"
extensions = ["myst_parser", "sphinx_tensorviz"]
myst_enable_extensions = ["dollarmath", "colon_fence"]
exclude_patterns = ["_build"]
tensorviz_notebooks = True
tensorviz_workers = 1
tensorviz_timeout = 120
