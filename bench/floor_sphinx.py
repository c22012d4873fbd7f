"""``python -m sphinx`` with every figure already made: the floor of a fresh-output build.

Used by ``bench_render_floor.py``. Every node the extension leaves for the page writer (figures,
activations, steps, lesson headers, catalogues) is replaced, when the page is written, by
ready-made HTML of :data:`FIGURE_BYTES` that Sphinx neither translates nor indexes: what a
perfect cache of translated figures would leave Sphinx to do. Nothing else changes (reading,
executing nothing, the search index of the prose, the theme), so the time over the plain pages
is what no drawing cache can take away.
"""

from __future__ import annotations

import sys
from typing import Any

from docutils import nodes

from sphinx_tensorviz.render import transform
from sphinx_tensorviz.render.html_nodes import markup

#: per replaced node; 40 of them on the course make about the extension's 1.45 MB of page HTML
FIGURE_BYTES = 36_000
_READY_MADE = "<div>" + "x" * (FIGURE_BYTES - 11) + "</div>"


def ready_made(document: nodes.document, env: Any) -> None:
    for node in list(document.findall(lambda n: type(n).__name__.startswith("tensorviz_"))):
        if node.parent is not None:
            node.replace_self(markup(_READY_MADE))


if __name__ == "__main__":
    transform.render_document = ready_made  # post_transform imports it when a page is written
    from sphinx.cmd.build import main

    sys.exit(main(sys.argv[1:]))
