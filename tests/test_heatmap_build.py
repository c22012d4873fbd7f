"""Real builds of ``tv-heatmap`` test roots: HTML, artifacts, rebuild behaviour, other builders.

Every expected value is derived here, independently of the extension: heatmap values
are recomputed with NumPy from the same formula as the lesson code, file hashes are
sha256 of the files, line numbers are read from the pages.
"""

from __future__ import annotations

import hashlib
import json
import platform
import re
import shutil
import xml.etree.ElementTree as ET
from collections import Counter
from html.parser import HTMLParser
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from conftest import (
    HASH_NAME,
    Build,
    artifact_files,
    copy_root,
    directive_lines,
    edit,
    load_artifacts,
    run_sphinx,
    snapshot,
    store_dir,
    without_generated_at,
    without_run_facts,
    write,
)
from sphinx_tensorviz.execute.tolerance import default_tolerance
from sphinx_tensorviz.store.artifacts import schema_errors

pytestmark = pytest.mark.sphinx

SVG_NS = "{http://www.w3.org/2000/svg}"
MINUS = "\u2212"

# -- what the lesson code in tests/roots/test-heatmap computes, recomputed with NumPy -----


def _softmax(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


_X = np.arange(6.0).reshape(3, 2) - 2
EXPECTED: dict[str, dict[str, Any]] = {
    "Inline NumPy scores": {
        "doc": "numpy",
        "framework": "numpy",
        "values": np.tanh(np.arange(12.0).reshape(3, 4) / 5.0) - 0.5,
        "rows": ["alpha", "beta", "gamma"],
        "columns": ["c0", "c1", "c2", "c3"],
        "unit": "tanh score",
        "diverging": True,
        "stdout": "inline shape (3, 4)\n",
        "alt": "Three rows of tanh scores that rise from left to right.",
        "prediction": "Which corner of the grid holds the largest score?",
        "rtol": 1e-12,
    },
    "Scaled random scores": {
        "doc": "numpy",
        "framework": "numpy",
        # scores(scale=2.0, seed=7) / temperature(); temperature = BASE * 2 = 2.5
        "values": np.random.default_rng(7).standard_normal((3, 5)) * 2.0 / 2.5,
        "unit": "",
        "diverging": False,
        "stdout": "scores seed 7\n",
        "prediction": "Are the scores centred on zero?",
        "rtol": 1e-12,
    },
    "Softmax attention in JAX": {
        "doc": "jax",
        "framework": "jax",
        "values": _softmax((np.arange(6.0).reshape(2, 3) / 4) @ (np.arange(9.0).reshape(3, 3) / 4).T),
        "rows": ["query 0", "query 1"],
        "columns": ["key 0", "key 1", "key 2"],
        "unit": "attention weight",
        "diverging": False,
        "stdout": "jax key shape (2,)\n",
        "alt": "Two queries attending over three keys; later keys get more weight.",
        "prediction": "Which key gets the most weight?",
        "rtol": default_tolerance("float32", 1.0)[0],  # float32 on the JAX side: last bits vary by CPU
        "dtype": "float32",
    },
    "Gram matrix in PyTorch": {
        "doc": "torch",
        "framework": "torch",
        "values": _X @ _X.T,
        "unit": "",
        "diverging": False,
        "stdout": "torch seed 0\n",
        "alt": "A symmetric three by three Gram matrix.",
        "prediction": "Is the matrix symmetric?",
        "rtol": 1e-7,  # small integers: exact in float32 on every CPU
        "dtype": "float32",
    },
}
PAGES = ("numpy", "jax", "torch")


# -- small HTML helpers -------------------------------------------------------------------


def figures(html: str) -> list[tuple[str, str]]:
    """(id, inner HTML) of every tensorviz ``<figure>`` on a page."""
    return re.findall(r'<figure id="([^"]+)" class="[^"]*\btv-figure\b[^"]*">(.*?)</figure>', html, re.S)


def figure_titled(html: str, title: str) -> tuple[str, str]:
    found = [(fid, body) for fid, body in figures(html) if f"<strong>{title}</strong>" in body]
    assert len(found) == 1, f"expected one figure titled {title!r}"
    return found[0]


def svg_of(body: str) -> str:
    found = re.findall(r"<svg\b.*?</svg>", body, re.S)
    assert len(found) == 1, "expected exactly one inline <svg> in the figure"
    return found[0]


class _TableParser(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.rows: list[list[str]] = []
        self._cell: list[str] | None = None
        self._depth = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "table":
            self._depth += 1
        elif tag == "tr" and self._depth:
            self.rows.append([])
        elif tag in ("td", "th") and self._depth:
            self._cell = []

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self._cell is not None:
            self.rows[-1].append("".join(self._cell).strip())
            self._cell = None
        elif tag == "table":
            self._depth -= 1

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)


def table_rows(body: str) -> list[list[str]]:
    tables = re.findall(r"<table\b.*?</table>", body, re.S)
    assert len(tables) == 1, "expected one data table in the figure"
    parser = _TableParser()
    parser.feed(tables[0])
    return parser.rows


def number(text: str) -> float:
    return float(text.replace(MINUS, "-"))


def artifact_for(srcdir: Path, body: str) -> tuple[str, dict[str, Any]]:
    """The artifact named by the figure's provenance footer (its short content hash)."""
    shorts = re.findall(r"content hash ([0-9a-f]{12})\b", body)
    assert len(shorts) == 1, "the provenance footer should name one content hash"
    matches = [h for h in artifact_files(srcdir) if h.startswith(shorts[0])]
    assert len(matches) == 1, f"no single artifact in the store for content hash {shorts[0]}"
    return matches[0], json.loads((store_dir(srcdir) / f"{matches[0]}.json").read_text("utf-8"))


def sha256_file(path: Path) -> str:
    return hashlib.sha256(path.read_text("utf-8").encode("utf-8")).hexdigest()


# -- the executed heatmap root, built once for this module --------------------------------


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Build]:
    src = copy_root("heatmap", tmp_path_factory.mktemp("heatmap") / "src")
    return src, run_sphinx(src)


def test_first_build_executes_every_figure_without_warnings(site: tuple[Path, Build]) -> None:
    src, first = site
    assert first.statuscode == 0
    assert first.summary == (4, 0, 0)
    assert first.warnings.strip() == ""
    assert len(artifact_files(src)) == 4


@pytest.mark.parametrize("title", list(EXPECTED))
def test_figure_html_structure(site: tuple[Path, Build], title: str) -> None:
    src, first = site
    expected = EXPECTED[title]
    html = first.html(expected["doc"])
    fid, body = figure_titled(html, title)

    # prediction prompt first, then a native <details> with a <summary>
    prediction = body.find(expected["prediction"])
    details = body.find("<details")
    assert prediction != -1 and details != -1
    assert prediction < details, "the prediction prompt must come before the revealed figure"
    assert re.search(r"<details\b[^>]*>\s*<summary>[^<]+</summary>", body)
    assert body.find("<svg") > details and body.find("</details>") > body.find("</svg>")

    # accessible inline SVG: role=img, <title>/<desc> with ids referenced by aria-labelledby
    svg = ET.fromstring(svg_of(body))
    assert svg.get("role") == "img"
    labelled_by = svg.get("aria-labelledby", "").split()
    title_el, desc_el = svg.find(f"{SVG_NS}title"), svg.find(f"{SVG_NS}desc")
    assert title_el is not None and desc_el is not None
    assert title_el.get("id") and desc_el.get("id")
    assert labelled_by == [title_el.get("id"), desc_el.get("id")]
    assert all(ref.startswith(fid) for ref in labelled_by)
    assert title_el.text == title
    if "alt" in expected:
        assert desc_el.text == expected["alt"]
    else:  # generated alt text still exists and mentions the shape
        assert desc_el.text and "3 rows" in desc_el.text and "5 columns" in desc_el.text
    for ref in labelled_by:  # each referenced id exists exactly once on the whole page
        assert html.count(f'id="{ref}"') == 1


@pytest.mark.parametrize("title", list(EXPECTED))
def test_table_shows_the_values_numpy_computes(site: tuple[Path, Build], title: str) -> None:
    src, first = site
    expected = EXPECTED[title]
    _, body = figure_titled(first.html(expected["doc"]), title)
    rows = table_rows(body)
    values = expected["values"]
    header, data = rows[0], rows[1:]
    assert len(data) == values.shape[0]
    assert len(header) == values.shape[1] + 1
    if "columns" in expected:
        assert header[1:] == expected["columns"]
    if "rows" in expected:
        assert [r[0] for r in data] == expected["rows"]
    shown = np.array([[number(cell) for cell in row[1:]] for row in data])
    # the table shows 4 significant digits
    np.testing.assert_allclose(shown, values, rtol=1e-3, atol=1e-12)


def test_two_figures_on_one_page_have_unique_ids(site: tuple[Path, Build]) -> None:
    _, first = site
    html = first.html("numpy")
    found = figures(html)
    assert len(found) == 2
    assert found[0][0] != found[1][0]
    ids = Counter(re.findall(r'\sid="([^"]+)"', html))
    duplicates = {i: n for i, n in ids.items() if n > 1}
    assert not duplicates, f"duplicate ids on the page: {duplicates}"
    svg_ids = [set(re.findall(r'\sid="([^"]+)"', svg_of(body))) for _, body in found]
    assert svg_ids[0] and svg_ids[1] and not (svg_ids[0] & svg_ids[1])


@pytest.mark.parametrize("title", list(EXPECTED))
def test_provenance_footer_names_a_valid_complete_artifact(site: tuple[Path, Build], title: str) -> None:
    src, first = site
    expected = EXPECTED[title]
    _, body = figure_titled(first.html(expected["doc"]), title)
    content_hash, artifact = artifact_for(src, body)

    assert schema_errors(artifact) == []
    for key in ("schemaVersion", "lessonId", "contentHash", "rendererHash", "kind", "generatedAt",
                "provenance", "environment", "stdout", "data"):
        assert key in artifact, key
    assert artifact["schemaVersion"] == 1
    assert artifact["contentHash"] == content_hash
    assert re.fullmatch(r"[0-9a-f]{64}", artifact["rendererHash"])
    assert artifact["lessonId"] == expected["doc"]
    assert artifact["kind"] == "executed"
    assert artifact["provenance"] == "recorded_cpu_computation"
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d.*", artifact["generatedAt"])
    footer = re.search(r'<p class="tv-provenance[^"]*">(.*?)</p>', body, re.S)
    assert footer and artifact["generatedAt"][:10] in footer.group(1)

    env = artifact["environment"]
    assert env["backend"] == "cpu"
    assert isinstance(env["deviceCount"], int) and env["deviceCount"] >= 1
    assert env["python"] == platform.python_version()
    assert env["framework"] == expected["framework"]
    assert env["numpy"] == np.__version__
    assert env["matplotlib"] == metadata.version("matplotlib")
    if expected["framework"] != "numpy":
        assert env[expected["framework"]] == metadata.version(expected["framework"])

    assert artifact["stdout"] == expected["stdout"]

    data = artifact["data"]
    assert data["kind"] == "heatmap"
    assert data["unit"] == expected["unit"]
    assert data["diverging"] is expected["diverging"]
    values = np.array(data["values"])
    assert values.shape == expected["values"].shape
    assert len(data["rows"]) == values.shape[0] and len(data["columns"]) == values.shape[1]
    if "rows" in expected:
        assert data["rows"] == expected["rows"] and data["columns"] == expected["columns"]
    np.testing.assert_allclose(values, expected["values"], rtol=expected["rtol"], atol=1e-12)
    assert data["dtype"] == expected.get("dtype", "float64")


def test_source_artifact_records_the_request(site: tuple[Path, Build]) -> None:
    src, first = site
    _, body = figure_titled(first.html("numpy"), "Scaled random scores")
    _, artifact = artifact_for(src, body)
    request = artifact["request"]
    assert request["entry"] == "models/scores.py"
    assert request["function"] == "scores"
    assert request["seed"] == 7
    assert request["inputs"] == {"scale": 2.0}
    assert request["backend"] == "numpy"
    for rel in ("models/scores.py", "helpers/scaling.py", "helpers/consts.py"):  # transitive local imports
        assert request["files"].get(rel) == sha256_file(src / rel), rel


def test_every_store_file_is_valid(site: tuple[Path, Build]) -> None:
    src, _ = site
    root = store_dir(src)
    assert not [p for p in root.rglob("*") if p.name.endswith(".tmp")]
    for content_hash, artifact in load_artifacts(src).items():
        assert schema_errors(artifact) == []
        assert artifact["contentHash"] == content_hash
    assert (root / "failures" / ".gitignore").is_file()
    assert not list((root / "failures").glob("*.json"))


def test_second_build_executes_and_rewrites_nothing(site: tuple[Path, Build]) -> None:
    src, _ = site
    before = snapshot(src)
    pages = {doc: (src / "_build" / "html" / f"{doc}.html").stat().st_mtime_ns for doc in PAGES}
    again = run_sphinx(src)
    assert again.summary == (0, 4, 0)
    assert again.warnings.strip() == ""
    assert snapshot(src) == before  # same bytes, same mtimes
    assert {doc: (src / "_build" / "html" / f"{doc}.html").stat().st_mtime_ns for doc in PAGES} == pages


# -- same inputs, same bytes; -j 2 and -j 1 agree -----------------------------------------


@pytest.fixture(scope="module")
def parallel_site(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Build]:
    """A second, independent copy of the root built from scratch with ``-j 2``."""
    src = copy_root("heatmap", tmp_path_factory.mktemp("heatmap-j2") / "src")
    return src, run_sphinx(src, parallel=2)


def test_parallel_build_executes_every_figure(parallel_site: tuple[Path, Build]) -> None:
    _, built = parallel_site
    assert built.statuscode == 0
    assert built.warnings.strip() == ""
    assert built.summary == (4, 0, 0)
    for title, expected in EXPECTED.items():
        figure_titled(built.html(expected["doc"]), title)


def test_same_inputs_give_identical_artifacts_and_svg(site: tuple[Path, Build],
                                                      parallel_site: tuple[Path, Build]) -> None:
    (src_a, build_a), (src_b, build_b) = site, parallel_site
    a, b = artifact_files(src_a), artifact_files(src_b)
    assert sorted(a) == sorted(b), "content hashes must not depend on where the project lives"
    for content_hash in a:
        assert without_generated_at(a[content_hash]) == without_generated_at(b[content_hash])
    for doc in PAGES:
        svgs_a = [svg_of(body) for _, body in figures(build_a.html(doc))]
        svgs_b = [svg_of(body) for _, body in figures(build_b.html(doc))]
        assert svgs_a and svgs_a == svgs_b


def test_parallel_and_serial_builds_give_the_same_html(tmp_path: Path, parallel_site: tuple[Path, Build]) -> None:
    par_src, par = parallel_site
    ser_src = copy_root("heatmap", tmp_path / "serial")
    shutil.copytree(store_dir(par_src), store_dir(ser_src))  # same artifacts, so same footers
    ser = run_sphinx(ser_src, parallel=1)
    assert ser.summary == (0, 4, 0)
    for doc in ("index", *PAGES):
        assert ser.html(doc) == par.html(doc), doc


# -- other builders -----------------------------------------------------------------------


@pytest.fixture(scope="module")
def text_build(site: tuple[Path, Build]) -> Build:
    src, _ = site
    return run_sphinx(src, "text", builddir=src / "_build_text")


def test_text_builder(text_build: Build) -> None:
    assert text_build.warnings.strip() == ""
    assert text_build.summary == (0, 4, 0)
    for title, expected in EXPECTED.items():
        flat = " ".join((text_build.outdir / f"{expected['doc']}.txt").read_text("utf-8").split())
        assert f"Figure: {title}." in flat
        assert expected["prediction"] in flat
        if "alt" in expected:
            assert expected["alt"] in flat
        assert "content hash " in flat


def test_text_builder_table_values_are_readable(text_build: Build) -> None:
    text = (text_build.outdir / "numpy.txt").read_text("utf-8")
    expected = EXPECTED["Inline NumPy scores"]
    for label, row in zip(expected["rows"], expected["values"]):
        lines = [line for line in text.splitlines() if re.match(rf"^\|\s*{label}\s*\|", line)]
        assert len(lines) == 1, f"no single table row for {label}"
        cells = [c.strip() for c in lines[0].strip().strip("|").split("|")][1:]
        np.testing.assert_allclose([number(c) for c in cells], row, rtol=1e-3, atol=1e-12)


def test_latex_builder(site: tuple[Path, Build]) -> None:
    src, _ = site
    built = run_sphinx(src, "latex", builddir=src / "_build_latex")
    assert built.warnings.strip() == ""
    assert built.summary == (0, 4, 0)
    tex_files = list(built.outdir.glob("*.tex"))
    assert len(tex_files) == 1
    tex = tex_files[0].read_text("utf-8")
    graphics = re.findall(r"\\includegraphics(?:\[[^\]]*\])?\{([^}]+)\}", tex)
    graphics = [g for g in graphics if "tensorviz" in g]
    assert len(graphics) == 4
    for name in graphics:
        pdf = built.outdir / name
        assert pdf.is_file(), name
        assert pdf.read_bytes().startswith(b"%PDF")
    assert "Which corner of the grid holds the largest score?" in tex


# -- incremental rebuilds (the small NumPy root) ------------------------------------------


@pytest.fixture(scope="module")
def rebuild_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The artifact store of ``test-rebuild``, executed once (as if committed to the repository)."""
    src = copy_root("rebuild", tmp_path_factory.mktemp("rebuild-store") / "src")
    built = run_sphinx(src)
    assert built.summary == (2, 0, 0) and built.warnings.strip() == ""
    return store_dir(src)


@pytest.fixture
def rebuild_site(tmp_path: Path, rebuild_store: Path, build) -> Path:  # noqa: ANN001
    """A fresh copy of ``test-rebuild`` with the committed store, built once (nothing executes)."""
    src = copy_root("rebuild", tmp_path / "src")
    shutil.copytree(rebuild_store, store_dir(src), ignore=shutil.ignore_patterns("failures"))
    first = build(src)
    assert first.summary == (0, 2, 0)
    assert first.warnings.strip() == ""
    return src


def _changed_docs(built: Build) -> int:
    found = re.search(r"updating environment: .*?(\d+) added, (\d+) changed, (\d+) removed", built.status)
    assert found, built.status
    return int(found.group(2))


def test_prose_edit_executes_nothing(rebuild_site: Path, build) -> None:  # noqa: ANN001
    before = snapshot(rebuild_site)
    edit(rebuild_site / "index.md", "Prose that says nothing", "Freshly edited prose that says nothing")
    built = build(rebuild_site)
    assert _changed_docs(built) == 1
    assert built.summary == (0, 2, 0)
    assert "Freshly edited prose" in built.html("index")
    assert len(figures(built.html("index"))) == 2
    assert snapshot(rebuild_site) == before


def test_code_edit_executes_exactly_that_directive(rebuild_site: Path, build) -> None:  # noqa: ANN001
    old = set(artifact_files(rebuild_site))
    edit(rebuild_site / "index.md", "np.arange(1.0, 3.0)", "np.arange(1.0, 5.0)")
    built = build(rebuild_site)
    assert built.summary == (1, 1, 0)
    assert built.warnings.strip() == ""
    new = set(artifact_files(rebuild_site)) - old
    assert len(new) == 1
    artifact = load_artifacts(rebuild_site)[new.pop()]
    np.testing.assert_array_equal(np.array(artifact["data"]["values"]),
                                  np.outer(np.arange(1.0, 5.0), np.arange(1.0, 4.0)))
    _, body = figure_titled(built.html("index"), "Inline outer product")
    assert len(table_rows(body)) == 1 + 4


@pytest.mark.parametrize(("module", "old", "new", "offset"), [
    ("helpers/b.py", "BASE + 0.5", "BASE + 0.25", 1.25),  # imported by the :source: file
    ("helpers/c.py", "BASE = 1.0", "BASE = 3.0", 3.5),  # imported by helpers/b.py (transitively)
])
def test_local_module_edit_executes_again(rebuild_site: Path, build, module: str, old: str,  # noqa: ANN001
                                          new: str, offset: float) -> None:
    old_hashes = set(artifact_files(rebuild_site))
    edit(rebuild_site / module, old, new)
    built = build(rebuild_site)
    assert _changed_docs(built) == 1, "the page must be re-read when a module it imports changes"
    assert str((rebuild_site / module).resolve()) in {str(Path(p).resolve()) for p in built.app.env.dependencies["index"]}
    assert built.summary == (1, 1, 0)
    fresh = set(artifact_files(rebuild_site)) - old_hashes
    assert len(fresh) == 1
    artifact = load_artifacts(rebuild_site)[fresh.pop()]
    np.testing.assert_allclose(np.array(artifact["data"]["values"]), np.eye(3) + offset)
    assert artifact["request"]["files"][module] == sha256_file(rebuild_site / module)
    # the next build is quiet again
    again = build(rebuild_site)
    assert again.summary == (0, 2, 0) and _changed_docs(again) == 0


def test_alt_edit_changes_the_page_but_executes_nothing(rebuild_site: Path, build) -> None:  # noqa: ANN001
    before = snapshot(rebuild_site)
    edit(rebuild_site / "index.md", ":alt: An outer product of two short ranges.",
         ":alt: A two by three multiplication table.")
    built = build(rebuild_site)
    assert built.summary == (0, 2, 0)
    html = built.html("index")
    _, body = figure_titled(html, "Inline outer product")
    desc = ET.fromstring(svg_of(body)).find(f"{SVG_NS}desc")
    assert desc is not None and desc.text == "A two by three multiplication table."
    assert "An outer product of two short ranges." not in html
    assert snapshot(rebuild_site) == before


def test_deleting_the_store_gives_identical_artifacts(rebuild_site: Path, build) -> None:  # noqa: ANN001
    before = artifact_files(rebuild_site)
    saved = {h: without_generated_at(p) for h, p in before.items()}
    svgs = [svg_of(body) for _, body in figures((rebuild_site / "_build" / "html" / "index.html").read_text("utf-8"))]
    shutil.rmtree(store_dir(rebuild_site))
    shutil.rmtree(rebuild_site / "_build")
    built = build(rebuild_site)
    assert built.summary == (2, 0, 0)
    after = artifact_files(rebuild_site)
    assert sorted(after) == sorted(before)
    for content_hash, path in after.items():
        assert without_generated_at(path) == saved[content_hash]
    assert [svg_of(body) for _, body in figures(built.html("index"))] == svgs


# -- execution modes ----------------------------------------------------------------------


@pytest.fixture
def empty_site(tmp_path: Path) -> Path:
    return copy_root("rebuild", tmp_path / "src")


def test_cache_only_with_empty_store_warns_and_shows_placeholders(empty_site: Path, build) -> None:  # noqa: ANN001
    built = build(empty_site, confoverrides={"tensorviz_execution_mode": "cache-only"})
    assert built.summary == (0, 0, 0)
    assert artifact_files(empty_site) == {}
    warnings = built.tensorviz_warnings()
    lines = directive_lines(empty_site / "index.md")
    assert len(warnings) == 2
    for line, warning in zip(lines, sorted(warnings, key=lambda w: int(re.search(r"index\.md:(\d+)", w).group(1)))):
        assert f"index.md:{line}:" in warning
        assert warning.rstrip().endswith("[tensorviz.cache_miss]")
    html = built.html("index")
    assert html.count("tv-placeholder") == 2
    assert "<svg" not in html


def test_cache_only_uses_the_store(rebuild_site: Path, build) -> None:  # noqa: ANN001
    built = build(rebuild_site, confoverrides={"tensorviz_execution_mode": "cache-only"}, freshenv=True)
    assert built.summary == (0, 2, 0)
    assert built.warnings.strip() == ""
    assert len(figures(built.html("index"))) == 2


def test_force_re_executes_everything(rebuild_site: Path, build) -> None:  # noqa: ANN001
    before = snapshot(rebuild_site)
    built = build(rebuild_site, confoverrides={"tensorviz_execution_mode": "force"})
    assert built.summary[0] == 2 and built.summary[2] == 0
    assert built.warnings.strip() == ""
    after = artifact_files(rebuild_site)
    assert sorted(after) == sorted(name[:-5] for name in before if HASH_NAME.match(name))
    for content_hash, path in after.items():
        old_bytes, old_mtime = before[path.name]
        assert path.stat().st_mtime_ns != old_mtime, "force must write the artifact again"
        assert json.loads(path.read_text("utf-8"))["generatedAt"] != json.loads(old_bytes)["generatedAt"]


def test_off_executes_nothing_and_stays_quiet(empty_site: Path, build) -> None:  # noqa: ANN001
    built = build(empty_site, confoverrides={"tensorviz_execution_mode": "off"})
    assert built.summary == (0, 0, 0)
    assert built.warnings.strip() == ""
    assert artifact_files(empty_site) == {}
    assert built.html("index").count("tv-placeholder") == 2


# -- recorded failures and a damaged store ------------------------------------------------


def test_failure_is_recorded_and_fixing_the_code_executes_again(rebuild_site: Path, build) -> None:  # noqa: ANN001
    line = directive_lines(rebuild_site / "index.md")[0]
    edit(rebuild_site / "index.md", "result = np.outer(", "raise RuntimeError('broken lesson')\nresult = np.outer(")
    failed = build(rebuild_site)
    assert failed.summary == (1, 1, 1)
    warnings = failed.tensorviz_warnings()
    assert len(warnings) == 1
    assert f"index.md:{line}:" in warnings[0] and "broken lesson" in warnings[0]
    assert warnings[0].rstrip().endswith("[tensorviz.execution]")

    again = build(rebuild_site)
    assert again.summary == (0, 1, 1)
    (warning,) = again.tensorviz_warnings()
    assert f"index.md:{line}:" in warning and warning.rstrip().endswith("[tensorviz.execution]")
    assert "broken lesson" in again.html("index")

    edit(rebuild_site / "index.md", "raise RuntimeError('broken lesson')\nresult = np.outer(np.arange(1.0, 3.0)",
         "result = np.outer(np.arange(2.0, 4.0)")
    fixed = build(rebuild_site)
    assert fixed.summary == (1, 1, 0)
    assert fixed.warnings.strip() == ""
    assert len(figures(fixed.html("index"))) == 2


def _inline_hash(srcdir: Path) -> str:
    (found,) = [h for h, a in load_artifacts(srcdir).items() if a["request"]["entry"] == "<inline>"]
    return found


@pytest.mark.parametrize("damage", ["truncated", "misnamed"])
def test_damaged_artifact_is_a_store_warning_and_is_executed_again(rebuild_site: Path, build,  # noqa: ANN001
                                                                   damage: str) -> None:
    files = artifact_files(rebuild_site)
    target = _inline_hash(rebuild_site)
    path = files[target]
    good = path.read_text("utf-8")
    if damage == "truncated":
        write(path, good[: len(good) // 2])
    else:  # a valid artifact, but for the other figure
        (other,) = [h for h in files if h != target]
        write(path, files[other].read_text("utf-8"))
    built = build(rebuild_site)
    assert built.statuscode == 0
    warnings = built.tensorviz_warnings()
    assert len(warnings) == 1
    assert warnings[0].rstrip().endswith("[tensorviz.store]")
    assert target[:12] in warnings[0]
    assert built.summary == (1, 1, 0)
    repaired = json.loads(path.read_text("utf-8"))
    assert schema_errors(repaired) == [] and repaired["contentHash"] == target
    assert without_generated_at(path) == without_generated_at_text(good)
    quiet = build(rebuild_site)
    assert quiet.summary == (0, 2, 0) and quiet.warnings.strip() == ""


def without_generated_at_text(text: str) -> bytes:
    return without_run_facts(text)


def test_damaged_artifact_in_cache_only_mode_is_a_warning_not_a_crash(rebuild_site: Path, build) -> None:  # noqa: ANN001
    path = artifact_files(rebuild_site)[_inline_hash(rebuild_site)]
    write(path, path.read_text("utf-8")[:40])
    built = build(rebuild_site, confoverrides={"tensorviz_execution_mode": "cache-only"}, freshenv=True)
    assert built.statuscode == 0
    assert built.summary[0] == 0
    warnings = built.tensorviz_warnings()
    line = directive_lines(rebuild_site / "index.md")[0]
    assert warnings and all(w.rstrip().endswith("[tensorviz.store]") for w in warnings)
    assert all(f"index.md:{line}:" in w for w in warnings)
    html = built.html("index")
    assert "tv-error" in html
    assert len(figures(html)) == 1
    assert len(path.read_text("utf-8")) == 40  # cache-only never writes the store


def test_damaged_artifact_is_not_counted_as_cached(rebuild_site: Path, build) -> None:  # noqa: ANN001
    path = artifact_files(rebuild_site)[_inline_hash(rebuild_site)]
    write(path, path.read_text("utf-8")[:40])
    built = build(rebuild_site, confoverrides={"tensorviz_execution_mode": "cache-only"}, freshenv=True)
    assert built.summary[:2] == (0, 1)
