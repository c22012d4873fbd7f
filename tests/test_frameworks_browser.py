"""A figure with ``:frameworks:`` in a real headless Chromium: choosing JAX on one tab set switches every
tab set of the page (the other figure's code and the page's own tab set) and the next page; without
JavaScript every framework's code shows, in order, each under its name; axe finds no serious violations.
The test root ``tests/roots/test-frameworks`` (with sphinx-design) is executed once (PyTorch and JAX)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from browser_util import axe_serious, browser_missing, page_opener
from conftest import copy_root, run_sphinx

pytestmark = [pytest.mark.browser, pytest.mark.sphinx]

_why = browser_missing()
if _why:
    pytest.skip(f"browser tests need headless Chromium: {_why}", allow_module_level=True)

from playwright.sync_api import Page  # noqa: E402

#: what the visible tab contents of every tab set on a page say they are
VISIBLE = """() => [...document.querySelectorAll('.sd-tab-set')].map(set =>
    [...set.querySelectorAll(':scope > .sd-tab-content')].filter(c => c.offsetParent !== null)
        .map(c => c.previousElementSibling.textContent.trim()))"""


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    src = copy_root("frameworks", tmp_path_factory.mktemp("frameworks-browser") / "src")
    (src / "two.md").write_text(
        "# Two figures\n\n```{tv-graph}\n:frameworks: torch, jax\n:torch: models/conv_torch.py:make\n"
        ":jax: models/conv_nnx.py:make\n:inputs: [{shape: [2, 3, 6, 6], fill: randn}]\n:seed: 1\n```\n\n"
        "```{tv-graph}\n:frameworks: torch, jax\n:torch: models/mlp_torch.py:make\n:jax: models/mlp_nnx.py:make\n"
        ":inputs: [{shape: [3, 8], fill: randn}]\n:show: both\n```\n", "utf-8")
    (src / "index.md").write_text((src / "index.md").read_text("utf-8").replace("attention\n", "attention\ntwo\n"))
    build = run_sphinx(src, "html", warningiserror=True)
    assert build.statuscode == 0, build.warnings
    return build.outdir


@pytest.fixture()
def open_page(browser: Any, site: Path) -> Iterator[Any]:
    with page_opener(browser, site, viewport={"width": 1100, "height": 900}) as opener:
        yield opener


def test_choosing_jax_switches_every_tab_set_and_the_next_page(open_page: Any) -> None:
    page: Page = open_page("mlp.html")
    assert page.evaluate(VISIBLE) == [["PyTorch"], ["PyTorch"]]  # the figure's code, the page's own set
    page.locator(".tv-frameworks-tabs label", has_text="JAX").first.click()
    assert page.evaluate(VISIBLE) == [["JAX"], ["JAX"]]
    assert "jax.nn.gelu" in page.locator(".tv-frameworks-tabs .sd-tab-content:visible").inner_text()
    page.goto(page.url.replace("mlp.html", "two.html"))
    page.wait_for_load_state("load")
    # the choice persists: both figures' sets (one code listing, one code and figure each) show JAX
    assert page.evaluate(VISIBLE) == [["JAX"], ["JAX"]]
    both = page.locator(".tv-frameworks-tabs").nth(1)
    assert both.locator(".sd-tab-content:visible figure.tv-figure").count() == 1
    assert "PyTorch and JAX agree on output" in both.locator(".sd-tab-content:visible").inner_text()
    assert axe_serious(page) == []


def test_without_javascript_every_framework_shows_in_order(open_page: Any) -> None:
    page: Page = open_page("two.html", java_script_enabled=False)
    assert page.evaluate(VISIBLE) == [["PyTorch", "JAX"], ["PyTorch", "JAX"]]
    labels = page.locator(".tv-frameworks-tabs").first.locator("label")
    code = page.locator(".tv-frameworks-tabs").first.locator(".sd-tab-content")
    # each name right above its code: PyTorch's label, its code, then JAX's label, its code
    tops = [labels.nth(0).bounding_box()["y"], code.nth(0).bounding_box()["y"],
            labels.nth(1).bounding_box()["y"], code.nth(1).bounding_box()["y"]]
    assert tops == sorted(tops), tops
    assert page.locator("figure.tv-figure").count() == 3  # one for the first figure, both for the second


def test_the_view_without_javascript_has_no_serious_axe_violation(open_page: Any) -> None:
    """axe needs a script to run: the view the stylesheet gives while tensorviz.js has not marked the sets."""
    page: Page = open_page("two.html")
    page.evaluate("document.querySelectorAll('.tv-frameworks-tabs').forEach(s => s.classList.remove('tv-scripted'))")
    assert page.evaluate(VISIBLE) == [["PyTorch", "JAX"], ["PyTorch", "JAX"]]
    assert axe_serious(page) == []
