"""Keep right-to-left override characters in labels from reordering the text around them.

Labels come from lesson code and artifacts (untrusted). A label holding U+202E
(RIGHT-TO-LEFT OVERRIDE) would otherwise flip the rest of its line, so e.g. a
tooltip or table row reads differently from what it says. A label with any
directional control is wrapped in FIRST STRONG ISOLATE ... POP DIRECTIONAL
ISOLATE, which ends every embedding and override opened inside it (Unicode
UAX #9), the text equivalent of ``<bdi>``; isolate controls inside it are
dropped so it cannot close the wrapper early. Other labels are left unchanged,
so output without such characters stays byte-identical.
"""

from __future__ import annotations

import re
from typing import Any

from docutils import nodes

FSI, PDI = "\u2068", "\u2069"
_CONTROLS = re.compile("[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
_ISOLATES = re.compile("[\u2066-\u2069]")
_CLOSED = re.compile(f"{FSI}[^\u2066-\u2069]*{PDI}")


def isolate(text: str) -> str:
    """``text`` wrapped in an isolate if it holds directional controls, else unchanged."""
    if not _CONTROLS.search(text):
        return text
    return FSI + _ISOLATES.sub("", text) + PDI


def without_controls(text: str) -> str:
    """``text`` with every directional control removed: for output that does no bidi reordering
    of its own (matplotlib), where the controls could only show as missing glyphs."""
    return _CONTROLS.sub("", text)


def is_isolated(text: str) -> bool:
    """Whether every directional control in ``text`` already sits inside a closed isolate (the PDI
    ends whatever was opened inside it), so a text cleaned once is not wrapped again."""
    return _CONTROLS.search(text) is None or _CONTROLS.search(_CLOSED.sub("", text)) is None


def isolate_text_nodes(tree: nodes.Node) -> None:
    """Isolate every text node under ``tree`` (a figure built from an artifact) in place."""
    for text in list(tree.findall(nodes.Text)):
        if isinstance(text.parent, nodes.raw):  # markup: its SVG text is isolated by svg.text already
            continue
        isolated = isolate(str(text))
        if isolated != str(text) and text.parent is not None:
            text.parent.replace(text, nodes.Text(isolated))


def isolated(made: Any) -> Any:
    """A node (or list of nodes) built from an artifact, with the directional overrides in its texts
    isolated: for the figures and for everything page passes draw from artifacts."""
    for node in made if isinstance(made, list) else [made]:
        isolate_text_nodes(node)
    return made
