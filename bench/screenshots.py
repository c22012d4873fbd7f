"""Screenshots of the course pages under several themes, for looking at the figures by eye.

Builds lessons/ from its committed artifacts (cache-only: nothing executes) once per theme into a
temporary directory, then saves full-page PNGs of llama-decoder and transformers-03 with every
figure revealed to bench/screenshots/ (git-ignored) and prints their paths.

Themes: alabaster (Sphinx's default), furo if it is installed (``pip install furo``) in light and
dark mode, and pydata-sphinx-theme in dark mode if installed. Also a phone-width view and a
JavaScript-off view under alabaster.

    .venv/bin/python bench/screenshots.py [--out DIR] [--pages llama-decoder transformers-03]
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))

from browser_util import browser_missing, build_lessons, copy_lessons, launch  # noqa: E402

PAGES = ["llama-decoder", "transformers-03"]

# (label, theme, color scheme, viewport width, javascript)
VIEWS = [
    ("alabaster", "alabaster", "light", 1280, True),
    ("alabaster-phone", "alabaster", "light", 390, True),
    ("alabaster-nojs", "alabaster", "light", 1280, False),
    ("furo", "furo", "light", 1280, True),
    ("furo-dark", "furo", "dark", 1280, True),
    ("furo-phone-dark", "furo", "dark", 390, True),
    ("pydata-dark", "pydata_sphinx_theme", "dark", 1280, True),
]

OPEN_ALL = """() => {
  document.querySelectorAll('details.tv-reveal, details.tv-source').forEach(d => { d.open = true; });
  const dark = %s;
  if (dark) {  // furo and pydata keep an explicit choice in data-theme
    if (document.body.dataset.theme) document.body.dataset.theme = 'dark';
    if (document.documentElement.dataset.theme) document.documentElement.dataset.theme = 'dark';
  }
}"""


def installed(theme: str) -> bool:
    return theme == "alabaster" or importlib.util.find_spec(theme) is not None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=HERE / "screenshots")
    parser.add_argument("--pages", nargs="+", default=PAGES)
    args = parser.parse_args(argv)
    why = browser_missing()
    if why:
        print(f"cannot take screenshots: {why}", file=sys.stderr)
        return 1
    from playwright.sync_api import sync_playwright

    args.out.mkdir(parents=True, exist_ok=True)
    skipped = sorted({theme for _, theme, *_ in VIEWS if not installed(theme)})
    for theme in skipped:
        print(f"skipping theme {theme}: not installed", file=sys.stderr)
    with tempfile.TemporaryDirectory(prefix="tv-shots-") as tmp, sync_playwright() as p:
        tmp_path = Path(tmp)
        src = copy_lessons(tmp_path / "src")
        built: dict[str, Path] = {}
        browser = launch(p)
        for label, theme, scheme, width, js in VIEWS:
            if theme in skipped:
                continue
            if theme not in built:
                built[theme] = build_lessons(src, tmp_path / f"html-{theme}", theme=theme)
            context = browser.new_context(viewport={"width": width, "height": 900}, color_scheme=scheme,
                                          java_script_enabled=js, device_scale_factor=1)
            page = context.new_page()
            page.route("http*://**", lambda route: route.abort())  # no network: CDN scripts fail fast
            for name in args.pages:
                page.goto((built[theme] / f"{name}.html").as_uri())
                if js:
                    page.evaluate(OPEN_ALL % ("true" if scheme == "dark" else "false"))
                else:
                    # without scripts, reveal through the user-agent: click every summary
                    for summary in page.locator("details.tv-reveal > summary, details.tv-source > summary").all():
                        summary.click()
                page.wait_for_timeout(250)
                path = args.out / f"{name}--{label}.png"
                page.screenshot(path=str(path), full_page=True)
                print(path)
            context.close()
        browser.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
