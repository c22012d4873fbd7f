"""What the translated-build tests share (``test_i18n.py``, ``test_i18n_browser.py``): Sphinx and
sphinx-intl in subprocesses, a translator's edits of a .po file, and the pages' drawings and words.

Builds run in subprocesses, as an author runs them, and because Sphinx keeps a process's
translations for its lifetime.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

from babel.messages.pofile import read_po, write_po

from conftest import copy_root


def catalogue_messages(path: Path) -> dict[str | tuple[str, str], str | tuple[str, ...]]:
    with path.open("rb") as handle:
        return {(m.id if isinstance(m.id, str) else tuple(m.id)): (m.string if isinstance(m.string, str)
                                                                    else tuple(m.string))
                for m in read_po(handle) if m.id}


def sphinx(*args: str, env: dict[str, str] | None = None, blocked: bool = False) -> subprocess.CompletedProcess[str]:
    """``sphinx-build`` in a fresh process (``blocked``: with the frameworks unimportable, as on
    Read the Docs, so nothing could execute)."""
    start = [sys.executable, "-c", BLOCKED_FRAMEWORKS] if blocked else [sys.executable, "-m", "sphinx"]
    return subprocess.run([*start, *args], capture_output=True, text=True, timeout=600,
                          env={**os.environ, **(env or {})})


BLOCKED_FRAMEWORKS = """
import importlib.abc, sys
class NotInstalled(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in {"torch", "jax", "jaxlib", "flax", "equinox", "transformers"}:
            raise ModuleNotFoundError(name)
sys.meta_path.insert(0, NotInstalled())
from sphinx.cmd.build import main
sys.exit(main(sys.argv[1:]))
"""


def sphinx_intl_update(pot: Path, locales: Path) -> None:
    """``sphinx-intl update -p POT -l fr -d LOCALES``: the author's step after ``-b gettext``."""
    done = subprocess.run([sys.executable, "-m", "sphinx_intl", "update", "-p", str(pot), "-l", "fr",
                           "-d", str(locales)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr


def translate(po: Path, words: dict[str, str]) -> None:
    """What a translator does in the .po: write the French of some messages."""
    with po.open("rb") as handle:
        catalog = read_po(handle)
    for message in catalog:
        if message.id in words:
            message.string = words[message.id]
    with po.open("wb") as handle:
        write_po(handle, catalog)


def stored(store: Path) -> dict[str, bytes]:
    return {p.relative_to(store).as_posix(): p.read_bytes() for p in sorted(store.rglob("*")) if p.is_file()}


def figure_svgs(page: str) -> list[str]:
    return re.findall(r'<div class="tv-svg">(<svg.*?</svg>)</div>', page, flags=re.S)


def drawing_without_words(svg: str) -> str:
    """The drawing less its words: the text of every text, title and description, and the labels.
    A graph's legend is laid out by the width of its words: its body is compared, wherever the
    legend puts it."""
    svg = re.sub(r"(<(text|tspan|title|desc)\b[^>]*>)[^<]*", r"\1", svg)
    svg = re.sub(r'\b(aria-label|data-tooltip)="[^"]*"', r'\1=""', svg)
    body = svg.find('<g class="tv-body"')
    return re.sub(r'^<g class="tv-body" transform="[^"]*"', '<g class="tv-body"', svg[body:]) if body >= 0 else svg


def visible_text(page: str) -> str:
    """The page's words as a reader meets them (markup and scripts out, entities decoded)."""
    import html

    page = re.sub(r"<(script|style)\b.*?</\1>", "", page, flags=re.S)
    return html.unescape(" ".join(re.sub(r"<[^>]+>", " ", page).split()))


#: the French a translator gives the test root's words (index.md and lesson.md)
ROOT_FRENCH = {
    "A small outer product": "Un petit produit extérieur",
    "Two rows of three products that grow to the right.": "Deux lignes de trois produits qui croissent vers la droite.",
    "Which cell is the largest?": "Quelle case est la plus grande ?",
    "Two boxes": "Deux boîtes",
    "Box a on top feeds box b below it.": "La boîte a, en haut, alimente la boîte b en dessous.",
    "The tiny model": "Le tout petit modèle",
    "Project": "Projeter",
    "Clip": "Écrêter",
    "Which values does the ReLU keep?": "Quelles valeurs la ReLU garde-t-elle ?",
    "What does a ReLU after a linear layer keep?": "Que garde une ReLU après une couche linéaire ?",
    "Tiny and random.": "Minuscule et aléatoire.",
    "count": "effectif",
}


def translated_snapshot_root(base: Path) -> dict[str, Any]:
    """test-snapshot translated as an author would: ``-b gettext``, ``sphinx-intl update``, the
    .po files filled in, then built in English and in French from its committed artifacts."""
    src = copy_root("snapshot", base / "src", with_store=True)
    before = stored(src / "tensorviz_artifacts")
    gettext_build = sphinx("-b", "gettext", str(src), str(base / "gettext"))
    assert gettext_build.returncode == 0, gettext_build.stderr
    sphinx_intl_update(base / "gettext", src / "locales")
    for po in (src / "locales" / "fr" / "LC_MESSAGES").glob("*.po"):
        translate(po, ROOT_FRENCH)
    english = sphinx("-W", "-b", "html", str(src), str(base / "en"))
    assert english.returncode == 0, english.stderr
    french = sphinx("-W", "-b", "html", "-D", "language=fr", str(src), str(base / "fr"))
    assert french.returncode == 0, french.stderr
    assert stored(src / "tensorviz_artifacts") == before  # nothing recorded, rewritten or dropped
    return {"base": base, "src": src, "french": french.stdout + french.stderr}
