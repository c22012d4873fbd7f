"""The post-transform that draws every figure of a page, for every builder.

Kept apart from the drawing code (:mod:`.transform`), which it imports only when a page is
written: setting the extension up, and a rebuild that writes no page, load none of it.
"""

from __future__ import annotations

from typing import Any

from sphinx.transforms.post_transforms import SphinxPostTransform


class RenderFigures(SphinxPostTransform):
    default_priority = 200

    def run(self, **kwargs: Any) -> None:
        from .transform import render_document

        render_document(self.document, self.env)
