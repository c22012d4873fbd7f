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
    # the picture is the slide's next step (a reveal.js fragment), not a <details> to click open
    assert "fragment" in classes(parts[picture[0]])
    assert not find_all(figure[0], lambda e: e.tag == "details")
    # the page's reading aids (the data table, the downloads) are left out of the slide
    assert not find_all(figure[0], lambda e: e.tag == "table")
    assert not find_all(figure[0], with_class("tv-downloads"))
    assert "A small outer product" in text_of(figure[0])


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


def test_deck_links_the_figure_styles_and_scripts(deck: Build) -> None:
    page = deck.html("lesson")
    head = page[:page.index("<body")]
    for asset in ("tensorviz/tensorviz.css", "tensorviz/tensorviz-slides.css",
                  "tensorviz/tensorviz.js", "tensorviz/tensorviz-slides.js"):
        assert f'_static/{asset}' in head, f"{asset} is not linked"
        assert (deck.outdir / "_static" / asset).is_file()


@pytest.mark.parametrize("lesson", ["llama-decoder"])
def test_course_deck_builds_clean_from_committed_artifacts(tmp_path: Path, lesson: str) -> None:
    """The course as slides (``-t slides`` adds sphinx-revealjs in its conf.py): every page is a deck
    whose slides are its headings; nothing runs; no warning."""
    from browser_util import copy_lessons

    src = copy_lessons(tmp_path / "src")
    built = run_sphinx(src, "revealjs", freshenv=True, tags=["slides"],
                       confoverrides={"tensorviz_execution_mode": "cache-only"})
    assert built.statuscode == 0
    assert built.warnings.strip() == "", built.warnings
    assert built.summary[0] == 0 and built.summary[2] == 0
    for page in sorted(src.glob("*.md")):
        if page.name == "README.md":
            continue
        headings = [line.lstrip("#").strip() for line in page.read_text("utf-8").splitlines()
                    if re.match(r"#{1,2} ", line)]
        slides = slides_of(built.html(page.stem))
        assert [re.sub(r"\s+", " ", heading(s)) for s in slides] == headings, page.name
    tour = find_all(parse_html(built.html(lesson)), with_class("tv-steps"))
    assert tour and all("fragment" in classes(s) for s in find_all(tour[0], with_class("tv-step")))
