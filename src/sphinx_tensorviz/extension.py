"""The Sphinx glue: the one module that wires the stages and the features into Sphinx.

The pipeline (see ``docs/explanation/architecture.md``): ``read/`` directives describe
computations and leave nodes; after reading, ``execute/`` runs the cache misses in worker
processes and ``store/`` keeps the artifacts; at write time ``render/`` draws every figure
for the builder. Each figure kind is a feature (``features/<kind>``) with its own
``setup_<kind>`` that registers its directive, nodes, drawing and page passes; the hooks that
join the stages are the thin functions at the end of this module.
"""

from __future__ import annotations

import importlib
import pkgutil
from typing import Any

from sphinx.application import Sphinx
from sphinx.config import Config
from sphinx.environment import BuildEnvironment

from . import features
from .config import settings, setup_config
from .core.i18n import setup_i18n
from .core.nodes import add_placeholder_node, tensorviz_figure
from .quick_exit import setup_quick_exit
from .read.collector import RequestCollector
from .render.assets import copy_static_files, link_assets, link_slide_assets
from .render.html_nodes import setup_html_nodes
from .render.latex import setup_latex_nodes
from .render.post_transform import RenderFigures

#: bump when the shape of what is kept in the environment changes
ENV_VERSION = 5  # 5: the trainings and their uses (read/trained.py), which older environments lack


def setup_extension(app: Sphinx) -> dict[str, Any]:
    setup_config(app)
    setup_i18n(app)
    app.connect("config-inited", _check_backends)
    # read: the common figure node and the per-document tables; each feature adds its directives
    add_placeholder_node(app, tensorviz_figure)
    app.add_env_collector(RequestCollector)
    setup_features(app)
    # execute + store
    app.connect("env-get-outdated", _documents_to_reread)
    app.connect("env-updated", _execute)
    # render
    setup_html_nodes(app)
    setup_quick_exit(app)
    setup_latex_nodes(app)
    app.add_post_transform(RenderFigures)
    app.connect("builder-inited", copy_static_files)
    app.connect("builder-inited", link_slide_assets)  # a reveal.js deck (sphinx-revealjs)
    app.connect("html-page-context", link_assets)
    return {"env_version": ENV_VERSION, "parallel_read_safe": True, "parallel_write_safe": True}


def setup_features(app: Sphinx) -> None:
    """Call ``setup_<kind>`` of every package in ``features/``, in name order: a new figure kind is a
    new package there, nothing else."""
    for found in sorted(pkgutil.iter_modules(features.__path__), key=lambda m: m.name):
        module = importlib.import_module(f"{features.__name__}.{found.name}")
        getattr(module, f"setup_{found.name}")(app)


# The hooks import their stage when they run: setting the extension up loads none of the execution
# or drawing code, so ``sphinx-build`` starts as fast with the extension as without it.

def _check_backends(app: Sphinx, config: Config) -> None:
    """``config-inited``: a remote store or a Dask executor that cannot be used here falls back, loudly."""
    from .execute.executors import check_executor_config
    from .store.remote import check_store_config

    check_store_config(app, config)
    check_executor_config(app, config)


def _documents_to_reread(app: Sphinx, env: BuildEnvironment, added: set[str], changed: set[str],
                         removed: set[str]) -> list[str]:
    """``env-get-outdated``: pages whose figures are missing or changed are read again."""
    from .execute.phase import stale_documents

    return stale_documents(env, settings(app), added, changed, removed)


def _execute(app: Sphinx, env: BuildEnvironment) -> None:
    """``env-updated``: every page is read; execute what has no artifact (outside this process)."""
    from .execute.phase import execute_all

    execute_all(env, settings(app), app.verbosity)
