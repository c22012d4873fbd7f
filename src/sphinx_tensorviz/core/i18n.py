"""Translated figures: the one API a kind's describe and render code calls for words a reader sees.

Two kinds of words, two catalogues:

- **The extension's fixed words** ("Predict first:", table headers, the footer, alt text and long
  descriptions templated from the data): :func:`_` and :func:`ngettext`, on the catalogue shipped
  in the package (``locale/<language>/LC_MESSAGES/sphinx_tensorviz.po``), registered with Sphinx's
  ``app.add_message_catalog`` so ``language`` picks it. A templated sentence is one message with
  named fields (``_("Heatmap of {what}").format(what=...)``), so a translator can reorder it.
- **The course's own words** (a figure's title, alt text, prediction and choices, a tour step's
  title, a claim's description): the author's catalogue of the page, the one Sphinx's ``Locale``
  transform uses for the prose (``locale_dirs``, ``gettext_compact``). The nodes that carry them
  are :class:`TranslatableWords`, so ``sphinx-build -b gettext`` writes them into the page's
  ``.pot`` beside its paragraphs; they are looked up when the page is *written*
  (:func:`course_words`), because the same words also reach the page from the artifact (a claim's
  description), and the artifact, like its content hash, does not depend on the language.

Nothing here changes Sphinx's state beyond registering the package's catalogue: the author's
catalogue is read from its compiled ``.mo`` (which Sphinx compiles from the ``.po`` at the start of
a build), cached by path and modification time.
"""

from __future__ import annotations

import gettext
import hashlib
from collections.abc import Callable, Iterable, Iterator
from functools import lru_cache
from pathlib import Path
from typing import Any

from docutils import nodes
from sphinx import addnodes
from sphinx.locale import get_translation, get_translator, is_translator_registered

#: the package's message catalogue: ``sphinx_tensorviz.po`` under :data:`LOCALE_DIR`
CATALOG = "sphinx_tensorviz"
LOCALE_DIR = Path(__file__).resolve().parent.parent / "locale"

#: render options that hold the author's words (``choices`` holds them in each choice's text and why)
TEXT_OPTIONS = ("title", "alt", "description", "prediction")

_gettext = get_translation(CATALOG)

Words = Callable[[str], str]


def _(message: str) -> str:
    """``message`` in the build's language (the package's catalogue); itself where it has none.

    A word that is also a counted noun ("step" as an axis label, ``counted(n, "step", "steps")``)
    has one entry in a catalogue, its plural one (gettext allows one entry per message): its
    singular form is the word."""
    translated = str(_gettext(message))
    if translated == message and is_translator_registered(CATALOG):
        return get_translator(CATALOG).ngettext(message, message, 1)
    return translated


def N_(message: str) -> str:  # noqa: N802 - gettext's name for it
    """Mark ``message`` for the catalogue without translating it: a constant, translated by :func:`_`
    where it is shown (the language is known only then)."""
    return message


def ngettext(singular: str, plural: str, count: int) -> str:
    """The form of a counted noun for ``count`` in the build's language."""
    if is_translator_registered(CATALOG):
        return get_translator(CATALOG).ngettext(singular, plural, count)
    return singular if count == 1 else plural


def words_identity(language: str, course: Path | None = None) -> str:
    """``language`` and the catalogues of a page's words: the package's for the language, and the
    course's (``course``, :func:`course_catalogue`). A key of kept drawings, so a corrected
    translation redraws."""
    package = next((mo for mo in (LOCALE_DIR / name / "LC_MESSAGES" / f"{CATALOG}.mo"
                                  for name in (language, language.split("_")[0])) if mo.is_file()), None)
    files = [mo for mo in (package, course) if mo is not None and mo.is_file()]
    return ":".join([language, *(hashlib.sha256(mo.read_bytes()).hexdigest()[:16] for mo in files)])


def setup_i18n(app: Any) -> None:
    """Register the package's catalogue: Sphinx loads the one of the project's ``language``."""
    app.add_message_catalog(CATALOG, str(LOCALE_DIR))


# -- the course's words -------------------------------------------------------------------------

def untranslated(text: str) -> str:
    """The words of a build with no catalogue: as the author wrote them."""
    return text


def course_catalogue(env: Any, docname: str) -> Path | None:
    """The compiled catalogue of page ``docname`` for ``language`` (the one Sphinx's ``Locale``
    transform reads), if the course has one."""
    config = env.config
    if not config.language or config.language == "en" or not config.locale_dirs:
        return None
    from sphinx.util.i18n import CatalogRepository, docname_to_domain

    domain = docname_to_domain(docname, config.gettext_compact)
    repo = CatalogRepository(env.srcdir, config.locale_dirs, config.language, config.source_encoding)
    found = [Path(c.mo_path) for c in repo.catalogs if c.domain == domain and Path(c.mo_path).is_file()]
    return found[0] if found else None


def course_words(env: Any, docname: str) -> Words:
    """The author's translation of a string of page ``docname`` (:func:`course_catalogue`), or the
    string itself."""
    mo = course_catalogue(env, docname)
    return _catalog(str(mo), mo.stat().st_mtime_ns).gettext if mo is not None else untranslated


@lru_cache(maxsize=64)
def _catalog(path: str, mtime_ns: int) -> gettext.GNUTranslations:
    """A compiled catalogue, read once per version of its file."""
    with open(path, "rb") as handle:
        return gettext.GNUTranslations(handle)


def render_texts(render: dict[str, Any]) -> Iterator[str]:
    """The author's words among a figure's render options, in the order the page shows them."""
    for name in TEXT_OPTIONS:
        if isinstance(render.get(name), str) and render[name]:
            yield render[name]
    for choice in render.get("choices") or ():
        yield from (text for text in (choice.get("text"), choice.get("why")) if text)


def translated_render(render: dict[str, Any], words: Words) -> dict[str, Any]:
    """``render`` with the author's words of :func:`render_texts` translated by ``words``."""
    if words is untranslated:
        return render
    done = {name: words(render[name]) for name in TEXT_OPTIONS if isinstance(render.get(name), str) and render[name]}
    if render.get("choices"):
        done["choices"] = [{**c, **{k: words(c[k]) for k in ("text", "why") if c.get(k)}} for c in render["choices"]]
    return {**render, **done}


class TranslatableWords(addnodes.translatable):
    """A node whose attributes hold the author's words, for ``sphinx-build -b gettext``.

    A node class says which with :meth:`author_texts`; words the page learns only when it is
    written (a claim's description, from the artifact) are added to ``node["tv_messages"]`` by the
    gettext builder's page pass. The translation itself is applied when the page is written
    (:func:`course_words`), so Sphinx's ``Locale`` transform leaves these nodes as they are.
    """

    def author_texts(self) -> Iterable[str]:
        return ()

    def preserve_original_messages(self) -> None:
        """The originals are never replaced: nothing to keep."""

    def apply_translated_message(self, original_message: str, translated_message: str) -> None:
        """Applied when the page is written, from the same catalogue."""

    def extract_original_messages(self) -> list[str]:
        assert isinstance(self, nodes.Element)
        return list(dict.fromkeys([*self.author_texts(), *self.get("tv_messages", ())]))


def counted(count: int, singular: str, plural: str) -> str:
    """``count`` and its noun for a reader, in the build's language (``counted(3, "row", "rows")``).
    Messages for the author keep :func:`.words.plural`, which a worker may use too."""
    return f"{count:,} {ngettext(singular, plural, count)}"
