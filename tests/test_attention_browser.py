"""``tv-attention`` in headless Chromium: axe-core finds no serious or critical violation on the
pages of ``tests/roots/test-attention``, with every figure and every head's larger view open
(closed ``<details>`` hide their content from axe)."""

from __future__ import annotations

from typing import Any

import pytest

from browser_util import axe_serious, browser_missing, page_opener
from conftest import copy_root, run_sphinx

pytestmark = [pytest.mark.browser, pytest.mark.sphinx,
              pytest.mark.skipif(bool(browser_missing()), reason=browser_missing() or "")]


def test_axe_finds_no_serious_violations_with_every_head_open(browser: Any,
                                                              tmp_path_factory: pytest.TempPathFactory) -> None:
    src = copy_root("attention", tmp_path_factory.mktemp("attention-a11y") / "src")
    built = run_sphinx(src, warningiserror=True)
    assert built.statuscode == 0, built.warnings
    problems = {}
    with page_opener(browser, built.outdir) as open_page:
        for name in ("course.html", "library.html", "nnx.html"):
            page = open_page(name)
            opened = page.evaluate("[...document.querySelectorAll('details')].map(d => d.open = true).length")
            assert opened >= 4, name  # the figure's reveal and its heads' larger views
            problems[name] = axe_serious(page)
    assert problems == {name: [] for name in problems}
