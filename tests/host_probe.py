"""A test extension that watches the host process while sphinx-tensorviz draws a page (used by
tests/test_host_process.py; named in ``extensions`` after ``sphinx_tensorviz``).

For every page it notes the state of the process just before the figures are drawn (a
post-transform that runs before the extension's) and compares it with the state seen whenever
a page's nodes are translated while the figures are being drawn (the translator is a subclass of
Sphinx's own that looks at every paragraph), and with the state once every post-transform has run
(``doctree-resolved``): Sphinx's loggers' handlers, the builder's page attributes (the objects
themselves, not only their values) and the garbage collector's settings.
"""

from __future__ import annotations

import gc
import logging
from typing import Any

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.transforms.post_transforms import SphinxPostTransform
from sphinx.writers.html5 import HTML5Translator

#: what Sphinx's HTML builder sets for the page it writes, and its translator reads
PAGE_STATE = ("secnumbers", "fignumbers", "current_docname")
#: (where, docname, state) for each observation; "config" once, before anything is built
SEEN: list[tuple[str, str, dict[str, Any]]] = []
#: the application being built, and the page whose figures are being drawn
_window: dict[str, Any] = {}
_MISSING = object()


def state(builder: Any = None) -> dict[str, Any]:
    loggers = {name: logger for name, logger in logging.root.manager.loggerDict.items()
               if isinstance(logger, logging.Logger) and (name == "sphinx" or name.startswith("sphinx."))}
    return {
        "handlers": {name: [id(h) for h in logger.handlers] for name, logger in sorted(loggers.items())},
        "builder": {name: id(vars(builder).get(name, _MISSING)) for name in PAGE_STATE} if builder else None,
        "gc": (gc.get_freeze_count(), gc.isenabled(), gc.get_threshold()),
    }


class BeforeFigures(SphinxPostTransform):
    default_priority = 100  # sphinx_tensorviz's RenderFigures: 200

    def run(self, **kwargs: Any) -> None:
        _window["docname"] = self.env.docname
        SEEN.append(("before", self.env.docname, state(_window["app"].builder)))


class WatchingTranslator(HTML5Translator):
    def visit_paragraph(self, node: nodes.Element) -> None:
        if "docname" in _window:  # translated while the figures are drawn
            SEEN.append(("translating", _window["docname"], state(_window["app"].builder)))
        super().visit_paragraph(node)


def _resolved(app: Sphinx, doctree: nodes.document, docname: str) -> None:
    SEEN.append(("after", docname, state(app.builder)))
    del _window["docname"]


def setup(app: Sphinx) -> dict[str, Any]:
    SEEN.clear()
    _window.clear()
    _window["app"] = app
    SEEN.append(("config", "", state()))
    app.add_post_transform(BeforeFigures)
    app.set_translator("html", WatchingTranslator, override=True)
    app.connect("doctree-resolved", _resolved)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
