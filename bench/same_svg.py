"""Compare the SVG of two builds (or two ``bench/dump_figures.py`` dumps) canonically.

Run: ``python bench/same_svg.py REF_DIR NEW_DIR``. Prints every figure or file that differs and
exits 1 if any does, 0 if all are the same.

Why canonically: a change to how SVG is written (attribute order, ``<rect/>`` or ``<rect />``,
``&#39;`` or ``'``, whitespace between elements) is no change to the picture. Both sides are
parsed with an XML parser and compared as trees: tag, attributes as a dict, text and tail with
surrounding whitespace stripped, children in order.

What is compared:

* ``*.html``: every inline ``<svg>...</svg>``, in page order, and the rest of the page as text;
* ``*.svg`` files (downloads, thumbnails, dumps);
* graph frame files (``tensorvizData(key, name, payload);``): the payload as JSON, with every
  string that is markup compared as a tree;
* ``*.tex``: as text.

What is normalised, because it names the renderer and so changes whenever the drawing code does:
the 12-digit renderer part of a graph's data key (``data-key="<recording16>-<renderer12>"``, the
``_tensorviz/graphs/<key>/`` folder and the key inside its files), and the names of the figure
PDFs in ``.tex`` files (``tensorviz-<hash>-<hash>.pdf``, numbered by first appearance). And
because a figure's SVG file is itself compared as a tree, the byte count and sha256 that a page's
download list prints for it (``preview.svg · 18,385 bytes · sha256 …``) are left out.
"""

from __future__ import annotations

import json
import re
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

GRAPH_KEY = re.compile(r"((?:_tensorviz/graphs/|data-key=\"|tensorvizData\(\")[0-9a-f]{16})-[0-9a-f]{12}")
SVG_DOWNLOAD = re.compile(r'(\.svg</a> · )[\d,]+ bytes · sha256 (<code[^>]*><span class="pre">)[0-9a-f]{64}')
PDF_NAME = re.compile(r"tensorviz-[0-9a-f]+-[0-9a-f]+\.pdf")
SVG = re.compile(r"<svg\b.*?</svg>", re.DOTALL)
FRAME = re.compile(r"^tensorvizData\((.*)\);\s*$", re.DOTALL)


def normalise_keys(text: str) -> str:
    """Graph data keys without their renderer part."""
    return GRAPH_KEY.sub(r"\1-RENDERER", text)


def normalise_page(text: str) -> str:
    """A page without its figures, renderer keys, or the size and sha256 of SVG downloads."""
    return SVG_DOWNLOAD.sub(r"\1N bytes · sha256 \2SHA", normalise_keys(SVG.sub("<svg/>", text)))


def normalise_pdf_names(text: str) -> str:
    names: dict[str, str] = {}
    return PDF_NAME.sub(lambda m: names.setdefault(m.group(0), f"tensorviz-figure{len(names)}.pdf"), text)


def tree(markup: str) -> Any:
    """A comparable form of one element and everything under it."""
    def walk(el: ET.Element) -> Any:
        return (el.tag, sorted(el.attrib.items()), (el.text or "").strip(), (el.tail or "").strip(),
                [walk(child) for child in el])
    return walk(ET.fromstring(markup))


def first_difference(a: Any, b: Any, where: str = "") -> str:
    """Where two trees (from :func:`tree`) first differ, for the report."""
    (tag_a, attrs_a, text_a, tail_a, kids_a), (tag_b, attrs_b, text_b, tail_b, kids_b) = a, b
    here = f"{where}/{tag_a.rsplit('}', 1)[-1]}"
    if tag_a != tag_b:
        return f"{here}: tag {tag_b!r}"
    if attrs_a != attrs_b:
        da, db = dict(attrs_a), dict(attrs_b)
        keys = sorted(k for k in set(da) | set(db) if da.get(k) != db.get(k))
        return f"{here}: " + "; ".join(f"@{k} {da.get(k)!r} -> {db.get(k)!r}" for k in keys[:4])
    if (text_a, tail_a) != (text_b, tail_b):
        return f"{here}: text {text_a!r}/{tail_a!r} -> {text_b!r}/{tail_b!r}"
    if len(kids_a) != len(kids_b):
        return f"{here}: {len(kids_a)} children -> {len(kids_b)}"
    for k, (ka, kb) in enumerate(zip(kids_a, kids_b)):
        if ka != kb:
            return first_difference(ka, kb, f"{here}[{k}]")
    return here


def compare_markup(a: str, b: str) -> str | None:
    try:
        ta, tb = tree(a), tree(b)
    except ET.ParseError as error:
        return f"does not parse: {error}"
    return None if ta == tb else first_difference(ta, tb)


def compare_payload(a: Any, b: Any, where: str = "") -> str | None:
    """JSON values, markup strings compared as trees."""
    if isinstance(a, str) and isinstance(b, str) and a.startswith("<") and b.startswith("<"):
        found = compare_markup(a, b)
        return None if found is None else f"{where}: {found}"
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        return next((d for d in (compare_payload(x, y, f"{where}[{k}]") for k, (x, y) in enumerate(zip(a, b)))
                     if d), None)
    if isinstance(a, dict) and isinstance(b, dict) and a.keys() == b.keys():
        return next((d for d in (compare_payload(a[k], b[k], f"{where}.{k}") for k in sorted(a)) if d), None)
    return None if a == b else f"{where}: {str(a)[:80]!r} -> {str(b)[:80]!r}"


def compare_file(path: Path, ref: str, new: str) -> list[str]:
    """The differences between two versions of one file, as report lines."""
    if path.suffix == ".html":
        svgs_a, svgs_b = SVG.findall(ref), SVG.findall(new)
        if len(svgs_a) != len(svgs_b):
            return [f"{path}: {len(svgs_a)} inline SVGs -> {len(svgs_b)}"]
        found = [f"{path}: figure {k + 1}: {d}" for k, (a, b) in enumerate(zip(svgs_a, svgs_b))
                 if (d := compare_markup(a, b))]
        if normalise_page(ref) != normalise_page(new):
            found.append(f"{path}: the page outside its figures differs")
        return found
    if path.suffix == ".svg":
        found = compare_markup(ref, new)
        return [f"{path}: {found}"] if found else []
    if path.suffix == ".tex":
        return [] if normalise_pdf_names(ref) == normalise_pdf_names(new) else [f"{path}: differs"]
    frame_a, frame_b = FRAME.match(ref), FRAME.match(new)
    if frame_a and frame_b:
        a, b = (json.loads(f"[{normalise_keys('tensorvizData(' + m.group(1))[14:]}]") for m in (frame_a, frame_b))
        found = compare_payload(a, b)
        return [f"{path}: {found}"] if found else []
    return []


def compared_files(root: Path) -> dict[str, Path]:
    """The files this script reads, by their path with renderer keys normalised."""
    out: dict[str, Path] = {}
    for path in sorted(root.rglob("*")):
        if not path.is_file() or path.suffix not in (".html", ".svg", ".tex", ".js"):
            continue
        if path.suffix == ".js" and not path.read_text("utf-8", errors="replace").startswith("tensorvizData("):
            continue
        key = normalise_keys(path.relative_to(root).as_posix())
        if key in out:
            raise SystemExit(f"{root}: {out[key]} and {path} have the same normalised name {key}")
        out[key] = path
    return out


def main(ref_dir: Path, new_dir: Path) -> int:
    ref, new = compared_files(ref_dir), compared_files(new_dir)
    report = [f"only in {ref_dir}: {k}" for k in sorted(set(ref) - set(new))]
    report += [f"only in {new_dir}: {k}" for k in sorted(set(new) - set(ref))]
    figures = 0
    for key in sorted(set(ref) & set(new)):
        a, b = ref[key].read_text("utf-8"), new[key].read_text("utf-8")
        figures += len(SVG.findall(a)) if ref[key].suffix == ".html" else 1
        report += compare_file(Path(key), a, b)
    for line in report:
        print(line)
    print(f"{len(set(ref) & set(new))} files, {figures} figures or files compared: "
          + (f"{len(report)} differences" if report else "no differences"))
    return 1 if report else 0


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    sys.exit(main(Path(sys.argv[1]), Path(sys.argv[2])))
