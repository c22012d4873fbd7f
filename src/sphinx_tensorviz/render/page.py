"""One page being written, as the renderer and the features' page passes see it.

Built once per page by :func:`~.transform.render_document`: the store, the builder's format,
where files may go, the registry of figure kinds, and the named graphs of the page (read once,
shared by the graph's figure, its tours and its activations).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from docutils import nodes

from ..core.limits import Limits, data_size_problem
from ..core.nodes import FAILED_GRAPH, tensorviz_figure
from ..core.sweep import Sweep
from ..store.artifacts import ArtifactStore
from ..warnings_ import Subtype, warn
from .cache import RenderCache
from .graph_page import GraphOnPage
from .registry import Registry
from .sweep_figures import point_figure_id


@dataclass(frozen=True)
class RenderContext:
    """What a figure's drawing may use besides its artifact."""

    cache: RenderCache
    srcdir: Path
    outdir: Path | None = None  #: where figures may write files next to the page (HTML only)
    page: str = ""  #: the page's target URI, for relative links to those files


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
    def docname(self) -> str:
        return self.env.docname

    def usable(self, artifact: Any) -> dict[str, Any] | None:
        """``artifact`` if it is one that can be drawn (stored, valid, within the figure limits)."""
        if isinstance(artifact, dict) and not data_size_problem(artifact["data"], self.limits):
            return artifact
        return None

    @cached_property
    def graphs(self) -> dict[str, GraphOnPage | None]:
        """Named ``tv-graph`` figures of this page (``None`` where the artifact is missing: the figure
        itself says why). A swept graph's tours and links go to its first point's figure."""
        found: dict[str, GraphOnPage | None] = {}
        for node in self.document.findall(tensorviz_figure):
            request = node["request"]
            if request is None or request.directive != "tv-graph":
                continue
            usable = self.usable(self.store.read_artifact(request.content_hash))
            figure_id = node["figure_id"] if node.get("sweep") is None else point_figure_id(node["figure_id"], 0)
            for name in node["names"]:
                found[name] = usable and GraphOnPage(
                    figure_id, usable, request.render.get("depth", 2), tuple(request.render.get("expand", ()))
                )
        return found

    def graph_for(self, node: nodes.Element, what: str) -> GraphOnPage | None:
        """The graph ``node`` names in ``graph``; a located warning when the page has none of that name."""
        name = node["graph"]
        if name not in self.graphs and name in self.failed_graphs:
            warn(f"{what}: the tv-graph named {name!r} failed ({self.failed_graphs[name]}: see its warning), "
                 "so there is nothing to show", Subtype.target, location=node)
            return None
        if name not in self.graphs:
            known = ", ".join(sorted(self.graphs)) or "none on this page"
            warn(f"{what}: no tv-graph named {name!r} on this page (named graphs: {known})", Subtype.target,
                 location=node)
            return None
        return self.graphs[name]  # None: the graph itself already warns about its missing artifact

    @cached_property
    def failed_graphs(self) -> dict[str, str]:
        """Named ``tv-graph`` directives of this page that failed to read: name -> ``file:line``
        (relative to the source folder)."""
        srcdir = Path(self.env.srcdir)
        found: dict[str, str] = {}
        for box in self.document.findall(nodes.error):
            if box.get(FAILED_GRAPH):
                source = Path(box.source or self.env.doc2path(self.docname))
                where = source.relative_to(srcdir).as_posix() if source.is_relative_to(srcdir) else source.name
                found[box[FAILED_GRAPH]] = f"{where}:{box.line}"
        return found

    @cached_property
    def swept_graphs(self) -> dict[str, tuple[str, Sweep]]:
        """Named swept ``tv-graph`` figures: name -> (figure id, sweep)."""
        return {name: (node["figure_id"], node["sweep"])
                for node in self.document.findall(tensorviz_figure)
                if node["request"] is not None and node["request"].directive == "tv-graph" and node.get("sweep")
                for name in node["names"]}
