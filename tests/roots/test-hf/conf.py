"""Test root: Hugging Face ``transformers`` models used exactly as the library ships them.

The factories in ``models/hf_factories.py`` build unmodified model classes from tiny configs
(random weights, no download); the checks live in ``claims/hf_claims.py`` so no model file is
touched.
"""

project = "tensorviz tests: transformers models"
extensions = ["myst_parser", "sphinx_tensorviz"]
exclude_patterns = ["_build", "tensorviz_artifacts"]
tensorviz_workers = 2
tensorviz_timeout = 240
