"""The figures added beside the translation API speak the build's language too (issue 29, part 2).

``tv-lens`` and ``tv-patch`` (the induction-heads lesson), ``:frameworks:`` (two-frameworks) and the
"Download notebook" line say their fixed words through ``core/i18n.py``: a French build of the course
from its committed artifacts (cache-only, no framework importable, so nothing could execute) shows
them in French, and draws the same figures apart from their words. A lesson's notebook keeps the
page's source as written (the author's language) around the figures as the build shows them.

The builds run ``sphinx-build`` in subprocesses (``i18n_util.py``), as ``test_i18n.py``'s do.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from i18n_util import (
    catalogue_messages,
    drawing_without_words,
    figure_svgs,
    sphinx,
    sphinx_intl_update,
    stored,
    translate,
    visible_text,
)

LESSONS = Path(__file__).resolve().parents[1] / "lessons"
SUMMARY = re.compile(r"tensorviz: (\d+) executed, (\d+) cached, (\d+) failed")
#: what a translator writes in induction-heads' catalogue: the lens's and the patching figures' titles and
#: predictions, and (:data:`CLAIM`) the start of a patching claim's description
AUTHOR_FRENCH = {
    "What the trained model predicts after each layer": "Ce que le modèle entraîné prédit après chaque couche",
    "Which head brings back the copied token?": "Quelle tête ramène le jeton copié ?",
    "After layer 0, at which position does the clean run's answer sit?":
        "Après la couche 0, à quelle position se trouve la réponse de l’exécution propre ?",
}
CLAIM = "Each head of layer 1 restores between 20% and 80%"
CLAIM_FRENCH = "Chaque tête de la couche 1 rétablit entre 20 % et 80 %"


@pytest.fixture(scope="module")
def course(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path | str]:
    """The course built as on Read the Docs (cache-only, no framework installed), in English and French."""
    base = tmp_path_factory.mktemp("kinds-fr")
    src = base / "lessons"
    shutil.copytree(LESSONS, src, ignore=shutil.ignore_patterns("_build", "__pycache__", "failures", "*.mo"))
    before = stored(src / "tensorviz_artifacts")
    gettext_build = sphinx("-b", "gettext", str(src), str(base / "gettext"), env={"READTHEDOCS": "True"},
                           blocked=True)
    assert gettext_build.returncode == 0, gettext_build.stderr
    sphinx_intl_update(base / "gettext", src / "locales")
    claim = next(m for m in catalogue_messages(base / "gettext" / "induction-heads.pot")
                 if str(m).startswith(CLAIM))  # its measured numbers come from the recorded artifact
    translate(src / "locales" / "fr" / "LC_MESSAGES" / "induction-heads.po",
              {**AUTHOR_FRENCH, str(claim): CLAIM_FRENCH + str(claim)[len(CLAIM):]})
    built: dict[str, Path | str] = {"base": base, "src": src}
    for language in ("en", "fr"):
        done = sphinx("-W", "--keep-going", "-b", "html", "-D", f"language={language}", str(src),
                      str(base / language), env={"READTHEDOCS": "True"}, blocked=True)
        assert done.returncode == 0, done.stderr
        built[language] = done.stdout + done.stderr
    assert stored(src / "tensorviz_artifacts") == before  # nothing recorded, rewritten or dropped
    return built


def page(course: dict[str, Path | str], language: str, name: str) -> str:
    return (Path(course["base"]) / language / f"{name}.html").read_text("utf-8")


@pytest.mark.sphinx
def test_a_french_build_executes_nothing(course: dict[str, Path | str]) -> None:
    recorded = len(list((Path(course["src"]) / "tensorviz_artifacts").glob("*.json")))
    assert [tuple(map(int, found)) for found in SUMMARY.findall(str(course["fr"]))] == [(0, recorded, 0)]


@pytest.mark.sphinx
def test_the_lens_and_the_patching_figures_say_their_words_in_french(course: dict[str, Path | str]) -> None:
    french = visible_text(page(course, "fr", "induction-heads"))
    english = visible_text(page(course, "en", "induction-heads"))
    said = {  # English -> French, each said by the page in its language
        # the lens: long description, its tables' captions and headers
        "Each row is a layer, counted from 0": "Chaque ligne est une couche, comptée à partir de 0",
        "Data: the probability of the next input token": "Données : la probabilité du jeton d’entrée suivant",
        "Data: the top 5 tokens and their probabilities": "Données : les 5 jetons les plus probables et leurs",
        "position → target": "position → cible",
        # patching: the caption's baselines, the long description, the table's caption and headers
        "(the logit difference of A over B: clean 10, corrupted": "(la différence de logits de A sur B : propre 10",
        "The corrupted input was run again": "L’entrée corrompue a été exécutée à nouveau",
        "Data: fraction restored (clean 10, corrupted": "Données : fraction rétablie (propre 10, corrompue",
        "layer \\ head": "couche \\ tête",
        # the notebook's line under the title
        "Download notebook:": "Télécharger le notebook :",
    }
    for words, translated in said.items():
        assert words in english and words not in french, words
        assert translated in french, translated
    source = page(course, "fr", "induction-heads")
    # the drawings' words (alt text in the SVG's description, row labels, the colour bar's label)
    svgs = " ".join(figure_svgs(source))
    for words in ("Lentille des logits de", "Remplacement d’activations de la sortie de chaque tête d’attention",
                  ">couche 1<", "probabilité de la cible", "fraction rétablie", ">tête 0<"):
        assert words in svgs, words
    for words in ("Logit lens of", "Activation patching of", ">layer 1<", "fraction restored", ">head 0<"):
        assert words not in svgs, words


@pytest.mark.sphinx
def test_the_authors_words_of_the_lens_and_the_patching_figures_come_from_the_course_catalogue(
        course: dict[str, Path | str]) -> None:
    """Titles, predictions and claims of ``tv-lens`` and ``tv-patch`` go where every kind's go: into the
    page's ``.pot`` (``-b gettext``), and back from its ``.po`` when the page is written."""
    source = page(course, "fr", "induction-heads")
    french, english = visible_text(source), visible_text(page(course, "en", "induction-heads"))
    for words, translated in [*AUTHOR_FRENCH.items(), (CLAIM, CLAIM_FRENCH)]:
        assert words in english and words not in french, words
        assert translated in french, translated
    # the patching caption: the author's title, then the extension's baselines
    assert "Quelle tête ramène le jeton copié ? (la différence de logits de A sur B : propre 10" in french
    svgs = " ".join(figure_svgs(source))
    assert "Ce que le modèle entraîné prédit après chaque couche</title>" in svgs


@pytest.mark.sphinx
def test_the_frameworks_footer_says_its_agreement_in_french(course: dict[str, Path | str]) -> None:
    french = visible_text(page(course, "fr", "two-frameworks"))
    english = visible_text(page(course, "en", "two-frameworks"))
    assert re.search(r"PyTorch and JAX agree on \w+ within float32 tolerance \(\|difference\|", english)
    assert re.search(r"PyTorch et JAX concordent sur \w+ à la tolérance de float32 près \(\|différence\|", french)
    assert "agree on" not in french and "within float32 tolerance" not in french


def colours(svg: str) -> list[str]:
    """The colours a drawing paints, in order: its cells, bars and lines, wherever its words put them."""
    return re.findall(r'(?:fill|stroke)="(#[0-9a-fA-F]{3,8})"', svg)


@pytest.mark.sphinx
@pytest.mark.parametrize("lesson", ["induction-heads", "two-frameworks"])
def test_the_french_figures_are_the_english_drawings(course: dict[str, Path | str], lesson: str) -> None:
    """The same figures with other words. A grid's margin fits its row labels ("couche 1" is wider than
    "layer 1"), so the cells it paints are compared, and the drawings whose words move nothing whole."""
    english, french = (figure_svgs(page(course, language, lesson)) for language in ("en", "fr"))
    assert len(english) == len(french) >= 2
    assert [colours(s) for s in english] == [colours(s) for s in french]
    assert all(colours(s) for s in french)
    kept = [e == f for e, f in zip(map(drawing_without_words, english), map(drawing_without_words, french))]
    assert any(kept) if lesson == "induction-heads" else all(kept)


def notebook(course: dict[str, Path | str], language: str) -> dict[str, Any]:
    return json.loads((Path(course["base"]) / language / "_tensorviz" / "notebooks" / "induction-heads.ipynb")
                      .read_text("utf-8"))


@pytest.mark.sphinx
def test_a_notebook_keeps_the_pages_source_and_shows_the_figures_of_the_build(course: dict[str, Path | str]) -> None:
    """Its prose, prompts, choices and code are made from the page's source, as the author wrote them: the
    same in every language. Its figures (pictures with their alt text, recorded outputs) are the figures
    as the build shows them: their words in the build's language."""
    english, french = notebook(course, "en"), notebook(course, "fr")
    source = [[c["source"] for c in book["cells"] if "](data:image/svg+xml" not in c["source"]] for book in (english, french)]
    assert source[0] == source[1] and len(source[1]) > 10
    assert "*Predict first:*" in json.dumps(source[1])
    said = [json.dumps(book["cells"], ensure_ascii=False) for book in (english, french)]
    assert "Logit lens of" in said[0] and "Logit lens of" not in said[1]
    assert "Lentille des logits de" in said[1] and "Remplacement d’activations de" in said[1]
