"""Write every lesson's notebook when an HTML build has finished, next to its pages.

On ``build-finished``, so that every figure of every lesson has run (or been found) first; from
the environment (the doctrees Sphinx read, the tables of requests and lessons) and the store, so
the notebooks are the same whether the pages were written in this build or kept from the last one.
Files are written only when changed (:func:`~...render.outputs.write_if_changed`).
"""

from __future__ import annotations

import json
from pathlib import Path, PurePosixPath
from typing import Any

from sphinx.application import Sphinx

from ...config import settings
from ...core.limits import Limits
from ...core.state import lessons_of, requests_of
from ...render.cache import RenderCache, drawing_cache_folder
from ...render.outputs import OUTPUT_FOLDER, stable_zip, write_if_changed
from ...render.page import RenderContext
from ...render.registry import registry
from ...store.build import build_store
from .build import Lesson, executed_figures, inputs_key, notebook

#: where the notebooks go, relative to the HTML output folder
FOLDER = f"{OUTPUT_FOLDER}/notebooks"


def enabled(app: Sphinx) -> bool:
    """Notebooks are on, and the builder writes web pages a reader downloads files from."""
    builder = app.builder
    return bool(settings(app).notebooks) and builder.format == "html" and not builder.name.startswith("epub")


def lesson_pages(env: Any) -> list[str]:
    """The pages that get a notebook: lessons and pages with executed figures, written in MyST Markdown."""
    pages = set(lessons_of(env)) | {docname for docname, requests in requests_of(env).items() if requests}
    return sorted(d for d in pages if d in env.found_docs and Path(env.doc2path(d)).suffix == ".md")


def notebook_files(docname: str) -> tuple[str, str]:
    """The notebook's and its zip's paths, relative to the output folder."""
    return f"{FOLDER}/{docname}.ipynb", f"{FOLDER}/{docname}-notebook.zip"


def write_notebooks(app: Sphinx, exception: Exception | None) -> None:
    if exception is not None or not enabled(app):
        return
    env = app.env
    conf = settings(app)
    store = build_store(env, conf)
    kinds = registry(app).executed
    cache = RenderCache(drawing_cache_folder(conf.drawing_cache, Path(env.doctreedir)))
    outdir = Path(app.builder.outdir)
    limits = Limits.from_settings(conf)
    for docname in lesson_pages(env):
        source = Path(env.doc2path(docname))
        text = source.read_text(app.config.source_encoding)
        lesson = Lesson(docname, text.removeprefix("\ufeff"), executed_figures(env.get_doctree(docname)), kinds, store,
                        RenderContext(cache, Path(env.srcdir)), limits, depth=docname.count("/"))
        ipynb, archive = notebook_files(docname)
        if (outdir / archive).is_file() and _made_from(outdir / ipynb) == inputs_key(lesson):
            continue  # as it was: drawing every figure's parts again took a quarter of a no-op build
        made = (json.dumps(notebook(lesson), indent=1, ensure_ascii=False, sort_keys=True) + "\n").encode()
        write_if_changed(outdir / ipynb, made)
        # the zip mirrors the project: the notebook where its page is, the code files at their paths
        folder = PurePosixPath(archive).name.removesuffix(".zip")
        write_if_changed(outdir / archive, stable_zip(folder, {**lesson.files, f"{docname}.ipynb": made}))


def _made_from(path: Path) -> str | None:
    """The inputs key a notebook written before records (``None``: no notebook there, or not ours)."""
    try:
        return json.loads(path.read_bytes())["metadata"]["tensorviz"]["inputs"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
