"""Translated courses (issue 29): Sphinx's gettext workflow translates every word a figure shows.

The author's words (titles, alt text, predictions, choices, tour steps, claims, lesson metadata)
reach the page's ``.pot`` through ``sphinx-build -b gettext`` and come back from the course's own
catalogue (``sphinx-intl update``); the extension's fixed words come from the catalogue shipped in
the package. The artifacts do not depend on the language: a French build executes nothing, changes
no stored file, and draws the same figures apart from their words.

The builds run ``sphinx-build`` and ``sphinx-intl`` in subprocesses (``i18n_util.py``); the
scripts' words in a browser are ``test_i18n_browser.py``'s.
"""

from __future__ import annotations

import gettext
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
from babel.messages.extract import extract_from_dir

from i18n_util import (
    ROOT_FRENCH,
    catalogue_messages,
    drawing_without_words,
    figure_svgs,
    sphinx,
    stored,
    translated_snapshot_root,
    visible_text,
)

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


def test_a_figures_words_are_its_authors_render_options_and_only_they_are_translated() -> None:
    from sphinx_tensorviz.core.i18n import render_texts, translated_render, untranslated

    render = {"title": "Weights", "alt": "A grid.", "prediction": "Which is largest?", "colormap": "viridis",
              "choices": [{"text": "The first", "why": "It is.", "correct": True}, {"text": "None", "why": "",
                                                                                     "correct": False}],
              "choices-check": "check_first", "description": ""}
    assert list(render_texts(render)) == ["Weights", "A grid.", "Which is largest?", "The first", "It is.", "None"]
    french = {"Weights": "Poids", "A grid.": "Une grille.", "Which is largest?": "Lequel est le plus grand ?",
              "The first": "Le premier", "It is.": "Il l’est.", "None": "Aucun"}
    done = translated_render(render, lambda text: french.get(text, text))
    assert [done[k] for k in ("title", "alt", "prediction")] == ["Poids", "Une grille.", "Lequel est le plus grand ?"]
    assert done["choices"] == [{"text": "Le premier", "why": "Il l’est.", "correct": True},
                               {"text": "Aucun", "why": "", "correct": False}]
    assert (done["colormap"], done["choices-check"]) == ("viridis", "check_first")  # names, not words
    assert render["title"] == "Weights" and render["choices"][0]["text"] == "The first"  # the request's are kept
    assert translated_render(render, untranslated) is render


def test_the_words_identity_follows_the_catalogues(tmp_path: Path) -> None:
    """Kept drawings are keyed by it: a corrected translation, the package's or the course's, redraws."""
    from sphinx_tensorviz.core.i18n import words_identity

    course = tmp_path / "lesson.mo"
    course.write_bytes(FRENCH_PO.with_suffix(".mo").read_bytes())
    first = words_identity("fr", course)
    assert first != words_identity("fr") != "fr"  # the package's French and the course's count
    course.write_bytes(course.read_bytes() + b"\0")
    assert words_identity("fr", course) != first
    assert words_identity("xx") == "xx"  # a language the package has no catalogue for


# -- building in French -------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def translated_root(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return translated_snapshot_root(tmp_path_factory.mktemp("i18n"))


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
    gettext_build = sphinx("-b", "gettext", str(src), str(base / "gettext"), env={"READTHEDOCS": "True"},
                           blocked=True)
    assert gettext_build.returncode == 0, gettext_build.stderr
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
    other = visible_text((french_course["base"] / "fr" / "multi-head.html").read_text("utf-8"))
    assert "Prédisez d’abord :" in other and "Predict first" not in other


@pytest.mark.sphinx
def test_gettext_collects_a_sweeps_choices_and_the_claims_of_its_points_and_of_the_sweep(
        french_course: dict[str, Path]) -> None:
    pot = catalogue_messages(french_course["base"] / "gettext" / "softmax-scaling.pot")
    assert {"They get flatter, spreading over more keys", "They get sharper, concentrating on one key",
            "Normalising makes each row sum to one, but the shape of the row still depends on how far apart the "
            "scores are.", "Softmax weights as the divisor grows", "Every row of weights sums to one.",
            "The mean row entropy rises at every step as the divisor grows (from 0.04 to 1.92 nats)"} <= set(pot)


@pytest.mark.sphinx
def test_a_french_prediction_with_choices_asks_and_answers_in_french(french_course: dict[str, Path]) -> None:
    """softmax-scaling's temperature sweep: its choices and their why from the course's catalogue,
    in the list, the radio group and the answer; the claim that confirms the answer too."""
    source = (french_course["base"] / "fr" / "softmax-scaling.html").read_text("utf-8")
    page = visible_text(source)
    flatter = "Ils s’aplatissent et se répartissent sur plus de clés"
    assert page.count(flatter) >= 3  # the lettered list, the radio group's label, the answer
    assert re.search(r'<label for="[^"]+-choice-0">A\. Ils s’aplatissent', source)
    for words in ("Quand le diviseur passe de 1 à 16, que deviennent les poids de chaque requête sur les huit clés ?",
                  "Réponse : A. " + flatter, "juste.", "pas ce que montrent les données.",
                  "Un plus grand diviseur réduit les écarts entre les scores",
                  "confirmé par les données enregistrées : L’entropie moyenne des lignes augmente à chaque pas",
                  "Poids de la softmax quand le diviseur grandit"):
        assert words in page
    for english in ("They get flatter", "They get sharper", "As the divisor grows from 1 to 16", "Answer:"):
        assert english not in page


@pytest.mark.sphinx
def test_the_course_figures_are_the_same_drawings_in_french(french_course: dict[str, Path]) -> None:
    english = figure_svgs((french_course["base"] / "en" / "attention-scores.html").read_text("utf-8"))
    french = figure_svgs((french_course["base"] / "fr" / "attention-scores.html").read_text("utf-8"))
    assert len(english) == len(french) == 1
    assert drawing_without_words(english[0]) == drawing_without_words(french[0])
    assert "<title id=" in french[0] and "Poids d’attention causaux d’une tête</title>" in french[0]
