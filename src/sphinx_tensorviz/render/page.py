"""One page being written, as the renderer and the features' page passes see it.

Built once per page by :func:`~.transform.render_document`: the store, the builder's format,
where files may go, the registry of figure kinds, and what a feature computed once for the page
(:attr:`Page.memo`: the graph kind keeps its named graphs there, shared by its tours and activations).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from docutils import nodes

from ..core.i18n import Words, untranslated
from ..core.limits import Limits, data_size_problem
from ..store.artifacts import ArtifactStore
from .cache import RenderCache
from .registry import Registry
from .slides import is_slides


@dataclass(frozen=True)
class RenderContext:
    """What a figure's drawing may use besides its artifact."""

    cache: RenderCache
    srcdir: Path
    outdir: Path | None = None  #: where figures may write files next to the page (HTML only)
    page: str = ""  #: the page's target URI, for relative links to those files
    #: the course's words in the build's language (:func:`..core.i18n.course_words`): a kind calls it
    #: on the author's words it draws that are not render options (a diagram's labels, a step's title)
    words: Words = untranslated
    #: what the page's words depend on besides the figure's own options (the language and its
    #: catalogues): empty in the extension's language; a key of any drawing with words not in its options
    language: str = ""


@dataclass
class Page:
    document: nodes.document
    env: Any
    builder: Any
    store: ArtifactStore
    ctx: RenderContext
    limits: Limits
    mode: str  #: ``tensorviz_execution_mode``
    registry: Registry
    #: graph name -> extra render options for its figure, left by page passes (a tour's markers)
    render_notes: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: what a feature computed once for this page (its key: the feature's own), e.g. the named graphs
    memo: dict[str, Any] = field(default_factory=dict)
    #: the kinds' parts kept as HTML (:class:`.part_cache.PartCache`), for HTML builders; else ``None``
    kept: Any = None

    @property
    def html(self) -> bool:
        return self.builder.format == "html"

    @property
    def scripted(self) -> bool:
        """HTML that readers open in a browser (an e-book reader runs no scripts, opens no downloads)."""
        return self.html and not self.builder.name.startswith("epub")

    @property
    def slides(self) -> bool:
        """A reveal.js deck (:mod:`.slides`): HTML advanced step by step, each slide meant to be seen whole."""
        return is_slides(self.builder)

    @property
    def docname(self) -> str:
        return self.env.docname

    def usable(self, artifact: Any) -> dict[str, Any] | None:
        """``artifact`` if it is one that can be drawn (stored, valid, within the figure limits)."""
        if isinstance(artifact, dict) and not data_size_problem(artifact["data"], self.limits):
            return artifact
        return None
