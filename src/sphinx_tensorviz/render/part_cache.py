"""The heavy parts of a figure, kept as HTML with their search words (``tensorviz_part_cache``).

With every drawing cached, a figure kind still builds thousands of docutils nodes (data tables,
outlines, check lists, source panels) that Sphinx then translates and walks for the search index,
and it imports the kind's drawing code to build them: on a fresh-output build of the course,
``bench/bench_build.py`` measured 1.7-1.8x plain Sphinx without this cache and 1.45-1.6x with it
(single builds of one run spread by about 0.3 of that ratio; the medians of 5 by about 0.15). So, for the HTML builders that write the
translator's HTML as it is (:data:`KEEPING_BUILDERS`), what a kind's ``parts`` function returns is
kept in the drawing cache (:mod:`.cache`), named by the artifact and the renderer hash (with the
figure's id, the page and the translator: :mod:`.part_keys`):

* the title, the alt text, the SVG, and the warnings the kind found (warned again on every use);
* each extra (a source panel) and each detail (long description, data table, outline, check list)
  as the HTML the builder's translator writes for it where the figure places it, with the words
  the search index reads in it;
* the printed output and the figure details (downloads) the renderer adds to the details;
* the files the kind and the details write next to the page, written again on use.

The rest of the figure (its prompt, provenance, failed claims) is made on every build, as without
the cache; parts whose drawing gave a warning are not kept. A sweep's parts are kept by all its points; a page pass's
figure drawn from a graph (its checkpoints, a tour) is kept whole (:meth:`PartCache.whole`),
unless drawing it warned. An entry is used only while the artifact's stored bytes and
the project files it shows are as they were (:mod:`.part_inputs`).

A part is translated in its place in the figure, by a translator of the builder's own class made
for a document of its own, and only parts whose nodes translate the same whatever the page around
them (:func:`context_free`) are kept, so a kept part and a new one are the same bytes. Nothing of
the builder, of Sphinx's loggers or of the process is changed to do it.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from docutils import nodes
from docutils.utils import new_document
from sphinx.search import WordCollector

from ..config import app_of
from ..core.hashing import digest
from ..warnings_ import Subtype, given
from .cache import RenderCache
from .html_nodes import (
    markup,
    translated,
    tv_html_caption,
    tv_html_figure,
    tv_html_markup,
    tv_html_reveal,
    tv_html_scroll,
    tv_html_tag,
)
from .outputs import recording_outputs, write_files
from .page import Page
from .part_entries import decode_entry, encode_entry, well_formed
from .part_inputs import inputs_digest
from .part_keys import FORMAT_VERSION, page_key, plain
from .parts import FigureParts

SUFFIX = "parts"
#: builders whose pages are the translator's HTML as it is (epub and htmlhelp rewrite links and ids
#: of the whole page when they write it)
KEEPING_BUILDERS = frozenset({"html", "dirhtml", "singlehtml"})
#: a link with a scheme (https:, mailto:, ...) rather than a file of the output folder
_EXTERNAL = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")
#: code languages whose blocks Sphinx may trim of doctest flags after the figures are drawn
_DOCTEST_LANGUAGES = frozenset({"pycon", "pycon3", "py", "python", "py3", "python3", "default", "guess"})
#: node classes (exactly these, not subclasses) whose HTML depends only on the node and the configuration
_CONTEXT_FREE = frozenset({
    nodes.Text, nodes.paragraph, nodes.strong, nodes.emphasis, nodes.literal, nodes.inline,
    nodes.container, nodes.bullet_list, nodes.enumerated_list, nodes.list_item, nodes.table,
    nodes.tgroup, nodes.colspec, nodes.thead, nodes.tbody, nodes.row, nodes.entry, nodes.title,
    nodes.reference, nodes.literal_block, tv_html_figure, tv_html_reveal, tv_html_caption,
    tv_html_scroll, tv_html_tag, tv_html_markup,
})


def _nothing_to_keep(made: nodes.Element) -> None:
    """What a figure drawn without the part cache, or from it, does once it is laid out."""


@dataclass
class Drawn:
    """A figure's parts, and what to do with the figure once it is laid out (:meth:`PartCache.draw`)."""

    parts: FigureParts
    keep: Callable[[nodes.Element], None] = field(default=_nothing_to_keep)


def for_page(page: Page) -> PartCache | None:
    """The kept parts for ``page``, or ``None`` where none are kept (``tensorviz_part_cache = False``,
    a builder other than :data:`KEEPING_BUILDERS`, or one without the settings Sphinx translates
    its pages with)."""
    if not app_of(page.env).config.tensorviz_part_cache:
        return None
    if page.builder.name not in KEEPING_BUILDERS or getattr(page.builder, "docsettings", None) is None:
        return None
    return PartCache(page)


class PartCache:
    def __init__(self, page: Page) -> None:
        self.page = page
        self.cache: RenderCache = page.ctx.cache
        self.page_key = page_key(page)

    def draw(self, node: nodes.Element, artifacts: Sequence[dict[str, Any]], named_by: dict[str, Any],
             make: Callable[[], FigureParts]) -> Drawn:
        """The parts of ``node``'s figure, drawn from ``artifacts`` (one, or a sweep's points and
        check): kept, or made by ``make``. ``named_by``: what else they depend on (the directive,
        the render options, the renderer hash). On a miss, :attr:`Drawn.keep` keeps them once the
        figure is laid out (a data table's id, its scroll region and its caption are the figure's)."""
        key = digest({"page": self.page_key, "figure": node["figure_id"], "ids": plain(node["ids"]),
                      "artifacts": [artifact["contentHash"] for artifact in artifacts], **plain(named_by)})
        kept = self._kept(key, artifacts)
        if kept is not None:
            return Drawn(kept)
        warned = given()
        with recording_outputs() as outputs:
            parts = make()
        if given() != warned:  # the kind warned itself (not through parts.warnings): not kept, so it warns again
            return Drawn(parts)
        extras, details = list(parts.extra_html), list(parts.details)  # made by make(), not the figure's own
        return Drawn(parts, lambda made: self._keep(key, artifacts, parts, extras, details, outputs, made))

    def whole(self, node: nodes.Element, artifacts: Sequence[dict[str, Any]], named_by: dict[str, Any],
              make: Callable[[], nodes.Node]) -> nodes.Node:
        """A page pass's figure (a graph's checkpoints, its tour), drawn from ``artifacts``: kept
        whole as HTML, or made by ``make`` and kept unless its drawing warned (kept, the warning
        would not be given again) or it depends on the page around it. ``named_by``: what else
        it depends on besides ``node`` (the graph's figure id and view)."""
        key = digest({"page": self.page_key, "node": plain(node.attributes), "children": node.pformat(),
                      "artifacts": [artifact["contentHash"] for artifact in artifacts], **plain(named_by)})
        kept = self._kept(key, artifacts)
        if kept is not None and len(kept.details) == 1 and not kept.extra_html:
            return kept.details[0]
        warned = given()
        with recording_outputs() as outputs:
            made = make()
        inline_math = getattr(self.page.builder, "math_renderer_name", None) == "mathjax"
        if given() != warned or not isinstance(made, nodes.Element) or not context_free(made, inline_math):
            return made
        parts = FigureParts("", "", "", details=[made])
        holder = nodes.container("", made)  # translated where it stands: in a box of its own
        self._keep(key, artifacts, parts, [], [made], outputs, holder)
        return holder[0]

    def _kept(self, key: str, artifacts: Sequence[dict[str, Any]]) -> FigureParts | None:
        raw = self.cache.read(key[:2], f"{key[:48]}.{SUFFIX}")
        decoded = decode_entry(raw) if raw is not None else None
        if decoded is None or not well_formed(*decoded):
            return None
        entry, (svg, *pieces) = decoded
        if inputs_digest(self.page, artifacts) != entry["inputsDigest"]:
            return None
        try:
            warnings = [(message, Subtype(subtype)) for message, subtype in entry["warnings"]]
            extras = []
            for is_markup, math in entry["extras"]:
                extras.append(markup(_text(pieces.pop(0))) if is_markup
                              else translated(_text(pieces.pop(0)), _text(pieces.pop(0)), math))
            details = [translated(_text(pieces.pop(0)), _text(pieces.pop(0)), math) for math in entry["details"]]
            svg_text = _text(svg)
        except (UnicodeDecodeError, ValueError):
            return None
        outdir = Path(self.page.builder.outdir)
        files = []
        for (relative, sha256), content in zip(entry["outputs"], pieces):
            if hashlib.sha256(content).hexdigest() != sha256:  # damaged: the parts are made again
                return None
            files.append((outdir / relative, content))
        write_files(files)  # in the order they were made (a module index last)
        return FigureParts(entry["title"], entry["alt"], svg_text, details=details, extra_html=extras,
                           warnings=warnings)

    def _keep(self, key: str, artifacts: Sequence[dict[str, Any]], parts: FigureParts, extras: list[nodes.Node],
              details: list[nodes.Node], outputs: dict[Path, bytes], made: nodes.Element) -> None:
        """Keep the kind's parts of the laid-out figure ``made`` and put their HTML in their place,
        so a kept figure and a new one are the same bytes; keep nothing if one of them depends on
        the page around it, or another part of the figure holds a table (numbered with theirs)."""
        placed = [node for node in extras if not isinstance(node, tv_html_markup)]
        # a data table stands in a scroll region of the figure's (render/assemble.py)
        placed += [node.parent if isinstance(node, nodes.table) else node for node in details]
        if any(not isinstance(node, nodes.Element) or node.parent is None for node in placed):
            return
        tables = sum(len(list(node.findall(nodes.table))) for node in placed)
        if tables != len(list(made.findall(nodes.table))):
            return
        inline_math = getattr(self.page.builder, "math_renderer_name", None) == "mathjax"
        if not all(context_free(node, inline_math) for node in placed):
            return
        written = []
        for node in placed:
            html = _translate(self.page, node)
            words, titled = _searched_text(self.page, node)
            if html is None or titled:  # a title feeds the page's search titles: left as nodes
                return
            written.append((node, translated(html[0], words, html[1])))
        named = _named_outputs(Path(self.page.builder.outdir), outputs)
        inputs = inputs_digest(self.page, artifacts)
        if named is None or inputs is None:
            return
        for node, html in written:
            node.replace_self(html)
        html_of = {id(node): html for node, html in written}
        pieces: list[bytes] = [_bytes(parts.svg)]
        shape_of_extras = []
        for node in extras:
            if isinstance(node, tv_html_markup):
                pieces.append(_bytes(node["markup"]))
                shape_of_extras.append([True, False])
            else:
                html = html_of[id(node)]
                pieces += [_bytes(html["markup"]), _bytes(html.astext())]
                shape_of_extras.append([False, html["math"]])
        shape_of_details = []
        for node in details:
            html = html_of[id(node.parent if isinstance(node, nodes.table) else node)]
            pieces += [_bytes(html["markup"]), _bytes(html.astext())]
            shape_of_details.append(html["math"])
        entry = {"version": FORMAT_VERSION, "inputsDigest": inputs, "title": parts.title, "alt": parts.alt,
                 "warnings": [[message, subtype.value] for message, subtype in parts.warnings],
                 "extras": shape_of_extras, "details": shape_of_details,
                 "outputs": [[relative, hashlib.sha256(content).hexdigest()] for relative, content in named]}
        self.cache.write(key[:2], f"{key[:48]}.{SUFFIX}", encode_entry(entry, [*pieces, *(c for _, c in named)]))


def _bytes(text: str) -> bytes:
    # surrogatepass: any text a figure shows can be kept, lone surrogates from lesson output included
    return text.encode("utf-8", "surrogatepass")


def _text(raw: bytes) -> str:
    return raw.decode("utf-8", "surrogatepass")


def _named_outputs(outdir: Path, outputs: dict[Path, bytes]) -> list[tuple[str, bytes]] | None:
    """The files the kind wrote, by their path in the output folder; ``None`` if one lies outside it."""
    named = []
    for path, content in outputs.items():
        try:
            named.append((path.resolve().relative_to(outdir.resolve()).as_posix(), content))
        except ValueError:  # a file outside the output folder: not one to put back
            return None
    return named


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


def _translate(page: Page, part: nodes.Element) -> tuple[str, bool] | None:
    """``part``'s HTML, written where it stands by a translator of the builder's class made for a
    document of its own (with the settings the builder writes pages with), and whether it held
    math (the translator notes it, for MathJax); ``None`` if that fails, so the page's writer
    translates it in place as it always did (and reports any error there, as Sphinx does)."""
    builder = page.builder
    try:
        alone = new_document(page.document.get("source", ""), builder.docsettings)
        translator = builder.create_translator(alone, _PageBuilder(builder, page.env, page.docname))
        part.walkabout(translator)
    except Exception:  # noqa: BLE001 - any translator error: not kept, translated with the page
        return None
    return "".join(translator.body), bool(getattr(translator, "_has_maths_elements", False))


class _PageBuilder:
    """The builder as a translator sees it while it writes ``docname``: the builder itself, with the
    page's section and figure numbers. Sphinx sets those on the builder only when it writes the
    page, after the figures are drawn; the builder is left as it is, and this view is used only to
    translate a part."""

    def __init__(self, builder: Any, env: Any, docname: str) -> None:
        self._builder = builder
        self.secnumbers = env.toc_secnumbers.get(docname, {})
        self.fignumbers = env.toc_fignumbers.get(docname, {})
        self.current_docname = docname

    def __getattr__(self, name: str) -> Any:
        return getattr(self._builder, name)


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


__all__ = ["KEEPING_BUILDERS", "SUFFIX", "Drawn", "PartCache", "context_free", "for_page"]
