"""An authored diagram as :class:`~sphinx_tensorviz.render.parts.FigureParts`: drawn as given."""

from __future__ import annotations

from functools import partial
from typing import Any

from docutils import nodes

from ...core.hashing import digest
from ...core.i18n import Words, _, untranslated
from ...core.request import renderer_fingerprint
from ...render.cache import RenderCache
from ...render.parts import FigureParts
from ...render.registry import Authored
from ...render.svg import ID_TOKEN
from .directive import TEXT_FIELDS


def diagram_parts(diagram: dict[str, Any], render: dict[str, Any], cache: RenderCache) -> FigureParts:
    """An authored diagram: drawn as given, with its reading as the long description."""
    merged = {**diagram, **{k: v for k, v in render.items() if k in ("title", "alt")}}
    title = merged.get("title") or _("Diagram")
    alt = merged.get("alt") or merged.get("reading") or title
    merged.update(title=title, alt=alt)
    key = digest(merged)  # the drawing's cache key also names the drawing code, so new code redraws
    svg = cache.svg(key, digest({"renderer": renderer_fingerprint(), "diagram": key}),
                    partial(_diagram_to_svg, merged, id_prefix=ID_TOKEN))
    details: list[nodes.Node] = []
    for text in (render.get("description"), diagram.get("reading")):
        if text:
            details.append(nodes.paragraph("", text, classes=["tv-longdesc"]))
    return FigureParts(title=title, alt=alt, svg=svg, details=details, draw_pdf=lambda path: _diagram_pdf(merged, path))


def _diagram_to_svg(*args: Any, **kwargs: Any) -> str:
    """The drawing code, imported on a drawing-cache miss only (a cached diagram needs none of it)."""
    from .svg import diagram_to_svg

    return diagram_to_svg(*args, **kwargs)


def _diagram_pdf(diagram: dict[str, Any], path: Any) -> None:
    from .pdf import diagram_pdf  # the LaTeX builder's only

    diagram_pdf(diagram, path)


def diagram_footer(diagram: dict[str, Any]) -> str:
    scope = diagram.get("scope")
    return _("Authored diagram, not a recorded computation") + (f" · {scope}" if scope else "")



def translated_diagram(diagram: dict[str, Any], words: Words) -> dict[str, Any]:
    """The diagram with its words in the page's language (as :func:`diagram_words` lists them)."""
    if words is untranslated:
        return diagram
    panel = diagram["panel"]

    def labelled(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [{**item, "label": words(str(item["label"]))} if item.get("label") else item for item in items]

    return {**diagram, **{name: words(diagram[name]) for name in TEXT_FIELDS if isinstance(diagram.get(name), str)},
            "panel": {**panel, "nodes": labelled(panel["nodes"]), "edges": labelled(panel.get("edges") or [])}}


def diagram_figure(node: nodes.Element, ctx: Any) -> Authored:
    """The authored kind's figure: the prediction comes from the directive, else from the diagram."""
    diagram, render = translated_diagram(node["diagram"], ctx.words), node["render"]
    return Authored(diagram_parts(diagram, render, ctx.cache), {"prediction": diagram.get("prediction"), **render},
                    diagram_footer(diagram), "tv-diagram")
