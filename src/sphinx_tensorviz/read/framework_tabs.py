"""The page around a figure with ``:frameworks:``: each framework's code in a synchronised tab set.

Made when the page is read, as the component nodes sphinx-design's ``tab-set`` directive makes (a
``tab-set`` container of ``tab-item`` containers, each a label rubric with a ``sync_id`` and a
``tab-content`` container), so that, when the course loads ``sphinx_design``, its HTML transform turns
them into its tabs: choosing JAX on one switches every tab set of the sync group ``tab`` on the page
(the group of an author's own ``tab-item`` with ``:sync: jax``), and the choice persists across pages.
Every other builder, and HTML without sphinx-design, writes the same nodes as they are: each framework's
name, then its code, in order. Without JavaScript every tab's content shows, in order (the package's
stylesheet, until its script marks the set ``tv-scripted``).
"""

from __future__ import annotations

from pathlib import Path

from docutils import nodes

from ..core.frameworks import Frameworks
from ..core.request import ExecutionRequest

#: how each framework is named on its tab
TAB_NAMES = {"torch": "PyTorch", "jax": "JAX"}
#: sphinx-design's sync group of a ``tab-item`` with ``:sync:`` and no ``:sync-group:`` on its set
SYNC_GROUP = "tab"
#: the class of a frameworks' tab set (the stylesheet shows every tab while no script runs)
TABS_CLASS = "tv-frameworks-tabs"


def framework_tabs(frameworks: Frameworks, srcdir: Path, figures: dict[str, nodes.Node] | None = None
                   ) -> nodes.container:
    """The tab set: per framework, its code (and its figure, for ``:show: both``)."""
    tab_set = _component("tab-set", ["sd-tab-set", TABS_CLASS])
    for name, request in frameworks.requests.items():
        label = nodes.rubric(TAB_NAMES.get(name, name), TAB_NAMES.get(name, name), classes=["sd-tab-label"])
        label["sync_id"], label["sync_group"] = name, SYNC_GROUP
        content = _component("tab-content", ["sd-tab-content"])
        content += code_listing(request, srcdir)
        if figures is not None:
            content += figures[name]
        item = _component("tab-item", ["sd-tab-item"], selected=False)
        item += [label, content]
        tab_set += item
    return tab_set


def code_listing(request: ExecutionRequest, srcdir: Path) -> nodes.literal_block:
    """The framework's file, as the page shows code (its path as the caption's text for screen readers)."""
    text = request.inline_code if request.inline_code is not None else (srcdir / request.entry).read_text("utf-8")
    block = nodes.literal_block(text, text, language="python", classes=["tv-framework-code"])
    block["tv-file"] = request.entry
    return block


def _component(name: str, classes: list[str], **attributes: object) -> nodes.container:
    """A sphinx-design component container (what its ``create_component`` makes), without importing it."""
    return nodes.container("", is_div=True, design_component=name, classes=classes, **attributes)
