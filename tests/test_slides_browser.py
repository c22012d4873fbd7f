"""A reveal.js deck in headless Chromium: a lecturer advances with the keyboard through a figure
revealed after its prediction and a tour whose steps appear one at a time, with the figures' styles
and scripts working and nothing written to the console as an error (tests/roots/test-slides)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from browser_util import browser_missing, offline_context
from conftest import Build, copy_root, run_sphinx

pytestmark = [pytest.mark.browser, pytest.mark.sphinx]

pytest.importorskip("sphinx_revealjs")
if browser_missing():
    pytest.skip(browser_missing(), allow_module_level=True)

from playwright.sync_api import expect  # noqa: E402 (after the skip: Playwright may be missing)


@pytest.fixture(scope="module")
def deck(tmp_path_factory: pytest.TempPathFactory) -> Build:
    src = copy_root("slides", tmp_path_factory.mktemp("slides") / "src", with_store=True)
    built = run_sphinx(src, "revealjs", freshenv=True)
    assert built.statuscode == 0 and not built.warnings.strip(), built.warnings
    return built


@pytest.fixture
def lesson(browser: Any, deck: Build) -> Iterator[tuple[Any, list[str]]]:
    """The lesson's deck, open at its first slide, and the errors its console and scripts report."""
    context = offline_context(browser, viewport={"width": 1280, "height": 800})
    page = context.new_page()
    errors: list[str] = []
    page.on("console", lambda m: errors.append(f"console: {m.text}") if m.type == "error" else None)
    page.on("pageerror", lambda exc: errors.append(f"script: {exc}"))
    page.on("requestfailed", lambda r: errors.append(f"not loaded: {r.url}"))
    page.goto((deck.outdir / "lesson.html").as_uri())
    page.wait_for_function("() => window.Reveal && Reveal.isReady()")
    # slides move in at once (no sliding transition), so their boxes can be measured right after a key
    page.evaluate("() => Reveal.configure({transition: 'none', backgroundTransition: 'none'})")
    yield page, errors
    context.close()


def advance(page: Any, key: str, slide: int, fragment: int | None) -> None:
    """Press ``key`` and wait until reveal.js is at that slide and fragment (``-1``: none shown)."""
    page.keyboard.press(key)
    want = "null" if fragment is None else str(fragment)
    page.wait_for_function(f"() => {{ const i = Reveal.getIndices(); return i.h === {slide} && "
                           f"(i.f === undefined ? null : i.f) === {want}; }}")


def inside(inner: dict[str, float], outer: dict[str, float]) -> bool:
    return (inner["x"] >= outer["x"] - 1 and inner["y"] >= outer["y"] - 1
            and inner["x"] + inner["width"] <= outer["x"] + outer["width"] + 1
            and inner["y"] + inner["height"] <= outer["y"] + outer["height"] + 1)


def test_keyboard_walks_the_prediction_the_figure_and_the_tour(lesson: tuple[Any, list[str]]) -> None:
    page, errors = lesson
    deck_box = page.locator(".reveal .slides").bounding_box()

    advance(page, "ArrowRight", 1, -1)  # the heatmap's slide: the question, not yet the answer
    figure = page.locator("figure.tv-heatmap")
    assert figure.locator(".tv-prediction").is_visible()
    # tensorviz.css is applied on the slide (the prompt's bar), and the deck's own sheet (fragments)
    assert figure.locator(".tv-prediction").evaluate("e => getComputedStyle(e).borderLeftWidth") == "4px"
    picture = figure.locator(".tv-slide-picture svg")
    expect(picture).to_be_hidden()

    advance(page, "ArrowRight", 1, 0)  # the figure appears, drawn inside the slide
    expect(picture).to_be_visible()  # (fragments fade in: waited for)
    box = picture.bounding_box()
    assert inside(box, deck_box), (box, deck_box)
    # at slide size: this small heatmap is drawn larger than its natural size (in the slide's pixels)
    drawn, natural = picture.evaluate("e => [e.getBoundingClientRect().height / Reveal.getScale(),"
                                      " +e.getAttribute('height')]")
    assert drawn > 1.5 * natural, (drawn, natural)
    answer = figure.locator(".tv-slide-answer")
    expect(answer).to_be_hidden()
    advance(page, "ArrowRight", 1, 1)  # then the answer to the choices
    expect(answer).to_be_visible()

    advance(page, "ArrowRight", 2, -1)  # the graph and its tour, no step yet
    slide = page.locator("figure.tv-graph").locator("xpath=ancestor::section[1]")
    graph = slide.locator("svg.tv-graph")
    expect(graph).to_be_visible()
    assert inside(graph.bounding_box(), deck_box)
    steps = slide.locator("li.tv-step")
    assert steps.count() == 2 and not steps.nth(0).is_visible() and not steps.nth(1).is_visible()
    marked = graph.locator("g.tv-step-target")
    assert marked.count() == 0

    for shown, node in ((0, "up"), (1, "act")):  # one step at a time, its node marked on the graph
        advance(page, "ArrowRight", 2, shown)
        expect(steps.nth(shown)).to_be_visible()
        expect(steps.nth(1 - shown)).to_be_hidden()
        assert marked.count() == 1 and marked.first.get_attribute("data-node") == node
        assert inside(steps.nth(shown).bounding_box(), deck_box)

    advance(page, "ArrowLeft", 2, 0)  # back one step
    expect(steps.nth(0)).to_be_visible()
    expect(steps.nth(1)).to_be_hidden()
    assert marked.first.get_attribute("data-node") == "up"

    advance(page, "ArrowRight", 2, 1)
    advance(page, "ArrowRight", 3, None)  # the last slide, with the lesson's credits
    footer = page.locator(".tv-lesson-footer")
    expect(footer).to_be_visible()
    assert inside(footer.bounding_box(), deck_box)
    assert not errors, errors


def test_tour_uses_no_page_stepper_on_slides(lesson: tuple[Any, list[str]]) -> None:
    """reveal.js steps the tour: the page's stepper (buttons, its own arrow keys) is not added."""
    page, errors = lesson
    assert page.locator(".tv-step-controls").count() == 0
    assert page.locator("section.tv-steps.tv-steps-enhanced").count() == 0
    assert not errors, errors



@pytest.fixture(scope="module")
def course_deck(tmp_path_factory: pytest.TempPathFactory) -> Build:
    """The course as slides, from its committed artifacts."""
    from browser_util import copy_lessons

    src = copy_lessons(tmp_path_factory.mktemp("course") / "src")
    built = run_sphinx(src, "revealjs", freshenv=True, tags=["slides"],
                       confoverrides={"tensorviz_execution_mode": "cache-only"})
    assert built.statuscode == 0 and not built.warnings.strip(), built.warnings
    return built


def test_course_tour_zooms_its_graph_in_on_each_stop(browser: Any, course_deck: Build) -> None:
    """A deep model fitted to a slide is drawn small: each stop of its tour zooms the graph (its
    viewBox) in on the stop's node, and the tour's last step back shows the whole graph again."""
    context = offline_context(browser, viewport={"width": 1280, "height": 800})
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    # the course's math comes from MathJax's CDN, which this offline browser cannot reach
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" and "net::" not in m.text else None)
    page.goto((course_deck.outdir / "llama-decoder.html").as_uri())
    page.wait_for_function("() => window.Reveal && Reveal.isReady()")
    page.evaluate("() => Reveal.configure({transition: 'none', backgroundTransition: 'none'})")
    tour = page.locator("section.tv-steps-fragments")
    slide = page.evaluate("() => Reveal.getIndices(document.querySelector('section.tv-steps-fragments')"
                          ".closest('.slides > section > section, .slides > section')).h")
    page.evaluate(f"() => Reveal.slide({slide}, 0, -1)")
    graph = page.locator(f"#{tour.get_attribute('data-graph')} svg.tv-graph")
    expect(graph).to_be_visible()
    home = graph.get_attribute("viewBox")
    steps = tour.locator("li.tv-step")
    marked = graph.locator("g.tv-step-target")
    for shown in range(steps.count()):
        page.keyboard.press("ArrowRight")
        expect(steps.nth(shown)).to_be_visible()
        stop = steps.nth(shown)
        expect(marked).to_have_count(1)
        node = marked.get_attribute("data-node")
        assert node in (stop.get_attribute("data-target"), stop.get_attribute("data-visible"))
        view = [float(n) for n in graph.get_attribute("viewBox").split()]
        whole = [float(n) for n in home.split()]
        assert view[2] < whole[2] and view[3] < whole[3], (view, whole)
        assert inside(marked.bounding_box(), graph.bounding_box())  # the stop is in the zoomed view
    for _ in range(steps.count()):
        page.keyboard.press("ArrowLeft")
    expect(steps.nth(0)).to_be_hidden()
    page.wait_for_function("([s, home]) => s.getAttribute('viewBox') === home", arg=[graph.element_handle(), home])
    context.close()
    assert not errors, errors


def test_every_course_deck_walks_to_its_end_without_errors(browser: Any, course_deck: Build) -> None:
    """Each lesson's deck, advanced key by key through every slide and step: no script error, no
    console error, and no slide wider than the deck (every figure is drawn to the slide's width)."""
    lessons = sorted(p.stem for p in Path(course_deck.app.srcdir).glob("*.md") if p.name != "README.md")
    context = offline_context(browser, viewport={"width": 1280, "height": 800})
    errors: list[str] = []
    wide: list[str] = []
    for lesson in lessons:
        page = context.new_page()
        page.on("pageerror", lambda exc, lesson=lesson: errors.append(f"{lesson}: {exc}"))
        # the course's math comes from MathJax's CDN, which this offline browser cannot reach
        page.on("console", lambda m, lesson=lesson: errors.append(f"{lesson}: {m.text}")
                if m.type == "error" and "net::" not in m.text else None)
        page.goto((course_deck.outdir / f"{lesson}.html").as_uri())
        page.wait_for_function("() => window.Reveal && Reveal.isReady()")
        page.evaluate("() => Reveal.configure({transition: 'none', backgroundTransition: 'none'})")
        for _ in range(200):
            slide = page.evaluate("() => { const s = Reveal.getCurrentSlide(); return [s.scrollWidth, s.clientWidth,"
                                  " (s.querySelector('h1, h2') || {}).textContent]; }")
            if slide[0] > slide[1] + 1:
                wide.append(f"{lesson}: {slide[2]} ({slide[0]} > {slide[1]})")
            if page.evaluate("() => Reveal.isLastSlide() && !Reveal.availableFragments().next"):
                break
            page.keyboard.press("ArrowRight")
        else:
            pytest.fail(f"{lesson}: the deck did not end after 200 key presses")
        page.close()
    context.close()
    assert not errors, errors
    assert not wide, wide
