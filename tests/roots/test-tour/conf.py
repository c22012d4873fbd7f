extensions = ["myst_parser", "sphinx_tensorviz"]
exclude_patterns = ["_build"]
tensorviz_workers = 1
tensorviz_timeout = 120
myst_enable_extensions = ["dollarmath"]
