"""CSS and JavaScript, copied once and linked only on pages that show a tensorviz figure."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from docutils import nodes
from sphinx.application import Sphinx

from .html_nodes import tv_html_figure, tv_html_tag, tv_html_translated

STATIC = Path(__file__).resolve().parent.parent / "static"


def add_static_path(app: Sphinx) -> None:
    if app.builder.format == "html" and str(STATIC) not in app.config.html_static_path:
        app.config.html_static_path.append(str(STATIC))


def _uses_tensorviz(node: nodes.Node) -> bool:
    """Figures, tours and checkpoints (HTML nodes) or a catalogue need the stylesheet."""
    return isinstance(node, (tv_html_figure, tv_html_tag, tv_html_translated)) or (
        isinstance(node, nodes.Element) and "tv-catalogue" in node.get("classes", ())
    )


def link_assets(app: Sphinx, pagename: str, templatename: str, context: dict[str, Any],
                doctree: nodes.document | None) -> None:
    if doctree is not None and any(True for _ in doctree.findall(_uses_tensorviz)):
        app.add_css_file("tensorviz/tensorviz.css")
        app.add_css_file("tensorviz/tensorviz-explore.css")  # sweeps and choices
        # deferred scripts run in order: shared helpers and module frames, graphs, then the page
        app.add_js_file("tensorviz/tensorviz-compose.js", loading_method="defer")
        app.add_js_file("tensorviz/tensorviz-graph.js", loading_method="defer")
        app.add_js_file("tensorviz/tensorviz.js", loading_method="defer")
        app.add_js_file("tensorviz/tensorviz-explore.js", loading_method="defer")  # sweeps and choices
