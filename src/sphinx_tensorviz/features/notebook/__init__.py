"""A notebook per lesson: the page's prose, its figures' code, and their recorded outputs.

With ``tensorviz_notebooks = True`` (declared in ``config.py``), an HTML build writes, for each lesson (a page with a
``tv-lesson`` header or an executed figure, written in MyST Markdown), ``LESSON.ipynb`` (nbformat 4:
the prose as Markdown cells, each figure as a code cell that recomputes it, showing the recorded
figure and table until it is run) and ``LESSON-notebook.zip`` (the notebook with the lesson's code
files, laid out as its cells load them), and links both from the top of the page. Built when the
build has finished (:mod:`.write`); the link is a page pass (:mod:`.link`). Nothing is executed.
"""

from __future__ import annotations

from sphinx.application import Sphinx

from ...render.registry import add_page_pass, lazy

#: after the lesson headers (30), before the figures are drawn
ORDER = 40


def setup_notebook(app: Sphinx) -> None:
    add_page_pass(app, ORDER, lazy(f"{__name__}.link:link_notebook"))
    app.connect("build-finished", lazy(f"{__name__}.write:write_notebooks"))
