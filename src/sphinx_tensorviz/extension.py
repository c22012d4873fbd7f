"""Wiring: every feature module's ``setup_*`` is called from here, in pipeline order.

read (directives collect requests) -> execute (after reading, in workers) ->
store (artifacts on disk) -> render (post-transform per builder).
"""

from __future__ import annotations

from typing import Any

from sphinx.application import Sphinx
from sphinx.environment import BuildEnvironment

from .config import settings, setup_config
from .core.nodes import tensorviz_figure, visit_unreplaced
from .execute.phase import execute_all, stale_documents
from .read.collector import RequestCollector
from .read.directives import HeatmapDirective
from .read.graph_directive import GraphDirective
from .read.lesson_directive import (
    CatalogueDirective,
    LessonDirective,
    tensorviz_catalogue,
    tensorviz_lesson,
)
from .read.steps_directive import (
    ActivationsDirective,
    StepDirective,
    StepsDirective,
    tensorviz_activations,
    tensorviz_step,
    tensorviz_steps,
)
from .render.assets import add_static_path, link_assets
from .render.execution_times import write_execution_times
from .render.html_nodes import setup_html_nodes
from .render.latex import setup_latex_nodes
from .render.transform import RenderFigures

#: bump when the shape of what is kept in the environment changes
ENV_VERSION = 2


def setup_extension(app: Sphinx) -> dict[str, Any]:
    setup_config(app)
    # read
    app.add_directive("tv-heatmap", HeatmapDirective)
    app.add_directive("tv-graph", GraphDirective)
    app.add_directive("tv-steps", StepsDirective)
    app.add_directive("tv-step", StepDirective)
    app.add_directive("tv-activations", ActivationsDirective)
    app.add_directive("tv-lesson", LessonDirective)
    app.add_directive("tv-catalogue", CatalogueDirective)
    for node in (tensorviz_figure, tensorviz_steps, tensorviz_step, tensorviz_activations, tensorviz_lesson,
                 tensorviz_catalogue):
        app.add_node(node, **{b: (visit_unreplaced, None) for b in ("html", "latex", "text", "man", "texinfo")})
    app.add_env_collector(RequestCollector)
    # execute + store
    app.connect("env-get-outdated", _documents_to_reread)
    app.connect("env-updated", _execute)
    # render
    setup_html_nodes(app)
    setup_latex_nodes(app)
    app.add_post_transform(RenderFigures)
    app.connect("builder-inited", add_static_path)
    app.connect("html-page-context", link_assets)
    app.connect("build-finished", write_execution_times)
    return {"env_version": ENV_VERSION, "parallel_read_safe": True, "parallel_write_safe": True}


def _documents_to_reread(app: Sphinx, env: BuildEnvironment, added: set[str], changed: set[str],
                         removed: set[str]) -> list[str]:
    """``env-get-outdated``: pages whose figures are missing or changed are read again."""
    return stale_documents(env, settings(app), added, changed, removed)


def _execute(app: Sphinx, env: BuildEnvironment) -> None:
    """``env-updated``: every page is read; execute what has no artifact (outside this process)."""
    execute_all(env, settings(app), app.verbosity)
