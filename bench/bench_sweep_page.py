"""Page weight of a 5-value sweep, against the same page with one plain figure.

Why: a sweep ships every point as inline SVG (so it works without JavaScript, as small
multiples), plus a summary table and each point's words. This reports how much HTML that costs:
the 5-value page and the ratio to the same figure without a sweep (ideally about 5 points' SVG
plus a little: well under 5x the whole page, since the page chrome is shared), and how much gzip
(which every web server applies) takes off, because the points' SVGs repeat their structure.

The figure is the test root ``tests/roots/test-sweep``'s softmax code (NumPy: a real worker runs
each point), 3 x 4 cells. Run: ``.venv/bin/python bench/bench_sweep_page.py`` (about 20 s).
"""

from __future__ import annotations

import gzip
import io
import re
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

PAGE = """# Sweep weight

```{{tv-heatmap}}
:source: models/softmax.py
:function: weights
{option}
:rows: [q0, q1, q2]
:columns: k{{j}}
:unit: attention weight
:prediction: What happens as the temperature rises?
:choices: [{{text: flatter, correct: true, why: smaller gaps}}, {{text: sharper, why: larger gaps}}]
```
"""


def build(tmp: Path, name: str, option: str) -> bytes:
    from sphinx.application import Sphinx

    src = tmp / name
    shutil.copytree(ROOT / "tests" / "roots" / "test-sweep", src,
                    ignore=shutil.ignore_patterns("_build", "tensorviz_artifacts"))
    (src / "failing.md").unlink()
    (src / "index.md").write_text(PAGE.format(option=option), "utf-8")
    out = tmp / f"{name}-html"
    app = Sphinx(str(src), str(src), str(out), str(tmp / f"{name}-doctrees"), "html",
                 status=io.StringIO(), warning=io.StringIO(), freshenv=True)
    app.build()
    if app.statuscode:
        raise RuntimeError(f"build failed: {app._warning.getvalue()}")  # type: ignore[attr-defined]
    return (out / "index.html").read_bytes()


def figure_bytes(html: bytes) -> int:
    text = html.decode("utf-8")
    start = text.index("<figure")
    return len(text[start:text.index("</figure>", start)].encode("utf-8"))


def main() -> int:
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        single = build(tmp, "single", ":inputs: {temperature: 1}")
        swept = build(tmp, "sweep", ":sweep: temperature=[0.25, 0.5, 1, 2, 4]")
    rows = [("one figure", single), ("5-value sweep", swept)]
    print(f"{'page':<16}{'HTML bytes':>12}{'gzip bytes':>12}{'figure bytes':>14}{'svg count':>11}")
    for label, html in rows:
        svgs = len(re.findall(rb"<svg ", html))
        print(f"{label:<16}{len(html):>12}{len(gzip.compress(html, 9)):>12}{figure_bytes(html):>14}{svgs:>11}")
    print(f"sweep / single: page {len(swept) / len(single):.2f}x, figure "
          f"{figure_bytes(swept) / figure_bytes(single):.2f}x, gzipped page "
          f"{len(gzip.compress(swept, 9)) / len(gzip.compress(single, 9)):.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
