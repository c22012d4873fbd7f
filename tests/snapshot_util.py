"""Output snapshots: what each builder writes for ``tests/roots/test-snapshot``, normalised so
that only real changes of the output show, compared with the files in ``tests/snapshots/``.

The snapshots are reviewed in diffs (as sphinx-design's and MyST-NB's are), so they are written
to be read: HTML is re-serialised one element per line with its attributes sorted; everything
else is the builder's own text. What is replaced, and why (:func:`normalise`):

* the temporary source and output folders of the build (``<srcdir>``, ``<outdir>``): they differ
  on every run;
* the part of a figure's file names and keys that comes from the *renderer fingerprint* (a hash
  of the drawing code, ``sphinx_tensorviz.execute.request.renderer_fingerprint``): the graph's
  ``data-key`` and its ``_tensorviz/graphs/<recording>-<drawing>/`` folder, and the LaTeX
  figure ``tensorviz-<recording>-<drawing>.pdf``. Any edit of ``render/*.py`` changes them
  without changing what is drawn, so they become ``<renderer>``; the recording part before the
  dash is kept. ``test_snapshots.py`` proves this list complete by building once more with a
  changed fingerprint: the normalised output must not change.

Kept as they are: the artifacts' content hashes, the sha256 of the downloadable files and the
provenance footer (time stamp included), because they come from the committed artifacts and
sources, which are the same on every machine.
"""

from __future__ import annotations

import difflib
import html
import re
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SNAPSHOTS = REPO / "tests" / "snapshots"
UPDATE_FLAG = "--update-snapshots"
#: lines of the unified diff a failure shows (the rest are counted)
DIFF_LINES = 60

VOID = frozenset({"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source",
                  "track", "wbr"})
#: elements whose text is kept exactly as written (whitespace matters, or it is code)
VERBATIM = frozenset({"pre", "script", "style", "textarea"})

QUOTED = re.compile(r'"[^"]*"|\'[^\']*\'')

RENDERER = "<renderer>"
RENDERER_DEPENDENT = (
    # tv-graph: data-key="<recording 16>-<drawing 12>" and its data folder _tensorviz/graphs/<key>/
    (re.compile(r'(data-key="[0-9a-f]{16})-[0-9a-f]{12}(")'), rf"\1-{RENDERER}\2"),
    (re.compile(r"(_tensorviz/graphs/[0-9a-f]{16})-[0-9a-f]{12}(/)"), rf"\1-{RENDERER}\2"),
    # LaTeX: one PDF per figure, tensorviz-<recording 16>-<drawing 8>.pdf (authored diagrams are named by id)
    (re.compile(r"(tensorviz-[0-9a-f]{16})-[0-9a-f]{8}(\.pdf)"), rf"\1-{RENDERER}\2"),
)


# -- HTML, canonical ----------------------------------------------------------------------

@dataclass
class Element:
    tag: str
    attrs: list[tuple[str, str]]
    children: list[Element | str] = field(default_factory=list)
    raw: str | None = None  # verbatim elements: their source text, unparsed


class _TreeBuilder(HTMLParser):
    """A forgiving HTML tree: void and self-closed elements have no children, a stray end tag
    closes up to its element, and ``pre``/``script``/``style`` keep their source text as is."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = Element("#root", [])
        self.stack = [self.root]
        self.verbatim: tuple[Element, int] | None = None  # the open verbatim element and its depth

    def _element(self, tag: str, attrs: list[tuple[str, str | None]]) -> Element:
        """The element with its tag and attribute names as written: the parser lowercases them,
        which would turn SVG's ``viewBox`` and ``linearGradient`` into other names."""
        written = QUOTED.sub('""', self.get_starttag_text() or "")
        name = re.match(r"<\s*([^\s/>]+)", written)
        cased = {n.lower(): n for n in re.findall(r"\s([^\s=/>]+)", written[name.end() if name else 0:])}
        return Element(name[1] if name and name[1].lower() == tag else tag,
                       sorted((cased.get(n, n), "" if v is None else v) for n, v in attrs))

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if self.verbatim is not None:
            element, depth = self.verbatim
            element.raw = (element.raw or "") + (self.get_starttag_text() or "")
            if tag == element.tag.lower():
                self.verbatim = (element, depth + 1)
            return
        element = self._element(tag, attrs)
        self.stack[-1].children.append(element)
        if tag in VERBATIM:
            element.raw = ""
            self.verbatim = (element, 1)
        elif tag not in VOID:
            self.stack.append(element)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if self.verbatim is not None:
            self.verbatim[0].raw = (self.verbatim[0].raw or "") + (self.get_starttag_text() or "")
            return
        self.stack[-1].children.append(self._element(tag, attrs))

    def handle_endtag(self, tag: str) -> None:
        if self.verbatim is not None:
            element, depth = self.verbatim
            if tag == element.tag.lower() and depth == 1:
                self.verbatim = None
            else:
                element.raw = (element.raw or "") + f"</{tag}>"
                if tag == element.tag.lower():
                    self.verbatim = (element, depth - 1)
            return
        for index in range(len(self.stack) - 1, 0, -1):
            if self.stack[index].tag.lower() == tag:
                del self.stack[index:]
                return

    def handle_data(self, data: str) -> None:
        if self.verbatim is not None:
            self.verbatim[0].raw = (self.verbatim[0].raw or "") + html.escape(data, quote=False)
        else:
            self.stack[-1].children.append(data)


def parse_html(text: str) -> Element:
    builder = _TreeBuilder()
    builder.feed(text)
    builder.close()
    return builder.root


def find_main(element: Element) -> Element | None:
    """The page's main content: ``<main>``, or the element with ``role="main"`` (alabaster's
    ``div.body``), outermost first."""
    if element.tag == "main" or ("role", "main") in element.attrs:
        return element
    for child in element.children:
        if isinstance(child, Element) and (found := find_main(child)) is not None:
            return found
    return None


def _attr(value: str) -> str:
    return value.replace("&", "&amp;").replace('"', "&quot;").replace("<", "&lt;").replace(">", "&gt;")


def _open(element: Element) -> str:
    attrs = "".join(f' {name}="{_attr(value)}"' for name, value in element.attrs)
    return f"<{element.tag}{attrs}>"


def _text(text: str) -> str:
    return html.escape(" ".join(text.split()), quote=False)


def serialise(element: Element, depth: int = 0) -> list[str]:
    """One element per line, indented two spaces a level; runs of whitespace in text become one
    space (HTML renders them alike); an element holding only text stays on one line."""
    pad = "  " * depth
    if element.raw is not None:
        return [f"{pad}{_open(element)}{element.raw}</{element.tag}>"]
    children = [c for c in element.children if not (isinstance(c, str) and not c.strip())]
    if element.tag in VOID:
        return [f"{pad}{_open(element)}"]
    if not children:
        return [f"{pad}{_open(element)}</{element.tag}>"]
    if all(isinstance(c, str) for c in children):
        return [f"{pad}{_open(element)}{_text(''.join(children))}</{element.tag}>"]  # type: ignore[arg-type]
    lines = [f"{pad}{_open(element)}"]
    for child in children:
        if isinstance(child, str):
            lines.append(f"{pad}  {_text(child)}")
        else:
            lines.extend(serialise(child, depth + 1))
    lines.append(f"{pad}</{element.tag}>")
    return lines


def canonical_html(page: str) -> str:
    """The main content of an HTML page, canonical (see :func:`serialise`)."""
    main = find_main(parse_html(page))
    assert main is not None, "no <main> or role=main element in the page"
    return "\n".join(serialise(main)) + "\n"


# -- normalising --------------------------------------------------------------------------

def normalise(text: str, **folders: Path) -> str:
    """``text`` with the build's folders (``srcdir=...``, ``outdir=...``) and the
    renderer-dependent parts of names replaced by placeholders (see the module docstring)."""
    for name, folder in sorted(folders.items(), key=lambda item: -len(str(item[1]))):
        text = text.replace(str(folder), f"<{name}>")
    for pattern, placeholder in RENDERER_DEPENDENT:
        text = pattern.sub(placeholder, text)
    return text


def latex_body(tex: str) -> str:
    """The document body of a ``.tex`` file: the preamble is Sphinx's, with the build date."""
    start, end = tex.index("\\begin{document}"), tex.rindex("\\end{document}")
    return tex[start:end + len("\\end{document}")] + "\n"


# -- comparing ----------------------------------------------------------------------------

def difference(path: Path, actual: str) -> str | None:
    """None when ``path`` holds ``actual``; else what differs: the first lines of a unified diff
    (snapshot -> this build), or that there is no such snapshot."""
    expected = path.read_text("utf-8") if path.is_file() else None
    if expected == actual:
        return None
    name = path.relative_to(REPO) if path.is_relative_to(REPO) else path
    if expected is None:
        return f"{name}: no such snapshot"
    diff = list(difflib.unified_diff(expected.splitlines(), actual.splitlines(), f"{name} (snapshot)",
                                     f"{name} (this build)", n=2, lineterm=""))
    more = [f"... and {len(diff) - DIFF_LINES} more diff lines"] if len(diff) > DIFF_LINES else []
    return "\n".join([f"{name} differs from this build:", *diff[:DIFF_LINES], *more])


def compare(files: dict[Path, str], update: bool, note: str = "") -> None:
    """Fail unless every snapshot file holds its text, naming each that does not (with its diff)
    and how to regenerate; ``note`` (e.g. that Sphinx's version differs from the recording's) is
    added. With ``update``, write the files that differ instead."""
    if update:
        for path, actual in files.items():
            if difference(path, actual) is not None:
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(actual, "utf-8")
        return
    found = [d for path, actual in files.items() if (d := difference(path, actual)) is not None]
    if found:
        pytest.fail("\n\n".join(found) + f"\n\n{note}"
                    "If the change is intended, regenerate the snapshots and review their diff:\n"
                    f"    python -m pytest tests/test_snapshots.py {UPDATE_FLAG}\n"
                    "    git diff tests/snapshots/", pytrace=False)


def stale(folder: Path, written: set[Path], update: bool) -> None:
    """Snapshot files in ``folder`` that this build no longer writes: removed with ``update``,
    a failure without it (a page that disappeared must show in the diff too)."""
    if not folder.is_dir():
        return
    left = sorted(p for p in folder.rglob("*") if p.is_file() and p not in written)
    if update:
        for path in left:
            path.unlink()
    elif left:
        pytest.fail(f"snapshots no build wrote: {[p.name for p in left]} in {folder}; run "
                    f"python -m pytest tests/test_snapshots.py {UPDATE_FLAG} to remove them", pytrace=False)
