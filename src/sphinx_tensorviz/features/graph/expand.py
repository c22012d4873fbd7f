"""``:expand:`` names modules to open; a name the graph does not have is a located warning.

The option only changes the drawing, so it is checked when the page is written, against the
recorded graph: a typo used to open nothing, silently. The warning lists the closest module
paths (transformers 5 renamed ViT's ``encoder.layer.N`` to ``layers.N``; authors will write the
old one), and comes again on every build that writes the page.
"""

from __future__ import annotations

from ...core.closest import closest_names
from ...core.ids import canonical
from ...core.nodes import tensorviz_figure
from ...render.page import Page
from ...warnings_ import Subtype, warn

__all__ = ["check_expand"]


def check_expand(page: Page) -> None:
    """The page pass: each ``:expand:`` name of each drawn ``tv-graph`` is a node of its graph."""
    for node in page.document.findall(tensorviz_figure):
        request = node["request"]
        if request is None or request.directive != "tv-graph" or not request.render.get("expand"):
            continue
        artifact = page.usable(page.store.read_artifact(request.content_hash))
        if artifact is None:
            continue  # the figure itself says why it is not drawn
        layers = artifact["data"]["layers"]
        ids = {layer["id"] for layer in layers}
        modules = [layer["id"] for layer in layers if layer.get("kind") == "module"]
        for name in request.render["expand"]:
            if name in ids or canonical(name) in ids:
                continue
            close = closest_names(name, modules)
            which, listed = ("closest module paths", close) if close else \
                ("top-level modules", [m for m in modules if "." not in m][:8])
            warn(f"tv-graph: :expand: {name!r} is not a module of the graph; its {which}: "
                 f"{', '.join(listed) or 'none'}", Subtype.option, location=node)
