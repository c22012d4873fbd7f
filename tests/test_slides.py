"""Slides: the ``revealjs`` builder of sphinx-revealjs (the ``slides`` extra) turns each lesson into
a reveal.js deck, one slide per heading, from the committed artifacts (tests/roots/test-slides and
the course). The decks' behaviour in a browser is tests/test_slides_browser.py."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from conftest import Build, copy_root, run_sphinx
from snapshot_util import Element, parse_html

pytestmark = pytest.mark.sphinx

pytest.importorskip("sphinx_revealjs")


def classes(element: Element) -> list[str]:
    return dict(element.attrs).get("class", "").split()


def children(element: Element, tag: str | None = None) -> list[Element]:
    return [c for c in element.children if isinstance(c, Element) and (tag is None or c.tag == tag)]


def find_all(element: Element, test: object) -> list[Element]:
    """Every element under ``element`` (depth first, in document order) for which ``test`` holds."""
    found = []
    for child in children(element):
        if test(child):  # type: ignore[operator]
            found.append(child)
        found.extend(find_all(child, test))
    return found


def with_class(name: str) -> object:
    return lambda e: name in classes(e)


def text_of(element: Element | str) -> str:
    if isinstance(element, str):
        return element
    return "".join(text_of(c) for c in element.children) if element.raw is None else ""


def slides_of(page: str) -> list[Element]:
    """The deck's slides in order: each ``section`` of each horizontal stack under ``div.slides``;
    fails where anything but slides (text included) stands in a stack, as reveal.js shows none of it."""
    root = parse_html(page)
    deck = find_all(root, with_class("slides"))
    assert len(deck) == 1, "one div.slides"
    slides = []
    for stack in children(deck[0]):
        assert stack.tag == "section", f"a {stack.tag} beside the slides"
        stray = [c for c in stack.children if not (isinstance(c, Element) and c.tag == "section")]
        assert not "".join(text_of(c) for c in stray).strip(), f"content outside any slide: {stray!r}"
        slides.extend(children(stack, "section"))
    return slides


def heading(slide: Element) -> str:
    found = find_all(slide, lambda e: re.fullmatch(r"h[1-6]", e.tag) is not None)
    return text_of(found[0]).strip() if found else ""


@pytest.fixture(scope="module")
def deck(tmp_path_factory: pytest.TempPathFactory) -> Build:
    src = copy_root("slides", tmp_path_factory.mktemp("slides") / "src", with_store=True)
    return run_sphinx(src, "revealjs", freshenv=True)


def test_deck_builds_from_the_committed_artifacts_without_warnings(deck: Build) -> None:
    assert deck.statuscode == 0
    assert deck.warnings.strip() == "", deck.warnings
    assert deck.summary == (0, 2, 0)  # nothing executed: both figures come from the store


def test_one_slide_per_heading_and_nothing_outside_them(deck: Build) -> None:
    slides = slides_of(deck.html("lesson"))
    source = (Path(deck.app.srcdir) / "lesson.md").read_text("utf-8")
    headings = [line.lstrip("#").strip() for line in source.splitlines() if re.match(r"#{1,2} ", line)]
    assert [heading(s) for s in slides] == headings
    # the lesson's credits, added after its last section, are on the last slide
    assert find_all(slides[-1], with_class("tv-lesson-footer"))


def test_figure_on_its_slide_after_its_prediction_and_without_the_page_details(deck: Build) -> None:
    slides = slides_of(deck.html("lesson"))
    heatmap = slides[1]
    figure = find_all(heatmap, with_class("tv-heatmap"))
    assert len(figure) == 1
    parts = children(figure[0])
    prediction = [n for n, c in enumerate(parts) if "tv-prediction" in classes(c)]
    picture = [n for n, c in enumerate(parts) if find_all(c, lambda e: e.tag == "svg")]
    assert len(prediction) == 1 and len(picture) == 1 and prediction[0] < picture[0]
    # the picture is the slide's next step (a reveal.js fragment), not a <details> to click open,
    # and the answer to the choices the step after it
    assert "fragment" in classes(parts[picture[0]])
    answer = [n for n, c in enumerate(parts) if find_all(c, with_class("tv-choice-answer"))]
    assert len(answer) == 1 and answer[0] > picture[0] and "fragment" in classes(parts[answer[0]])
    # the choices before the picture, as a list to answer aloud (no form to pick one)
    choices = [n for n, c in enumerate(parts) if "tv-choice-list" in classes(c)]
    assert len(choices) == 1 and choices[0] < picture[0]
    assert not find_all(figure[0], lambda e: e.tag == "form")
    assert not find_all(figure[0], lambda e: e.tag == "details")
    # the page's reading aids (the data table, the downloads) are left out of the slide
    assert not find_all(figure[0], lambda e: e.tag == "table")
    assert not find_all(figure[0], with_class("tv-downloads"))
    assert "A small outer product" in text_of(figure[0])
    # nor are their files written: a deck links none of them
    assert not [p.name for p in deck.outdir.rglob("*") if p.suffix in (".zip", ".py") or p.name == "artifact.json"]


def test_tour_steps_are_fragments_shown_one_at_a_time(deck: Build) -> None:
    slides = slides_of(deck.html("lesson"))
    tour_slide = slides[2]
    assert find_all(tour_slide, lambda e: e.tag == "svg" and "tv-graph" in classes(e))
    tours = find_all(tour_slide, with_class("tv-steps"))
    assert len(tours) == 1
    steps = find_all(tours[0], with_class("tv-step"))
    source = (Path(deck.app.srcdir) / "lesson.md").read_text("utf-8")
    assert [dict(s.attrs)["data-step"] for s in steps] == re.findall(r"\{tv-step\} (\S+)", source)
    for step in steps:  # one step visible at a time: each is shown only while it is the current fragment
        assert {"fragment", "current-visible"} <= set(classes(step))
    # the steps not shown take no room, so each step carries its own number
    assert [dict(s.attrs).get("value") for s in steps] == [str(n) for n in range(1, len(steps) + 1)]


def test_deck_links_the_figure_styles_and_scripts(deck: Build) -> None:
    page = deck.html("lesson")
    head = page[:page.index("<body")]
    for asset in ("tensorviz/tensorviz.css", "tensorviz/tensorviz-slides.css",
                  "tensorviz/tensorviz.js", "tensorviz/tensorviz-slides.js"):
        assert f'_static/{asset}' in head, f"{asset} is not linked"
        assert (deck.outdir / "_static" / asset).is_file()


@pytest.fixture(scope="module")
def course(tmp_path_factory: pytest.TempPathFactory) -> Build:
    """The course as slides (``-t slides`` adds sphinx-revealjs in its conf.py), from its artifacts."""
    from browser_util import copy_lessons

    src = copy_lessons(tmp_path_factory.mktemp("course") / "src")
    return run_sphinx(src, "revealjs", freshenv=True, tags=["slides"],
                      confoverrides={"tensorviz_execution_mode": "cache-only"})


def test_course_deck_builds_clean_with_a_slide_per_heading(course: Build) -> None:
    assert course.statuscode == 0
    assert course.warnings.strip() == "", course.warnings
    assert course.summary[0] == 0 and course.summary[2] == 0  # nothing executed, nothing failed
    pages = [p for p in sorted(Path(course.app.srcdir).glob("*.md")) if p.name != "README.md"]
    assert len(pages) > 5
    for page in pages:
        headings = [line.lstrip("#").strip() for line in page.read_text("utf-8").splitlines()
                    if re.match(r"#{1,2} ", line)]
        slides = slides_of(course.html(page.stem))
        assert [heading(s) for s in slides] == headings, page.name


def test_course_tours_step_through_a_graph_on_their_own_slide(course: Build) -> None:
    """The course draws each graph under the lesson's title and tours it a slide later: the tour's
    slide shows the graph again (without asking its prediction a second time), and the tour follows it."""
    toured = [p.stem for p in sorted(Path(course.app.srcdir).glob("*.md")) if "{tv-steps}" in p.read_text("utf-8")]
    assert len(toured) >= 3
    for lesson in toured:
        slides = slides_of(course.html(lesson))
        tour_slides = [s for s in slides if find_all(s, with_class("tv-steps"))]
        assert len(tour_slides) == 1, lesson
        tour = find_all(tour_slides[0], with_class("tv-steps"))[0]
        graph_id = dict(tour.attrs)["data-graph"]
        figures = find_all(tour_slides[0], lambda e: e.tag == "figure" and dict(e.attrs).get("id") == graph_id)
        assert len(figures) == 1, f"{lesson}: the tour's graph {graph_id} is not on its slide"
        assert find_all(figures[0], lambda e: e.tag == "svg" and "tv-graph" in classes(e))
        assert not find_all(figures[0], with_class("tv-prediction"))
        steps = find_all(tour, with_class("tv-step"))
        assert steps and all({"fragment", "current-visible"} <= set(classes(s)) for s in steps), lesson
        # the graph's own figure, on an earlier slide, keeps its id and its prediction
        original = [s for s in slides if find_all(s, lambda e: e.tag == "svg" and "tv-graph" in classes(e))]
        assert slides.index(original[0]) < slides.index(tour_slides[0])


def test_one_folder_per_page_deck_is_laid_out_as_slides_too(tmp_path: Path) -> None:
    """sphinx-revealjs's ``dirrevealjs`` (``lesson/index.html``) is a deck as well."""
    src = copy_root("slides", tmp_path / "src", with_store=True)
    built = run_sphinx(src, "dirrevealjs", freshenv=True)
    assert built.statuscode == 0 and built.warnings.strip() == "", built.warnings
    page = (built.outdir / "lesson" / "index.html").read_text("utf-8")
    slides = slides_of(page)
    assert find_all(slides[1], with_class("tv-slide-figure"))
    assert find_all(slides[-1], with_class("tv-lesson-footer"))
    assert "_static/tensorviz/tensorviz-slides.css" in page[:page.index("<body")]
