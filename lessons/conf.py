"""The sphinx-tensorviz transformers course."""

import os

project = "Transformers, executed"
author = "sphinx-tensorviz contributors"
copyright = "2026, sphinx-tensorviz contributors"
version = release = "2026.11"

extensions = ["myst_parser", "sphinx_tensorviz"]
# Slides (the "slides" extra): sphinx-build -b revealjs -t slides lessons lessons/_build/slides.
# Only under the tag: sphinx-revealjs is not safe for parallel reading, so it would make the
# website's `-j` builds serial (and warn).
if tags.has("slides"):  # noqa: F821 (Sphinx gives conf.py its tags)
    extensions.append("sphinx_revealjs")
    revealjs_style_theme = "white"  # the figures are drawn for a light page
myst_enable_extensions = ["dollarmath", "colon_fence", "deflist"]
exclude_patterns = ["_build", "README.md"]

# Any of alabaster, furo, pydata_sphinx_theme, sphinx_book_theme, sphinx_rtd_theme (the "themes" extra).
html_theme = os.environ.get("COURSE_THEME", "alabaster")
html_title = "Transformers, executed"
html_static_path = ["_static"]
# MyST's dollarmath sets MathJax's classes after conf.py runs; written here as it sets them, a
# rebuild finds the configuration unchanged (instead of "The configuration has changed").
mathjax4_config = {"options": {"processHtmlClass": "tex2jax_process|mathjax_process|math|output_area"}}


def setup(app):
    """The course's own accessibility fix for the default theme (its footer text is too light).

    Added here rather than in html_css_files, which Sphinx rewrites after conf.py runs (each entry
    becomes a (file, attributes) pair), so that value would differ on every rebuild.
    """
    if html_theme == "alabaster" and not tags.has("slides"):  # noqa: F821 (a deck has no alabaster footer)
        app.add_css_file("alabaster-contrast.css")
epub_show_urls = "no"
man_pages = [("index", "transformers-executed", project, [author], 7)]

# Lessons run once; their artifacts are committed in tensorviz_artifacts/. On Read the Docs
# (and wherever TENSORVIZ_MODE says so) nothing may execute: a missing artifact is a warning.
tensorviz_execution_mode = os.environ.get("TENSORVIZ_MODE") or ("cache-only" if os.environ.get("READTHEDOCS") else "auto")
tensorviz_workers = 2
tensorviz_timeout = 300

# A Jupyter notebook per lesson, linked from its page (docs/howto/notebooks.md).
tensorviz_notebooks = True
