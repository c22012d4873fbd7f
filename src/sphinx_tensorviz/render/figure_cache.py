"""Translated figures, kept with what they were made from: a fresh output folder translates no
figure it translated before.

With every drawing cached, a figure still becomes thousands of docutils nodes (data tables,
outlines, check lists) that Sphinx then translates and walks for the search index: most of what a
fresh-output build of a course spends beyond its prose. So, for the HTML builders that write the
translator's HTML as it is (:data:`KEEPING_BUILDERS`), each figure is kept
as the HTML its nodes translate to, in the drawing cache (:mod:`.cache`), with

* the words the search index would have read in it (indexed again from the kept figure);
* the files it needs next to its page (downloads, a graph's module files), with their sha256,
  written again on use;
* the artifacts it read, with the state of the project files they name: checked, byte for byte, on
  every use, so a re-executed, pulled or edited artifact, or an edited model file, is drawn anew.

An entry is one file, laid out by :mod:`.figure_entries`.

The entry's name covers everything else the HTML depends on: the content hashes of the
artifacts the figure is drawn from (its own, its sweep's, and for checkpoints and tours their
graph's: an old artifact still passes the byte-for-byte check after an option names a new one),
the figure node (its request, options and ids), the notes page passes left for it, the page and its builder, the builder's
translator and node handlers, the whole configuration, the versions of Sphinx, docutils, Pygments
and Python, the files of this package and of any other package that registered a figure kind.

Only figures whose HTML is the same wherever they stand are kept: every node in them is of a kind
whose translation depends on nothing but itself and the configuration (text, paragraphs, lists,
tables, literals, links to a URL, code with a language, this package's own HTML nodes, and inline
math when MathJax renders it: a kept figure notes that it holds some, so its page still loads
MathJax). A figure holding anything else (displayed math, math drawn as images, images,
cross-references...) or one that warned while it was drawn
or translated is made as before, on every build. A kept figure is translated alone, on a document
of its own, never in its place on the page, so a hit and a miss write the same bytes.
"""

from __future__ import annotations

import hashlib
import logging
import re
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from docutils import nodes
from docutils.utils import new_document
from sphinx.search import WordCollector

from ..config import app_of
from ..core.hashing import digest
from ..core.locations import recorded_project_file
from ..core.per_app import PerApp
from .cache import RenderCache
from .figure_entries import decode_entry, encode_entry, well_formed
from .figure_keys import FORMAT_VERSION, artifacts_drawn_from, page_key, plain
from .html_nodes import (
    translated,
    tv_html_caption,
    tv_html_figure,
    tv_html_markup,
    tv_html_reveal,
    tv_html_scroll,
    tv_html_tag,
    tv_html_translated,
)
from .outputs import recording_outputs, write_files
from .page import Page

SUFFIX = "figure"

#: node classes (exactly these, not subclasses) whose HTML depends only on the node and the configuration
#: a link with a scheme (https:, mailto:, ...) rather than a file of the output folder
_EXTERNAL = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")
#: code languages whose blocks Sphinx may trim of doctest flags after the figures are drawn
_DOCTEST_LANGUAGES = frozenset({"pycon", "pycon3", "py", "python", "py3", "python3", "default", "guess"})
#: builders whose pages are the translator's HTML as it is (epub and htmlhelp rewrite links and ids
#: of the whole page when they write it)
KEEPING_BUILDERS = frozenset({"html", "dirhtml", "singlehtml"})
_CONTEXT_FREE = frozenset({
    nodes.Text, nodes.paragraph, nodes.strong, nodes.emphasis, nodes.literal, nodes.inline,
    nodes.container, nodes.bullet_list, nodes.enumerated_list, nodes.list_item, nodes.table,
    nodes.tgroup, nodes.colspec, nodes.thead, nodes.tbody, nodes.row, nodes.entry, nodes.title,
    nodes.reference, nodes.literal_block, tv_html_figure, tv_html_reveal, tv_html_caption,
    tv_html_scroll, tv_html_tag, tv_html_markup,
})


def for_page(page: Page) -> FigureCache | None:
    """The kept figures for ``page``, or ``None`` where figures are not kept (a builder other than
    :data:`KEEPING_BUILDERS`, or one without the settings Sphinx translates its pages with)."""
    if page.builder.name not in KEEPING_BUILDERS or getattr(page.builder, "docsettings", None) is None:
        return None
    return FigureCache(page)


class FigureCache:
    def __init__(self, page: Page) -> None:
        self.page = page
        self.cache: RenderCache = page.ctx.cache
        self.page_key = page_key(page)

    def figure(self, node: nodes.Element, make: Callable[[], nodes.Node], drawn_from: Sequence[str] = (),
               context: Any = None) -> nodes.Node:
        """The figure of ``node``: kept, or made by ``make`` (and kept when it can be).

        For a page pass's node (checkpoints, a tour), ``drawn_from`` names the artifacts it is
        drawn from that ``make`` need not ask the store for (the page reads its graphs once), and
        ``context`` anything else besides the node its drawing depends on (the graph's figure id
        and view). A figure node's own request is enough for it.
        """
        key = self._key(node, drawn_from, context)
        if key is not None:
            kept = self._kept(key)
            if kept is not None:
                return kept
        inline_math = getattr(self.page.builder, "math_renderer_name", None) == "mathjax"
        with _reads_recorded(self.page) as reads, recording_outputs() as outputs, _warnings_seen() as warned:
            made = make()
            alone = (_translate_alone(self.page, made)
                     if isinstance(made, nodes.Element) and context_free(made, inline_math=inline_math) else None)
        if alone is None:
            return made
        words, titled = _searched_text(self.page, made)
        if titled:  # a title inside a figure feeds the page's search titles: keep it as nodes
            return made
        html, math = alone
        result = translated(html, words, math)
        if key is not None and not warned.count:
            self._keep(key, result, [*drawn_from, *(h for h in reads if h not in drawn_from)], outputs)
        return result

    def _key(self, node: nodes.Element, drawn_from: Sequence[str], context: Any) -> str | None:
        if node.get("request") is None and not drawn_from:  # an authored figure (a diagram): cheap
            return None
        notes = {name: self.page.render_notes.get(name) for name in node["names"]}
        return digest({"page": self.page_key, "kind": type(node).__name__, "node": plain(node.attributes),
                       "artifacts": artifacts_drawn_from(node, drawn_from),
                       "notes": plain(notes), "context": plain(context),
                       "children": node.pformat() if len(node) else ""})

    def _kept(self, key: str) -> nodes.Node | None:
        raw = self.cache.read(key[:2], f"{key[:48]}.{SUFFIX}")
        decoded = decode_entry(raw) if raw is not None else None
        if decoded is None or not well_formed(*decoded):
            return None
        entry, (markup_bytes, words_bytes, *contents) = decoded
        if _inputs_digest(self.page, entry["inputs"]) != entry["inputsDigest"]:
            return None
        outdir = Path(self.page.builder.outdir)
        files = []
        for (relative, sha256), content in zip(entry["outputs"], contents):
            if hashlib.sha256(content).hexdigest() != sha256:  # damaged: the figure is made again
                return None
            files.append((outdir / relative, content))
        try:
            markup, words = markup_bytes.decode("utf-8", "surrogatepass"), words_bytes.decode("utf-8", "surrogatepass")
        except UnicodeDecodeError:
            return None
        write_files(files)  # in the order they were made (a module index last)
        return translated(markup, words, entry["math"])

    def _keep(self, key: str, result: tv_html_translated, reads: list[str], outputs: dict[Path, bytes]) -> None:
        outdir = Path(self.page.builder.outdir).resolve()
        named = []
        for path, content in outputs.items():
            try:
                relative = path.resolve().relative_to(outdir).as_posix()
            except ValueError:  # a file outside the output folder: not one to put back
                return
            named.append((relative, content))
        inputs = _inputs_digest(self.page, reads)
        if inputs is None:
            return
        entry = {"version": FORMAT_VERSION, "math": result["math"], "inputs": reads, "inputsDigest": inputs,
                 "outputs": [[relative, hashlib.sha256(content).hexdigest()] for relative, content in named]}
        # surrogatepass: any text a figure shows can be kept, lone surrogates from lesson output included
        texts = [result["markup"].encode("utf-8", "surrogatepass"), result.astext().encode("utf-8", "surrogatepass")]
        self.cache.write(key[:2], f"{key[:48]}.{SUFFIX}", encode_entry(entry, [*texts, *(c for _, c in named)]))


def drawn_from_graph(page: Page, node: nodes.Element, graph: Any, make: Callable[[], nodes.Node],
                     **context: Any) -> nodes.Node:
    """A page pass's node drawn from one of the page's graphs (:class:`.graph_page.GraphOnPage`):
    kept like a figure for HTML builders, by the graph's artifact, figure id and view, and
    ``context``."""
    if page.kept is None:
        return make()
    context["graph"] = [graph.figure_id, graph.depth, list(graph.expand)]
    return page.kept.figure(node, make, [graph.artifact["contentHash"]], context)


def context_free(tree: nodes.Node, inline_math: bool = False) -> bool:
    """Whether every node of ``tree`` translates the same wherever ``tree`` stands on a page;
    ``inline_math``: inline math does (MathJax's visitor writes the node's text and the
    configuration's delimiters; an image renderer writes files beside the page)."""
    for node in tree.findall():
        kind = type(node)
        if kind not in _CONTEXT_FREE and not (inline_math and kind is nodes.math):
            return False
        if kind is nodes.title and not isinstance(node.parent, nodes.table):
            return False  # a section or sidebar title depends on the headings around it
        if kind is nodes.reference and ("refuri" not in node or node.get("refid") or node.get("internal")
                                        or _EXTERNAL.match(node["refuri"])):
            # an internal link is resolved against the page; an external one (in an author's note)
            # is one that later passes may check, and warn about, on every build (extlinks)
            return False
        if kind is nodes.literal_block and ("language" not in node or "linenos" not in node
                                            or node["language"] in _DOCTEST_LANGUAGES):
            return False  # the page's highlight settings would apply, or Sphinx's doctest-flag trimming
    return True


def _translate_alone(page: Page, tree: nodes.Node) -> tuple[str, bool] | None:
    """``tree``'s HTML, translated by the page's own translator on a document of its own, and
    whether it held math (the translator notes it, for MathJax); ``None`` if that fails, so the
    page's writer translates it in place as it always did (and reports any error there, as Sphinx
    does)."""
    builder = page.builder
    alone = new_document(page.document.get("source", ""), builder.docsettings)
    alone += tree
    try:
        with _as_written(page):
            translator = builder.create_translator(alone, builder)
            tree.walkabout(translator)
    except Exception:  # noqa: BLE001 - any translator error: not kept, translated with the page
        return None
    finally:
        alone.remove(tree)
    return "".join(translator.body), bool(getattr(translator, "_has_maths_elements", False))


#: what Sphinx's HTML builder sets for the page it writes, and its translator reads
_PAGE_STATE = ("secnumbers", "fignumbers", "current_docname")


@contextmanager
def _as_written(page: Page) -> Iterator[None]:
    """The builder as it is while it writes this page (pages are drawn just before they are
    written, when it still holds the page before), then as it was."""
    builder, env, docname = page.builder, page.env, page.docname
    before = {name: vars(builder)[name] for name in _PAGE_STATE if name in vars(builder)}
    builder.secnumbers = env.toc_secnumbers.get(docname, {})
    builder.fignumbers = env.toc_fignumbers.get(docname, {})
    builder.current_docname = docname
    try:
        yield
    finally:
        for name in _PAGE_STATE:
            if name in before:
                setattr(builder, name, before[name])
            else:
                delattr(builder, name)


class _SearchedTexts(WordCollector):
    """Sphinx's own word collector, noting the texts it reads (those outside ``no-search`` parts)."""

    def __init__(self, document: nodes.document, lang: Any) -> None:
        super().__init__(document, lang)
        self.texts: list[str] = []

    def dispatch_visit(self, node: nodes.Node) -> None:
        super().dispatch_visit(node)  # raises SkipNode for what the index leaves out
        if isinstance(node, nodes.Text):
            self.texts.append(node.astext())


def _searched_text(page: Page, tree: nodes.Node) -> tuple[str, bool]:
    """The text of ``tree`` the search index reads (one text per line), and whether it has titles."""
    indexer = getattr(page.builder, "indexer", None)
    if indexer is None:  # this build makes no search index
        return "", False
    collector = _SearchedTexts(page.document, indexer.lang)
    tree.walk(collector)
    return "\n".join(collector.texts), bool(collector.found_titles or collector.found_title_words)


def _inputs_digest(page: Page, hashes: list[str]) -> str | None:
    """What the artifacts named by ``hashes`` are now (their stored bytes: a figure shows their
    printed output and offers the file itself), and the state of the project files they name
    (downloads and source panels show those still as recorded, byte for byte); ``None`` if one
    is not usable."""
    state = []
    for content_hash in hashes:
        found = page.store.read_artifact(content_hash)
        if not isinstance(found, dict):
            return None
        stored = page.store.stored_sha256(content_hash, found)
        files = found.get("request", {}).get("files", {})
        state.append([content_hash, stored, [[name, *_project_file(page, name, sha256)]
                                             for name, sha256 in sorted(files.items()) if name != "<inline>"]])
    return digest(state)


#: what :func:`_project_file` found, per application, by the file's identity, size and time
_PROJECT_FILES: PerApp[dict[tuple[Any, ...], tuple[bool, str | None]]] = PerApp(dict)


def _project_file(page: Page, relative: str, recorded: str) -> tuple[bool, str | None]:
    """Whether the downloads and source panels show the project file ``relative``
    (:func:`.locations.recorded_project_file`), and the sha256 of its bytes (what a download
    copies: the same text with other line endings is another file). Known by the file's identity,
    size and time for the rest of the build (the path is resolved on a miss only: a link that points
    elsewhere points at another inode)."""
    path = page.ctx.srcdir / relative
    try:
        stat = path.stat()
    except OSError:
        return False, None
    seen = _PROJECT_FILES.of(app_of(page.env))
    signature = (str(path), stat.st_dev, stat.st_ino, stat.st_mtime_ns, stat.st_size)
    if signature not in seen:
        try:
            shown = recorded_project_file(page.ctx.srcdir, relative, recorded)
            seen[signature] = (True, hashlib.sha256(shown.read_bytes()).hexdigest()) if shown else (False, None)
        except (OSError, UnicodeDecodeError):
            seen[signature] = (False, None)
    return seen[signature]


@contextmanager
def _reads_recorded(page: Page) -> Iterator[list[str]]:
    """The content hashes of every artifact the page's store is asked for while the block runs."""
    store = page.store
    recorder = _RecordingStore(store)
    page.store = recorder  # type: ignore[assignment]
    try:
        yield recorder.hashes
    finally:
        page.store = store


class _RecordingStore:
    def __init__(self, store: Any) -> None:
        self._store = store
        self.hashes: list[str] = []

    def _note(self, content_hash: str) -> None:
        if content_hash not in self.hashes:
            self.hashes.append(content_hash)

    def read_artifact(self, content_hash: str) -> Any:
        self._note(content_hash)
        return self._store.read_artifact(content_hash)

    def read_failure(self, content_hash: str) -> Any:
        self._note(content_hash)
        return self._store.read_failure(content_hash)

    def artifact_text(self, content_hash: str, artifact: dict[str, Any]) -> bytes:
        self._note(content_hash)
        return self._store.artifact_text(content_hash, artifact)

    def stored_sha256(self, content_hash: str, artifact: dict[str, Any]) -> str:
        self._note(content_hash)
        return self._store.stored_sha256(content_hash, artifact)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)


class _Seen(logging.Handler):
    """Counts the warnings logged while it is attached."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.count = 0

    def emit(self, record: logging.LogRecord) -> None:
        self.count += 1


@contextmanager
def _warnings_seen() -> Iterator[_Seen]:
    """The warnings (the extension's or Sphinx's, suppressed or not) logged in the block."""
    handler = _Seen()
    logger = logging.getLogger("sphinx")
    logger.addHandler(handler)
    try:
        yield handler
    finally:
        logger.removeHandler(handler)
