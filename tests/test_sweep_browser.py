"""Sweeps and committed predictions in a real headless Chromium: the slider and the select swap
the visible point (mouse and keyboard), the choices commit and reveal (keyboard only), the pick
survives a reload, JavaScript off shows small multiples and the plain list, and axe finds no
serious violations. The test root ``tests/roots/test-sweep`` is executed once (NumPy code)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from browser_util import browser_missing, page_opener
from conftest import copy_root, run_sphinx

pytestmark = [pytest.mark.browser, pytest.mark.sphinx]

_why = browser_missing()
if _why:
    pytest.skip(f"browser tests need headless Chromium: {_why}", allow_module_level=True)

from playwright.sync_api import Page  # noqa: E402

SWEEP = "#tv-index-0"  # temperature=[0.25, 1, 4], with choices
GRID = "#tv-index-2"  # scale=[1, 2] x kind=[tanh, linear]


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    srcdir = copy_root("sweep", tmp_path_factory.mktemp("sweep-browser") / "src")
    build = run_sphinx(srcdir, "html")
    assert build.statuscode == 0
    return build.outdir


@pytest.fixture()
def open_page(browser: Any, site: Path) -> Iterator[Any]:
    def index_first(name: str = "index.html", **kw: Any) -> Page:
        return opener(name, **kw)

    with page_opener(browser, site, viewport={"width": 1100, "height": 900}) as opener:
        yield index_first


def _visible_points(page: Page, figure: str) -> list[str]:
    return page.eval_on_selector_all(
        f"{figure} .tv-sweep-point",
        "els => els.filter(e => e.offsetParent !== null).map(e => e.querySelector('svg title').textContent)")


def _reveal(page: Page, figure: str) -> None:
    page.eval_on_selector(f"{figure} details.tv-reveal", "d => d.open = true")


def test_slider_swaps_the_point_with_mouse_and_keyboard(open_page: Any) -> None:
    page = open_page()
    _reveal(page, SWEEP)
    slider = page.locator(f"{SWEEP} input[type=range]")
    assert slider.is_visible()
    assert _visible_points(page, SWEEP) == ["Attention weights across temperature: temperature = 0.25"]
    slider.fill("2")
    assert _visible_points(page, SWEEP) == ["Attention weights across temperature: temperature = 4"]
    assert page.locator(f"{SWEEP} output.tv-sweep-value").text_content() == "4"
    assert slider.get_attribute("aria-valuetext") == "temperature = 4"
    slider.focus()
    page.keyboard.press("ArrowLeft")
    assert _visible_points(page, SWEEP) == ["Attention weights across temperature: temperature = 1"]
    assert page.locator(f"{SWEEP} output.tv-sweep-value").text_content() == "1"
    assert page.evaluate("document.activeElement.type") == "range"


def test_two_parameters_get_a_slider_and_a_select(open_page: Any) -> None:
    page = open_page()
    assert _visible_points(page, GRID)[0].endswith("scale = 1, kind = tanh")
    page.select_option(f"{GRID} select", label="linear")
    assert _visible_points(page, GRID)[0].endswith("scale = 1, kind = linear")
    page.locator(f"{GRID} input[type=range]").focus()
    page.keyboard.press("ArrowRight")
    assert _visible_points(page, GRID) == [_visible_points(page, GRID)[0]]
    assert _visible_points(page, GRID)[0].endswith("scale = 2, kind = linear")


def test_choices_commit_with_the_keyboard_then_reveal_and_remember(open_page: Any) -> None:
    page = open_page()
    summary = page.locator(f"{SWEEP} details.tv-reveal > summary")
    assert not summary.is_visible()  # commit first
    assert not page.locator(f"{SWEEP} .tv-choice-list").is_visible()
    button = page.locator(f"{SWEEP} .tv-commit")
    assert button.is_disabled()
    page.locator(f"{SWEEP} input[type=radio]").first.focus()
    page.keyboard.press("ArrowDown")  # radio groups move and select with the arrow keys
    assert page.locator(f"{SWEEP}-choice-1").is_checked()
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.classList.contains('tv-commit')")
    page.keyboard.press("Enter")
    result = page.locator(f"{SWEEP} .tv-choice-result")
    assert result.get_attribute("aria-live") == "polite"
    assert "You predicted B. It gets sharper" in result.text_content()
    assert "supports A. It gets flatter" in result.text_content()
    assert page.eval_on_selector(f"{SWEEP} details.tv-reveal", "d => d.open")
    assert page.evaluate("localStorage.getItem('tensorviz-choice:tv-index-0')") == "1"
    page.reload()
    page.wait_for_load_state("load")
    assert page.locator(f"{SWEEP}-choice-1").is_checked()
    assert "You predicted B." in page.locator(f"{SWEEP} .tv-choice-result").text_content()
    assert page.eval_on_selector(f"{SWEEP} details.tv-reveal", "d => d.open")


def test_a_matching_pick_says_so(open_page: Any) -> None:
    page = open_page()
    page.locator("#tv-index-1-choice-0").check()
    page.locator("#tv-index-1 .tv-commit").click()
    assert "That matches the recorded result" in page.locator("#tv-index-1 .tv-choice-result").text_content()


def test_without_javascript_small_multiples_and_the_plain_list(open_page: Any) -> None:
    page = open_page(java_script_enabled=False)
    page.locator(f"{SWEEP} details.tv-reveal > summary").click()  # the native reveal, no script
    assert len(_visible_points(page, SWEEP)) == 3
    assert not page.locator(f"{SWEEP} input[type=range]").is_visible()
    assert page.locator(f"{SWEEP} .tv-choice-list").is_visible()
    assert not page.locator(f"{SWEEP} form.tv-choices").is_visible()
    boxes = [page.locator(f"{SWEEP} .tv-sweep-point").nth(k).bounding_box() for k in range(3)]
    assert boxes[0]["y"] == boxes[1]["y"] and boxes[1]["x"] > boxes[0]["x"]  # side by side


def test_axe_finds_no_serious_violations(open_page: Any) -> None:
    from axe_playwright_python.sync_playwright import Axe

    page = open_page()
    page.locator("#tv-index-1-choice-0").check()
    page.locator("#tv-index-1 .tv-commit").click()
    page.evaluate("document.querySelectorAll('details').forEach(d => d.open = true)")
    results = Axe().run(page)
    serious = [f"{v['id']}: {v['help']} at {[n['target'] for n in v['nodes']][:3]}"
               for v in results.response["violations"] if v["impact"] in ("serious", "critical")]
    assert serious == []


def test_swept_graph_and_its_activations_follow_the_slider(open_page: Any) -> None:
    page = open_page("graph.html")
    def shown() -> list[str]:
        return page.eval_on_selector_all(
            ".tv-sweep-point", "els => els.filter(e => e.offsetParent !== null).map(e => e.querySelector('[id]').id)")
    page.locator("#tv-graph-0-choice-0").check()
    page.keyboard.press("Tab")
    page.keyboard.press("Enter")  # commit with the keyboard: the reveal opens
    assert page.eval_on_selector("#tv-graph-0 details.tv-reveal", "d => d.open")
    assert shown() == ["tv-graph-0-p0", "tv-graph-1-p0"]
    page.locator("#tv-graph-0-sweep-0").focus()
    page.keyboard.press("ArrowRight")
    assert shown() == ["tv-graph-0-p1", "tv-graph-1-p1"]
    assert "8 features" in page.locator("#tv-graph-1-p1").inner_text()
