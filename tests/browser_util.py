"""Helpers for the headless-Chromium tests and the screenshot bench.

Builds the course in ``lessons/`` into a temporary directory from its committed artifacts
(``tensorviz_execution_mode = "cache-only"``, so no model runs), and starts Chromium through
Playwright with the system browser at /usr/bin/chromium.
"""

from __future__ import annotations

import io
import shutil
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
LESSONS = ROOT / "lessons"
CHROMIUM = Path("/usr/bin/chromium")


def browser_missing() -> str | None:
    """Why the browser tests cannot run here, or None when they can."""
    if not CHROMIUM.exists():
        return f"{CHROMIUM} is not installed"
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "playwright (Python) is not installed"
    return None


def copy_lessons(dest: Path) -> Path:
    """Copy the course sources and their artifacts (not the old build) into ``dest``."""
    shutil.copytree(LESSONS, dest, ignore=shutil.ignore_patterns("_build", "__pycache__", ".*"))
    return dest


def build_lessons(src: Path, out: Path, theme: str | None = None, **overrides: Any) -> Path:
    """Build ``src`` (a copy of lessons/) to HTML in ``out``; returns ``out``."""
    from sphinx.application import Sphinx

    confoverrides = {"tensorviz_execution_mode": "cache-only", **overrides}
    if theme:
        confoverrides["html_theme"] = theme
    app = Sphinx(str(src), str(src), str(out), str(out.parent / (out.name + ".doctrees")), "html",
                 confoverrides=confoverrides, status=io.StringIO(), warning=io.StringIO(),
                 freshenv=True)
    app.build()
    if app.statuscode:
        raise RuntimeError(f"sphinx build failed ({app.statuscode}): {app._warning.getvalue()}")  # type: ignore[attr-defined]
    return out


def launch(playwright: Any) -> Any:
    return playwright.chromium.launch(executable_path=str(CHROMIUM), args=["--no-sandbox"])


def offline_context(browser: Any, viewport: dict[str, int] | None = None, **kw: Any) -> Any:
    """A browser context that cannot reach the network: CDN scripts (MathJax) fail fast."""
    context = browser.new_context(viewport=viewport or {"width": 1280, "height": 900}, **kw)
    context.route("http*://**", lambda route: route.abort())
    return context


@contextmanager
def page_opener(browser: Any, site: Path, viewport: dict[str, int] | None = None) -> Iterator[Callable[..., Any]]:
    """``open(name, fragment="", **context options) -> Page`` for pages of the built ``site``;
    closes every context afterwards and fails on any script error the pages raised."""
    contexts: list[Any] = []
    errors: list[str] = []

    def opener(name: str, fragment: str = "", **kw: Any) -> Any:
        context = offline_context(browser, **{"viewport": viewport, **kw})
        contexts.append(context)
        page = context.new_page()
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.goto((site / name).as_uri() + fragment)
        page.wait_for_load_state("load")
        return page

    yield opener
    for context in contexts:
        context.close()
    assert not errors, f"JavaScript errors: {errors}"


SERIOUS = {"serious", "critical"}


def axe_serious(page: Any) -> list[str]:
    """axe-core's serious and critical violations on the page as it is now, one line each."""
    from axe_playwright_python.sync_playwright import Axe

    results = Axe().run(page)
    return [
        f"{v['id']} ({v['impact']}): {v['help']} at {[n['target'] for n in v['nodes']][:3]}"
        for v in results.response["violations"]
        if v["impact"] in SERIOUS
    ]
