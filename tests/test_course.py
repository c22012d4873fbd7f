"""The course in lessons/ as its users meet it: built from the committed artifacts only.

These run ``sphinx-build`` in a subprocess, as an author or Read the Docs would.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest

from offline_util import WITHOUT_FRAMEWORKS
from sphinx_tensorviz.store.artifacts import ArtifactStore, schema_errors

ROOT = Path(__file__).resolve().parents[1]
LESSONS = ROOT / "lessons"
STORE = LESSONS / "tensorviz_artifacts"
SUMMARY = re.compile(r"tensorviz: (\d+) executed, (\d+) cached, (\d+) failed")
LESSON_PAGES = sorted(p.stem for p in LESSONS.glob("*.md") if p.stem != "index")


def sphinx_build(src: Path, out: Path, builder: str = "html", env: dict[str, str] | None = None,
                 frameworks: bool = True) -> subprocess.CompletedProcess[str]:
    """``sphinx-build -W`` in a fresh process, the way Read the Docs runs it."""
    start = [sys.executable, "-m", "sphinx"] if frameworks else [sys.executable, "-c", WITHOUT_FRAMEWORKS]
    return subprocess.run(
        [*start, "-W", "--keep-going", "-b", builder, "-d", str(out) + ".doctrees",
         str(src), str(out)],
        capture_output=True, text=True, env={**os.environ, **(env or {})}, timeout=600,
    )


@pytest.fixture(scope="module")
def course(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the course (sources and committed artifacts), so builds cannot touch the repo."""
    dest = tmp_path_factory.mktemp("course") / "lessons"
    shutil.copytree(LESSONS, dest, ignore=shutil.ignore_patterns("_build", "__pycache__", "failures"))
    return dest


@pytest.fixture(scope="module")
def rtd_build(course: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    out = tmp_path_factory.mktemp("rtd") / "html"
    before = sorted(p.name for p in (course / "tensorviz_artifacts").iterdir())
    result = sphinx_build(course, out, env={"READTHEDOCS": "True"}, frameworks=False)
    assert result.returncode == 0, result.stderr
    assert sorted(p.name for p in (course / "tensorviz_artifacts").iterdir()) == before
    return out, result.stdout + result.stderr


@pytest.mark.sphinx
def test_read_the_docs_build_executes_nothing_and_warns_about_nothing(rtd_build: tuple[Path, str]) -> None:
    """As .readthedocs.yaml installs it: the extension alone, no PyTorch, no JAX."""
    _, log = rtd_build
    executed, cached, failed = map(int, SUMMARY.search(log).groups())
    assert (executed, failed) == (0, 0)
    assert cached == len(list(STORE.glob("*.json")))  # every executed figure, each from the store
    assert "WARNING" not in log


def test_course_has_six_lessons_in_both_frameworks() -> None:
    assert len(LESSON_PAGES) >= 6
    backends = [json.loads(p.read_text())["request"]["backend"] for p in STORE.glob("*.json")]
    lessons_by_backend = {
        backend: {json.loads(p.read_text())["lessonId"] for p in STORE.glob("*.json")
                  if json.loads(p.read_text())["request"]["backend"] == backend}
        for backend in set(backends)
    }
    assert len(lessons_by_backend["jax"]) >= 2 and len(lessons_by_backend["torch"]) >= 2


@pytest.mark.sphinx
def test_the_two_frameworks_lesson_shows_both_ports_and_their_agreement(rtd_build: tuple[Path, str]) -> None:
    """Built without PyTorch or JAX: each framework's code and figure, each figure's footer saying they agree."""
    out, _ = rtd_build
    page = " ".join((out / "two-frameworks.html").read_text("utf-8").split())
    assert page.count("PyTorch and JAX agree on output within float32 tolerance") == 2, "one footer per framework"
    assert len(re.findall(r'<figure id="[^"]+" class="tv-figure', page)) == 2
    text = re.sub(r"<[^>]+>", "", page)  # the highlighted code's words, without its spans
    torch, nnx = text.index("class PreLNBlock(nn.Module)"), text.index("class PreLNBlock(nnx.Module)")
    assert text.rindex("PyTorch", 0, torch) < torch < text.rindex("JAX", 0, nnx) < nnx  # each under its name


@pytest.mark.sphinx
def test_every_committed_artifact_validates_and_is_used(rtd_build: tuple[Path, str]) -> None:
    out, _ = rtd_build
    html = "".join(p.read_text("utf-8") for p in out.glob("*.html"))
    for path in STORE.glob("*.json"):
        artifact = json.loads(path.read_text("utf-8"))
        assert schema_errors(artifact) == [], path.name
        assert artifact["contentHash"] == path.stem
        assert f"content hash {path.stem[:12]}" in html, f"{path.name} is not shown on any page"


class _Page(HTMLParser):
    """Collects, in document order, the markers a lesson page must have."""

    def __init__(self) -> None:
        super().__init__()
        self.events: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        classes = (dict(attrs).get("class") or "").split()
        for marker in ("tv-lesson", "tv-prediction", "tv-reveal", "tv-provenance", "tv-check-passed", "tv-check-failed"):
            if marker in classes:
                self.events.append(marker)
        if tag == "svg":
            self.events.append("svg")


@pytest.mark.sphinx
@pytest.mark.parametrize("page", LESSON_PAGES)
def test_each_lesson_page_teaches_in_order(rtd_build: tuple[Path, str], page: str) -> None:
    out, _ = rtd_build
    parser = _Page()
    parser.feed((out / f"{page}.html").read_text("utf-8"))
    events = parser.events
    assert events[0] == "tv-lesson", "the question and metadata come first"
    first_prediction = events.index("tv-prediction")
    assert events[first_prediction + 1] == "tv-reveal", "the figure is revealed after the prediction"
    assert "svg" in events and "tv-provenance" in events
    assert "tv-check-passed" in events, "every lesson verifies at least one claim"
    assert "tv-check-failed" not in events


@pytest.mark.sphinx
def test_catalogue_lists_every_lesson_with_metadata_and_thumbnail(rtd_build: tuple[Path, str]) -> None:
    out, _ = rtd_build
    index = (out / "index.html").read_text("utf-8")
    for page in LESSON_PAGES:
        assert f'href="{page}.html"' in index
        thumbnail = out / "_tensorviz" / "previews" / f"{page}.svg"
        assert thumbnail.is_file(), page
        assert f'src="_tensorviz/previews/{page}.svg"' in index
    assert index.count('class="tv-question"') == len(LESSON_PAGES)
    assert "Modern LLMs" in index and "LLaMA, RMSNorm, RoPE, SwiGLU, causal decoder" in index


@pytest.mark.sphinx
def test_downloaded_run_py_reproduces_the_stored_activations(rtd_build: tuple[Path, str], tmp_path: Path) -> None:
    out, _ = rtd_build
    artifact = next(json.loads(p.read_text()) for p in STORE.glob("*.json")
                    if json.loads(p.read_text())["lessonId"] == "llama-decoder")
    folder = out / "_tensorviz" / artifact["contentHash"][:16]
    copy = shutil.copytree(folder, tmp_path / "download")
    result = subprocess.run([sys.executable, "run.py"], cwd=copy, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout.strip().splitlines()[-1])
    # compared within the tolerance of each array's dtype: float32 differs in the last bits across CPUs
    assert set(report["arrays"]) == {"output", *(f"activations[{name}]" for name in (
        "embedding", "block.attention_norm", "block.attention", "block.ffn_norm", "block.ffn"))}
    for name, array in report["arrays"].items():
        assert array["dtype"] == "float32" and array["ok"], (name, array)


def test_rms_after_each_rmsnorm_is_one() -> None:
    artifact = next(json.loads(p.read_text()) for p in STORE.glob("*.json")
                    if json.loads(p.read_text())["lessonId"] == "llama-decoder")
    for name in ("block.attention_norm", "block.ffn_norm"):
        values = artifact["data"]["activations"][name]["values"]
        rms = (sum(v * v for v in values) / len(values)) ** 0.5
        assert abs(rms - 1) < 1e-5, (name, rms)


@pytest.mark.sphinx
@pytest.mark.parametrize("builder", ["dirhtml", "singlehtml", "epub", "latex", "text", "man"])
def test_every_builder_builds_the_course_with_W(course: Path, tmp_path: Path, builder: str) -> None:
    result = sphinx_build(course, tmp_path / builder, builder, env={"TENSORVIZ_MODE": "cache-only"})
    assert result.returncode == 0, result.stderr
    assert "0 executed" in result.stdout


@pytest.mark.sphinx
def test_text_builder_shows_the_text_alternatives(course: Path, tmp_path: Path) -> None:
    result = sphinx_build(course, tmp_path / "text", "text", env={"TENSORVIZ_MODE": "cache-only"})
    assert result.returncode == 0, result.stderr
    text = (tmp_path / "text" / "llama-decoder.txt").read_text("utf-8")
    assert "Predict first:" in text and "The graph as a list" in text
    assert "Four stops through the decoder" in text and "Feature RMS" in text


@pytest.mark.sphinx
def test_man_page_keeps_its_name_and_sections(course: Path, tmp_path: Path) -> None:
    """Data-table captions are paragraphs in a man page: the man writer takes a table's title for the
    page's NAME line (before the first section) or for a section heading (.SH, .SS)."""
    result = sphinx_build(course, tmp_path / "man", "man", env={"TENSORVIZ_MODE": "cache-only"})
    assert result.returncode == 0, result.stderr
    page = next((tmp_path / "man").rglob("transformers-executed.7")).read_text("utf-8")
    name = page.split(".SH NAME\n", 1)[1].splitlines()[0]
    assert name.startswith("transformers-executed \\- "), name
    headings = [line[4:] for line in page.splitlines() if line.startswith((".SH ", ".SS "))]
    assert not [h for h in headings if h.startswith(("Data", "Values at", "Mean value"))], headings
    assert "Data: " in page  # the captions are still there, as text


@pytest.mark.sphinx
@pytest.mark.parametrize("theme", ["furo", "pydata_sphinx_theme", "sphinx_book_theme", "sphinx_rtd_theme"])
def test_every_theme_builds_the_course_with_W(course: Path, tmp_path: Path, theme: str) -> None:
    pytest.importorskip(theme)
    result = sphinx_build(course, tmp_path / theme, env={"TENSORVIZ_MODE": "cache-only", "COURSE_THEME": theme})
    assert result.returncode == 0, result.stderr
    page = (tmp_path / theme / "llama-decoder.html").read_text("utf-8")
    assert "tensorviz/tensorviz.css" in page and 'class="tv-graph"' in page


def test_store_matches_what_the_course_refers_to() -> None:
    """No orphans: every artifact belongs to a directive (tensorviz gc would find nothing)."""
    referenced = set()
    store = ArtifactStore(STORE)
    for name in store.artifact_hashes():
        referenced.add(json.loads(store.artifact_path(name).read_text())["lessonId"])
    assert referenced == set(LESSON_PAGES)


def tensorviz(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "sphinx_tensorviz", *args], capture_output=True, text=True,
                          timeout=600)


@pytest.mark.sphinx
def test_tensorviz_reports_the_course_cached_clean_and_reproducible(course: Path) -> None:
    status = tensorviz("status", str(course), "--check")
    assert status.returncode == 0, status.stdout + status.stderr
    count = len(list(STORE.glob("*.json")))
    assert f"{count} directives: {count} cached, 0 stale, 0 missing, 0 failed" in status.stdout
    gc = tensorviz("gc", str(course))
    assert gc.returncode == 0 and "0 unused artifact(s)" in gc.stdout
    verify = tensorviz("verify", str(course))
    assert verify.returncode == 0, verify.stdout + verify.stderr
    assert f"{count} of {count} artifacts reproduced" in verify.stdout
    # every artifact says which dtype and tolerance it was compared with, and compares something
    for line in verify.stdout.splitlines():
        if line.startswith("ok "):
            assert int(re.search(r"compared ([\d,]+) values?", line).group(1).replace(",", "")) > 0, line
    # cross-sweep checks record no tensors: they are re-run over the stored points and compare their values
    kinds = [json.loads(p.read_text("utf-8"))["data"]["kind"] for p in STORE.glob("*.json")]
    sweep_checks = kinds.count("sweep-check")
    # a training compares its final loss, within a tolerance that grows with its steps (features/train/verify.py)
    trainings = kinds.count("train")
    # a figure with :frameworks: adds two jobs that record no float32 tensor: its shared weights (their
    # names and shapes, int64) and its comparison (its largest differences, float64)
    shared = kinds.count("shared-weights") + kinds.count("frameworks-check")
    assert len(re.findall(r"^ +[\d,]+ float32 values in data\.\S+ within rtol=6\.1e-05, atol=\S+$",
                          verify.stdout, re.M)) >= count - sweep_checks - trainings - shared, verify.stdout
    assert len(re.findall(r"^ +1 float32 value in the final loss \(after [\d,]+ steps\) within rtol=",
                          verify.stdout, re.M)) == trainings, verify.stdout
    assert len(re.findall(r"^ +1 float64 value in checks\[\w+\]\.value", verify.stdout, re.M)) == sweep_checks


@pytest.mark.sphinx
def test_course_reproduces_on_a_cpu_with_a_narrower_instruction_set(course: Path) -> None:
    """Another CPU, emulated: PyTorch's portable kernels and XLA limited to SSE4.2 (no AVX), passed
    through to the workers. float32 results move in the last bits; verify must still pass."""
    verify = subprocess.run(
        [sys.executable, "-m", "sphinx_tensorviz", "verify", str(course)], capture_output=True, text=True,
        timeout=600, env={**os.environ, "ATEN_CPU_CAPABILITY": "default", "XLA_FLAGS": "--xla_cpu_max_isa=SSE4_2"},
    )
    count = len(list(STORE.glob("*.json")))
    assert verify.returncode == 0, verify.stdout + verify.stderr
    assert f"{count} of {count} artifacts reproduced" in verify.stdout


@pytest.mark.sphinx
@pytest.mark.skipif(shutil.which("latexmk") is None, reason="latexmk is not installed")
def test_course_builds_a_pdf_with_pdflatex(course: Path, tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "sphinx", "-M", "latexpdf", str(course), str(tmp_path), "-q", "-W"],
        capture_output=True, text=True, env={**os.environ, "TENSORVIZ_MODE": "cache-only"}, timeout=900,
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    pdf = tmp_path / "latex" / "transformersexecuted.pdf"
    assert pdf.is_file() and pdf.stat().st_size > 100_000
    figures = [p for p in (tmp_path / "latex").glob("tensorviz-*.pdf") if "diagram" not in p.name]
    drawn = [p for p in STORE.glob("*.json")  # not the figure-less jobs (a :frameworks: figure's weights, comparison)
             if json.loads(p.read_text("utf-8"))["data"]["kind"] not in ("shared-weights", "frameworks-check")]
    assert len(figures) == len(drawn)  # one drawing per executed figure
    assert list((tmp_path / "latex").glob("tensorviz-diagram-*.pdf")), "and the authored diagram"
