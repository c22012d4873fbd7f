"""CSS and JavaScript, copied once and linked only on pages that show a tensorviz figure."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from docutils import nodes
from sphinx.application import Sphinx

from .html_nodes import tv_html_figure, tv_html_tag, tv_html_translated
from .registry import registry
from .script_words import words_script
from .slides import SLIDE_CSS, SLIDE_JS, is_slides
from .words import translated_language

STATIC = Path(__file__).resolve().parent.parent / "static"


def copy_static_files(app: Sphinx) -> None:
    """``builder-inited``: copy ``static/`` into an HTML builder's ``_static`` folder.

    Not through ``html_static_path``: a value changed after conf.py ran differs from the pickled
    one, and Sphinx then says "The configuration has changed" and reads every page again on each
    rebuild. Copied now, the files are there for every HTML builder (singlehtml emits no
    ``html-collect-pages``) and before epub packs its archive. A file is written only when its
    bytes differ, so a rebuild touches nothing.
    """
    if app.builder.format != "html":
        return
    target = Path(app.builder.outdir) / "_static"
    for source in sorted(STATIC.rglob("*")):
        if source.is_file():
            dest = target / source.relative_to(STATIC)
            data = source.read_bytes()
            if not dest.is_file() or dest.read_bytes() != data:
                dest.parent.mkdir(parents=True, exist_ok=True)
                dest.write_bytes(data)


def _uses_tensorviz(node: nodes.Node) -> bool:
    """Figures, tours and checkpoints (HTML nodes) or a catalogue need the stylesheet."""
    return isinstance(node, (tv_html_figure, tv_html_tag, tv_html_translated)) or (
        isinstance(node, nodes.Element) and "tv-catalogue" in node.get("classes", ())
    )


def link_assets(app: Sphinx, pagename: str, templatename: str, context: dict[str, Any],
                doctree: nodes.document | None) -> None:
    if doctree is not None and any(True for _ in doctree.findall(_uses_tensorviz)):
        _link(app)


def link_slide_assets(app: Sphinx) -> None:
    """``builder-inited``: a reveal.js deck links the assets on every page, with its own after them.

    sphinx-revealjs gives each page a copy of the builder's stylesheets (to add its theme) before
    ``html-page-context``, so a stylesheet linked there for one page never reaches that page: a
    deck's figures would be drawn without their CSS. Linked now, they are in every page's copy.
    """
    if is_slides(app.builder):
        _link(app, slides=True)


def _link(app: Sphinx, *, slides: bool = False) -> None:
    app.add_css_file("tensorviz/tensorviz.css")
    app.add_css_file("tensorviz/tensorviz-explore.css")  # sweeps and choices
    if slides:
        app.add_css_file(SLIDE_CSS)
    if translated_language(app.config):  # the scripts' words, set before any of them runs
        app.add_js_file(None, body=words_script())
    # deferred scripts run in order: shared helpers and module frames, the kinds' own, then the page
    app.add_js_file("tensorviz/tensorviz-compose.js", loading_method="defer")
    for script in dict.fromkeys(s for kind in registry(app).executed.values() for s in kind.scripts):
        app.add_js_file(script, loading_method="defer")
    app.add_js_file("tensorviz/tensorviz.js", loading_method="defer")
    app.add_js_file("tensorviz/tensorviz-explore.js", loading_method="defer")  # sweeps and choices
    if slides:
        app.add_js_file(SLIDE_JS, loading_method="defer")  # after tensorviz.js: it uses the page's graphs
