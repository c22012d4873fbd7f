"""Translated courses (issue 29): Sphinx's gettext workflow translates every word a figure shows.

The author's words (titles, alt text, predictions, choices, tour steps, claims, lesson metadata)
reach the page's ``.pot`` through ``sphinx-build -b gettext`` and come back from the course's own
catalogue (``sphinx-intl update``); the extension's fixed words come from the catalogue shipped in
the package. The artifacts do not depend on the language: a French build executes nothing, changes
no stored file, and draws the same figures apart from their words.

The builds run ``sphinx-build`` and ``sphinx-intl`` in subprocesses, as an author runs them (and
because Sphinx keeps a process's translations for its lifetime).
"""

from __future__ import annotations

import gettext
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from babel.messages.extract import extract_from_dir
from babel.messages.pofile import read_po, write_po
from conftest import copy_root

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "src" / "sphinx_tensorviz"
#: the package's catalogue (``core/i18n.py``'s ``CATALOG`` in ``LOCALE_DIR``)
CATALOG = "sphinx_tensorviz"
LOCALE_DIR = PACKAGE / "locale"
LESSONS = ROOT / "lessons"
SUMMARY = re.compile(r"tensorviz: (\d+) executed, (\d+) cached, (\d+) failed")
#: how the package marks its words (``counted(n, singular, plural)``: a counted noun)
KEYWORDS = {"_": None, "N_": None, "ngettext": (1, 2), "counted": (2, 3)}
FRENCH_PO = LOCALE_DIR / "fr" / "LC_MESSAGES" / f"{CATALOG}.po"


# -- the extension's own catalogue ------------------------------------------------------------------

def package_messages() -> set[str | tuple[str, str]]:
    """Every word the package marks for translation, as Babel extracts it (the .pot's msgids). A
    word that is also a counted noun is one entry, the plural one (``core.i18n._`` reads it so)."""
    found = set()
    for _file, _line, message, _comments, _context in extract_from_dir(
            str(PACKAGE), method_map=[("**.py", "python")], keywords=KEYWORDS):
        found.add(message if isinstance(message, str) else tuple(message))
    return found - {m[0] for m in found if isinstance(m, tuple)}


def catalogue_messages(path: Path) -> dict[str | tuple[str, str], str | tuple[str, ...]]:
    with path.open("rb") as handle:
        return {(m.id if isinstance(m.id, str) else tuple(m.id)): (m.string if isinstance(m.string, str)
                                                                    else tuple(m.string))
                for m in read_po(handle) if m.id}


def fields(text: str) -> set[str]:
    return set(re.findall(r"\{(\w*)(?:[:!][^}]*)?\}", text))


def test_the_shipped_template_has_every_word_the_package_marks() -> None:
    """``locale/sphinx_tensorviz.pot`` is what ``pybabel extract`` makes of the package now."""
    assert set(catalogue_messages(LOCALE_DIR / f"{CATALOG}.pot")) == package_messages()


def test_the_french_catalogue_translates_every_fixed_word_with_the_same_fields() -> None:
    french = catalogue_messages(FRENCH_PO)
    missing = sorted(map(str, package_messages() - set(french)))
    assert not missing, "translate these in locale/fr (docs/howto/translate.md):\n" + "\n".join(missing)
    for message, translated in french.items():
        forms = translated if isinstance(translated, tuple) else (translated,)
        assert all(forms), f"{message!r} has no French"
        original = message if isinstance(message, str) else message[1]
        assert all(fields(form) == fields(original) for form in forms), (message, translated)
    assert french["Predict first:"] == "Prédisez d’abord :"


def test_the_shipped_mo_is_the_compiled_po() -> None:
    """The .mo the build reads says what the .po says (``pybabel compile`` after each edit)."""
    with (FRENCH_PO.with_suffix(".mo")).open("rb") as handle:
        compiled = gettext.GNUTranslations(handle)
    for message, translated in catalogue_messages(FRENCH_PO).items():
        if isinstance(message, str):
            assert compiled.gettext(message) == translated
        else:
            assert [compiled.ngettext(*message, n) for n in (1, 2)] == list(translated)
    assert compiled.ngettext("row", "rows", 1) == "ligne" and compiled.ngettext("row", "rows", 3) == "lignes"


def test_the_scripts_say_exactly_the_words_of_the_catalogue() -> None:
    """Every message a page script says (``tensorviz.say("...")``) is one the package lists for its
    catalogue (``render/script_words.py``), so the French page gives it its French."""
    from sphinx_tensorviz.render.script_words import SCRIPT_WORDS

    said = set()
    for script in (PACKAGE / "static" / "tensorviz").glob("*.js"):
        said |= {m.encode().decode("unicode_escape") for m in re.findall(r'\bsay\("((?:[^"\\]|\\.)*)"',
                                                                           script.read_text("utf-8"))}
    assert said == set(SCRIPT_WORDS)
    assert said <= set(catalogue_messages(FRENCH_PO))


# -- building in French -------------------------------------------------------------------------------

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


@pytest.fixture(scope="module")
def translated_root(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path | str]:
    """test-snapshot translated as an author would: ``-b gettext``, ``sphinx-intl update``, the
    .po files filled in, then built in English and in French from its committed artifacts."""
    base = tmp_path_factory.mktemp("i18n")
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


@pytest.mark.sphinx
def test_gettext_collects_the_authors_words_of_every_figure_and_none_made_from_data(
        translated_root: dict[str, Path]) -> None:
    pots = {p.stem: catalogue_messages(p) for p in (translated_root["base"] / "gettext").glob("*.pot")}
    # title, alt, prediction, a diagram's title and reading, a graph's title, tour steps,
    # the activations' prediction, the lesson's question and limitations
    assert set(ROOT_FRENCH) <= set(pots["index"]) | set(pots["lesson"])
    assert {"Project", "Clip", "The tiny model", "Which values does the ReLU keep?"} <= set(pots["lesson"])
    everything = " ".join(str(m) for pot in pots.values() for m in pot)
    for made in ("Heatmap of", "Computation graph of one forward pass", "Recorded computation", "Predict first"):
        assert made not in everything  # the extension's words are in its own catalogue, not the course's


@pytest.mark.sphinx
def test_french_build_from_the_store_executes_nothing_and_shows_french(translated_root: dict[str, Path]) -> None:
    recorded = len(list((translated_root["src"] / "tensorviz_artifacts").glob("*.json")))  # the heatmap, the graph
    assert [tuple(map(int, found)) for found in SUMMARY.findall(translated_root["french"])] == [(0, recorded, 0)]
    index = visible_text((translated_root["base"] / "fr" / "index.html").read_text("utf-8"))
    lesson = visible_text((translated_root["base"] / "fr" / "lesson.html").read_text("utf-8"))
    for words in ("Un petit produit extérieur", "Quelle case est la plus grande ?", "Deux boîtes",
                  "La boîte a, en haut, alimente la boîte b en dessous."):
        assert words in index
    for words in ("Le tout petit modèle", "Projeter", "Écrêter", "Quelles valeurs la ReLU garde-t-elle ?",
                  "Que garde une ReLU après une couche linéaire ?", "Minuscule et aléatoire."):
        assert words in lesson
    # the extension's own words, from its catalogue: prompt, reveal, long description, table,
    # footer, downloads, tour, outline, activations, lesson header
    for words in ("Prédisez d’abord :", "Afficher la figure (après avoir fait votre prédiction)",
                  "Chaque case montre la valeur (effectif) pour une ligne et une colonne.", "Données : effectif",
                  "Calcul enregistré sur CPU (1 appareil)", "Reproduire cette figure"):
        assert words in index
    for words in ("Visite guidée", "Dans le graphe :", "Le graphe sous forme de liste", "Valeurs en act",
                  "Limites :", "Question :"):
        assert words in lesson
    for english in ("Predict first", "Recorded computation", "Reveal the figure", "The graph as a list",
                    "Guided tour", "A small outer product", "Which values does the ReLU keep?"):
        assert english not in index + lesson


@pytest.mark.sphinx
@pytest.mark.parametrize("builder", ["text", "latex"])
def test_every_builder_writes_the_french(translated_root: dict[str, Path], builder: str) -> None:
    out = translated_root["base"] / f"fr-{builder}"
    done = sphinx("-W", "-b", builder, "-D", "language=fr", str(translated_root["src"]), str(out))
    assert done.returncode == 0, done.stderr
    written = " ".join(p.read_text("utf-8") for p in out.iterdir() if p.suffix in (".txt", ".tex"))
    for words in ("Prédisez d’abord", "Un petit produit extérieur", "Calcul enregistré sur CPU", "Visite guidée"):
        assert words in written
    assert "Predict first" not in written and "Recorded computation" not in written


@pytest.mark.sphinx
def test_only_a_translated_page_gives_the_scripts_their_words(translated_root: dict[str, Path]) -> None:
    french = (translated_root["base"] / "fr" / "lesson.html").read_text("utf-8")
    english = (translated_root["base"] / "en" / "lesson.html").read_text("utf-8")
    assert '"Step {number} of {count}": "Étape {number} sur {count}"' in french
    assert french.index("window.tensorviz.words") < french.index("tensorviz-compose.js")  # set before they run
    assert "window.tensorviz.words" not in english


@pytest.mark.browser
@pytest.mark.sphinx
def test_the_scripts_speak_french_on_a_french_page(translated_root: dict[str, Path], browser: object) -> None:
    from browser_util import browser_missing, page_opener

    if browser_missing():
        pytest.skip(f"needs headless Chromium: {browser_missing()}")
    with page_opener(browser, translated_root["base"] / "fr") as open_page:
        page = open_page("lesson.html")
        tour = page.locator("section.tv-steps")
        assert tour.locator(".tv-step-prev").inner_text() == "← Précédente"
        assert tour.locator(".tv-step-next").get_attribute("aria-label") == "Étape suivante"
        assert tour.locator(".tv-step-count").inner_text() == "Étape 1 sur 2"
        tour.locator(".tv-step-next").click()
        assert tour.locator(".tv-step-count").inner_text() == "Étape 2 sur 2"
        assert page.locator("figure.tv-graph .tv-zoom-in").get_attribute("aria-label") == "Zoomer"


@pytest.mark.sphinx
def test_french_figures_are_the_english_drawings_with_french_words(translated_root: dict[str, Path]) -> None:
    for page in ("index", "lesson"):
        english = figure_svgs((translated_root["base"] / "en" / f"{page}.html").read_text("utf-8"))
        french = figure_svgs((translated_root["base"] / "fr" / f"{page}.html").read_text("utf-8"))
        assert len(english) == len(french) >= 2
        assert [drawing_without_words(s) for s in english] == [drawing_without_words(s) for s in french]
        assert english != french  # their words differ
    title = re.search(r"<title[^>]*>([^<]*)</title>", figure_svgs(
        (translated_root["base"] / "fr" / "index.html").read_text("utf-8"))[0])
    assert title and title.group(1) == "Un petit produit extérieur"


# -- the course in French ---------------------------------------------------------------------------

@pytest.fixture(scope="module")
def french_course(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path | str]:
    """The course built as on Read the Docs (cache-only, no framework installed), in English and in
    French, with the French catalogue of ``lessons/locales/fr``."""
    base = tmp_path_factory.mktemp("course-fr")
    src = base / "lessons"
    shutil.copytree(LESSONS, src, ignore=shutil.ignore_patterns("_build", "__pycache__", "failures", "*.mo"))
    before = stored(src / "tensorviz_artifacts")
    built = {}
    for language in ("en", "fr"):
        done = sphinx("-W", "--keep-going", "-b", "html", "-D", f"language={language}", str(src),
                      str(base / language), env={"READTHEDOCS": "True"}, blocked=True)
        assert done.returncode == 0, done.stderr
        built[language] = done.stdout + done.stderr
    assert stored(src / "tensorviz_artifacts") == before
    return {"base": base, "src": src, **built}


@pytest.mark.sphinx
def test_the_course_builds_in_french_from_its_artifacts_executing_nothing(french_course: dict[str, Path]) -> None:
    recorded = len(list((french_course["src"] / "tensorviz_artifacts").glob("*.json")))
    assert [int(n) for n in SUMMARY.findall(french_course["fr"])[0]] == [0, recorded, 0]
    page = visible_text((french_course["base"] / "fr" / "attention-scores.html").read_text("utf-8"))
    # the course's catalogue: the lesson's metadata, prose, the figure's title and prediction, its claims
    for words in ("Scores d’attention et masque causal", "Quels jetons l’attention d’un décodeur peut-elle regarder",
                  "Poids d’attention causaux d’une tête",
                  "Quelles cases de la matrice de poids 6 × 6 seront exactement nulles",
                  "Chaque ligne de poids d’attention a pour somme 1",
                  "Les poids des jetons ultérieurs sont exactement nuls", "Lire la figure"):
        assert words in page
    # the extension's catalogue: its words around them, and the sentences it makes from the data
    for words in ("Prédisez d’abord :", "Affirmations vérifiées (lors de cette exécution)", "✓ réussie :",
                  "Carte de chaleur (poids d’attention) : 6 lignes (query 0 à query 5) sur 6 colonnes",
                  "Calcul enregistré sur CPU (1 appareil)", "Notre version :", "Limites :"):
        assert words in page
    for english in ("Causal attention weights of one head", "Each row of attention weights sums to 1",
                    "attention weight", "Predict first", "Verified claims", "Recorded computation"):
        assert english not in page
    # a lesson the catalogue does not cover yet keeps its author's words, in the extension's French
    other = visible_text((french_course["base"] / "fr" / "softmax-scaling.html").read_text("utf-8"))
    assert "Prédisez d’abord :" in other and "Predict first" not in other


@pytest.mark.sphinx
def test_the_course_figures_are_the_same_drawings_in_french(french_course: dict[str, Path]) -> None:
    english = figure_svgs((french_course["base"] / "en" / "attention-scores.html").read_text("utf-8"))
    french = figure_svgs((french_course["base"] / "fr" / "attention-scores.html").read_text("utf-8"))
    assert len(english) == len(french) == 1
    assert drawing_without_words(english[0]) == drawing_without_words(french[0])
    assert "<title id=" in french[0] and "Poids d’attention causaux d’une tête</title>" in french[0]
