"""Page weight and first paint of graph pages for 2-, 8- and 24-layer tiny transformers Llamas.

Why: a graph page must stay light whatever the model's size (issue 12): its HTML carries what is
drawn by default, and each module's layout loads as a small separate file only when a reader opens
it. Targets: the 24-layer page under 400 KB of HTML (inline SVG included; shared JS/CSS and the
lazily loaded layout files not counted), first contentful paint under 1 s in headless Chromium,
and weight growing sublinearly from 8 to 24 layers (ratio below 3).

Each size is the test root ``tests/roots/test-graph-hf-llama`` with ``:model-args:`` changed,
built for real (random weights, no hub download) at ``:depth: 2`` (the directive's default) and
``:depth: 3`` (every decoder layer open). Timings are this machine's; the ratios are the point.

Run: ``.venv/bin/python bench/bench_graph_pages.py`` (about 1-2 min: six builds).
"""

from __future__ import annotations

import re
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from browser_util import build_lessons, launch  # noqa: E402

LAYERS = (2, 8, 24)
DEPTHS = (2, 3)
LOADS = 3
#: first-contentful-paint in ms (the entry may arrive after the load event: wait for it)
FCP = """() => new Promise(resolve => {
  const seen = performance.getEntriesByName('first-contentful-paint')[0];
  if (seen) return resolve(seen.startTime);
  new PerformanceObserver(list => {
    const e = list.getEntriesByName('first-contentful-paint')[0];
    if (e) resolve(e.startTime);
  }).observe({type: 'paint', buffered: true});
  setTimeout(() => resolve(-1), 5000);
})"""


def build(tmp: Path, layers: int, depth: int) -> Path:
    src = tmp / f"src-{layers}-{depth}"
    shutil.copytree(ROOT / "tests" / "roots" / "test-graph-hf-llama", src)
    page = src / "index.md"
    text = page.read_text("utf-8")
    text = re.sub(r":model-args: .*", f":model-args: {{layers: {layers}, width: 32}}", text)
    text = re.sub(r":depth: \d+", f":depth: {depth}", text)
    page.write_text(text, "utf-8")
    return build_lessons(src, tmp / f"html-{layers}-{depth}", tensorviz_execution_mode="auto")


def first_paint_ms(browser, page_path: Path) -> float:
    """Median first-contentful-paint of ``LOADS`` fresh loads from file://."""
    times = []
    for _ in range(LOADS):
        context = browser.new_context()
        page = context.new_page()
        page.goto(page_path.as_uri())
        page.wait_for_load_state("load")
        fcp = page.evaluate(FCP)
        times.append(float(fcp))
        context.close()
    return statistics.median(times)


def main() -> None:
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        rows = []
        with sync_playwright() as p:
            browser = launch(p)
            for depth in DEPTHS:
                for layers in LAYERS:
                    site = build(tmp, layers, depth)
                    html = site / "index.html"
                    svg = re.search(r"<svg[^>]*class=\"tv-graph\".*?</svg>", html.read_text("utf-8"), re.S)
                    data = sum(f.stat().st_size for f in (site / "_tensorviz" / "graphs").rglob("*.js"))
                    rows.append((depth, layers, html.stat().st_size, len(svg.group(0)) if svg else 0, data,
                                 first_paint_ms(browser, html)))
            browser.close()
    print(f"{'depth':>5} {'layers':>6} {'HTML KB':>8} {'SVG KB':>7} {'lazy data KB':>12} {'first paint ms':>14}")
    for depth, layers, size, svg, data, fcp in rows:
        print(f"{depth:>5} {layers:>6} {size / 1024:>8.1f} {svg / 1024:>7.1f} {data / 1024:>12.1f} {fcp:>14.0f}")
    for depth in DEPTHS:
        size = {layers: s for d, layers, s, *_ in rows if d == depth}
        ratio = size[24] / size[8]
        print(f"depth {depth}: HTML 24 vs 8 layers = {ratio:.2f}x for 3x the layers "
              f"({'sublinear' if ratio < 3 else 'NOT sublinear'}); 24-layer page "
              f"{size[24] / 1024:.0f} KB ({'under' if size[24] < 400 * 1024 else 'OVER'} the 400 KB target)")
    slowest = max(r[5] for r in rows)
    print(f"slowest first paint: {slowest:.0f} ms ({'under' if slowest < 1000 else 'OVER'} the 1 s target)")


if __name__ == "__main__":
    main()
