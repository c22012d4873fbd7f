"""A French page's scripts speak French (issue 29): the tour, the zoom toolbar, in headless Chromium.

The page gives the scripts their words (``render/script_words.py``) before they run; without them
the buttons and the tour's status would read in English on a French page.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from browser_util import browser_missing, page_opener
from i18n_util import translated_snapshot_root

pytestmark = [pytest.mark.browser, pytest.mark.sphinx]

_why = browser_missing()
if _why:
    pytest.skip(f"browser tests need headless Chromium: {_why}", allow_module_level=True)


@pytest.fixture(scope="module")
def french_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return translated_snapshot_root(tmp_path_factory.mktemp("i18n-browser"))["base"] / "fr"


def test_the_tour_and_the_zoom_toolbar_speak_french(browser: Any, french_site: Path) -> None:
    with page_opener(browser, french_site) as open_page:
        page = open_page("lesson.html")
        tour = page.locator("section.tv-steps")
        assert tour.locator(".tv-step-prev").inner_text() == "← Précédente"
        assert tour.locator(".tv-step-next").get_attribute("aria-label") == "Étape suivante"
        assert tour.locator(".tv-step-count").inner_text() == "Étape 1 sur 2"
        tour.locator(".tv-step-next").click()
        assert tour.locator(".tv-step-count").inner_text() == "Étape 2 sur 2"
        assert page.locator("figure.tv-graph .tv-zoom-in").get_attribute("aria-label") == "Zoomer"
