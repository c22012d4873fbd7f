"""axe-core in headless Chromium over every page of the built course: no serious or critical
violations, with figures revealed (closed <details> hide their content from axe), in the default
theme and in furo's dark mode, and with the interactive controls the script adds."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from browser_util import axe_serious, browser_missing, build_lessons, copy_lessons

pytestmark = [pytest.mark.browser, pytest.mark.sphinx,
              pytest.mark.skipif(bool(browser_missing()), reason=browser_missing() or "")]


def _site(tmp_path_factory: pytest.TempPathFactory, theme: str | None) -> Path:
    base = tmp_path_factory.mktemp(f"a11y-{theme or 'default'}")
    return build_lessons(copy_lessons(base / "src"), base / "html", theme=theme)


def _violations(browser: Any, page_path: Path, dark: bool = False) -> list[str]:
    context = browser.new_context(color_scheme="dark" if dark else "light")
    # offline: any request that leaves the file system (MathJax's CDN) is refused
    context.route("http*://**", lambda route: route.abort())
    page = context.new_page()
    page.goto(page_path.as_uri())
    page.wait_for_load_state("load")
    if dark:
        page.evaluate("document.body.dataset.theme = 'dark'")
    page.evaluate("document.querySelectorAll('details').forEach(d => d.open = true)")
    found = axe_serious(page)
    context.close()
    return found


def test_axe_finds_no_serious_violations_on_any_page(browser: Any, tmp_path_factory: pytest.TempPathFactory) -> None:
    site = _site(tmp_path_factory, None)
    pages = sorted(site.glob("*.html"))
    assert len(pages) >= 8
    problems = {p.name: found for p in pages if (found := _violations(browser, p))}
    assert problems == {}


def test_axe_finds_no_serious_violations_in_furo_dark_mode(browser: Any, tmp_path_factory: pytest.TempPathFactory) -> None:
    pytest.importorskip("furo")
    site = _site(tmp_path_factory, "furo")
    problems = {name: found for name in ("llama-decoder.html", "positions.html", "index.html")
                if (found := _violations(browser, site / name, dark=True))}
    assert problems == {}


def test_axe_finds_no_serious_violations_on_a_real_model_graph_drawn_deep(
        browser: Any, tmp_path_factory: pytest.TempPathFactory) -> None:
    """A transformers Llama drawn four levels deep: dozens of module buttons, library-code nodes."""
    pytest.importorskip("transformers")
    from conftest import copy_root

    base = tmp_path_factory.mktemp("a11y-hf")
    src = copy_root("graph-hf-llama", base / "src")
    page = src / "index.md"
    page.write_text(page.read_text("utf-8").replace(":depth: 3", ":depth: 4"), "utf-8")
    site = build_lessons(src, base / "html", tensorviz_execution_mode="auto")
    html = (site / "index.html").read_text("utf-8")
    assert html.count('class="tv-node tv-kind-module') >= 2  # collapsed modules: buttons to check
    assert _violations(browser, site / "index.html") == []


def test_axe_finds_no_serious_violations_on_training_runs(browser: Any, tmp_path_factory: pytest.TempPathFactory) -> None:
    """``tv-train`` charts (PyTorch, Flax NNX, Equinox), their tables, claims and snapshot lists; and a run
    that diverged, whose figure says so."""
    pytest.importorskip("torch")
    pytest.importorskip("equinox")
    from conftest import copy_root

    base = tmp_path_factory.mktemp("a11y-train")
    src = copy_root("train", base / "src")
    (src / "diverged.md").write_text((Path(__file__).parent / "roots" / "test-train-bad" / "index.md").read_text(
        "utf-8").split("A million steps")[0], "utf-8")
    (src / "models" / "runs.py").write_text(
        (Path(__file__).parent / "roots" / "test-train-bad" / "models" / "runs.py").read_text("utf-8"), "utf-8")
    (src / "index.md").write_text("# Training runs\n\n```{toctree}\ntorch\njax\ndiverged\n```\n", "utf-8")
    # the course's fix for the default theme's footer, which axe would otherwise report on every page
    shutil.copytree(Path(__file__).parents[1] / "lessons" / "_static", src / "_static")
    with (src / "conf.py").open("a", encoding="utf-8") as conf:
        conf.write('html_static_path = ["_static"]\nhtml_css_files = ["alabaster-contrast.css"]\n')
    site = build_lessons(src, base / "html", tensorviz_execution_mode="auto")
    assert 'class="tv-svg-train"' in (site / "diverged.html").read_text("utf-8")
    problems = {name: found for name in ("torch.html", "jax.html", "diverged.html")
                if (found := _violations(browser, site / name))}
    assert problems == {}
