"""Pins for the hardening fixes of the review commit ("untrusted artifacts, worker results and inputs
can no longer crash a build or leak files").

Every case is a real Sphinx build (no mocks) of a small project written into a temporary folder, or of
a copy of the course's llama-decoder lesson built in ``cache-only`` mode (nothing executes, so no
PyTorch run is needed there). Each checks: the build finishes, the expected located
``[tensorviz.<subtype>]`` warning, no traceback, and an error box or the safe behaviour on the page.
"""

from __future__ import annotations

import hashlib
import html as html_lib
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from conftest import (
    Build,
    artifact_files,
    directive_lines,
    load_artifacts,
    run_sphinx,
    store_dir,
    warning_records,
    write,
)

pytestmark = pytest.mark.sphinx

REPO = Path(__file__).resolve().parent.parent
LESSONS = REPO / "lessons"
CACHE_ONLY = {"tensorviz_execution_mode": "cache-only"}

CONF = '''\
project = "tensorviz hardening"
extensions = ["myst_parser", "sphinx_tensorviz"]
exclude_patterns = ["_build", "tensorviz_artifacts"]
tensorviz_workers = 2
tensorviz_timeout = 60
'''


# ------------------------------------------------------------------------------------------------
# helpers
# ------------------------------------------------------------------------------------------------
def make_project(dest: Path, pages: dict[str, str], files: dict[str, str] | None = None) -> Path:
    """A small MyST project: ``conf.py``, ``index.md`` with a toctree of ``pages``, and ``files``."""
    dest.mkdir(parents=True)
    (dest / "conf.py").write_text(CONF, "utf-8")
    toc = "\n".join(pages)
    (dest / "index.md").write_text(f"# Hardening\n\n```{{toctree}}\n{toc}\n```\n", "utf-8")
    for name, text in pages.items():
        (dest / f"{name}.md").write_text(text, "utf-8")
    for name, text in (files or {}).items():
        path = dest / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, "utf-8")
    return dest


def heatmap_page(body: str, options: str = "", title: str = "A figure") -> str:
    opts = (options.strip() + "\n") if options.strip() else ""
    return f"# {title}\n\nSome prose.\n\n```{{tv-heatmap}}\n:title: {title}\n{opts}\n{body.strip()}\n```\n"


GOOD_BODY = "import numpy as np\n\nresult = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])"
RAISING_BODY = "raise ValueError('lesson exploded on purpose')"


def tv_records(built: Build, src: Path, page: str) -> list[str]:
    """The tensorviz warning records located in ``page``.md."""
    prefix = f"{src / page}.md:"
    return [r for r in warning_records(built.warnings) if r.startswith(prefix) and "[tensorviz." in r]


def assert_one_located(built: Build, src: Path, page: str, subtype: str, *texts: str,
                       directive: str = "tv-heatmap", nth: int = 0) -> str:
    """Exactly one ``[tensorviz.<subtype>]`` warning for ``page``, at its directive's line."""
    records = tv_records(built, src, page)
    assert len(records) == 1, f"expected one warning for {page}, got {records}\n{built.warnings}"
    line = directive_lines(src / f"{page}.md", directive)[nth]
    (record,) = records
    assert record.startswith(f"{src / page}.md:{line}: WARNING:"), record
    assert record.rstrip().endswith(f"[tensorviz.{subtype}]"), record
    for text in texts:
        assert text in record, (text, record)
    return record


def assert_no_crash(built: Build) -> None:
    assert built.statuscode == 0, built.warnings
    assert "Traceback (most recent call last)" not in built.status
    assert "Exception occurred" not in built.warnings + built.status
    assert "ExtensionError" not in built.warnings + built.status
    assert not [r for r in warning_records(built.warnings) if "[tensorviz." not in r], built.warnings


def error_boxes(page_html: str) -> list[str]:
    boxes = re.findall(r'<div class="[^"]*\btv-error\b[^"]*"[^>]*>(.*?)</div>', page_html, re.S)
    return [html_lib.unescape(re.sub(r"<[^>]+>", "", box)) for box in boxes]


def status_summary(built: Build) -> str:
    found = re.findall(r"^tensorviz: \d+ executed.*$", built.status, re.M)
    assert len(found) == 1, built.status
    return found[0].strip()


def only_artifact_path(src: Path) -> Path:
    paths = list(artifact_files(src).values())
    assert len(paths) == 1, paths
    return paths[0]


def rewrite_json(path: Path, change: Any) -> None:
    """Load, change in place with ``change(doc)``, write back (pretty, like the store) with a fresh mtime."""
    doc = json.loads(path.read_text("utf-8"))
    change(doc)
    write(path, json.dumps(doc, indent=2, ensure_ascii=False) + "\n")


def sha256_file_text(path: Path) -> str:
    return hashlib.sha256(path.read_text("utf-8").encode("utf-8")).hexdigest()


def output_texts(outdir: Path) -> str:
    return "\n".join(p.read_text("utf-8", "replace") for p in outdir.rglob("*")
                     if p.is_file() and p.suffix in (".html", ".json", ".py", ".txt", ".svg", ".js"))


# ------------------------------------------------------------------------------------------------
# 1. a copy of the llama-decoder lesson with its committed artifact, built cache-only
# ------------------------------------------------------------------------------------------------
def llama_artifact_source() -> Path:
    for path in sorted((LESSONS / "tensorviz_artifacts").glob("*.json")):
        doc = json.loads(path.read_text("utf-8"))
        if doc.get("lessonId") == "llama-decoder" and doc["request"]["directive"] == "tv-graph":
            return path
    pytest.fail("no committed tv-graph artifact of the llama-decoder lesson")


def llama_copy(dest: Path) -> Path:
    dest.mkdir(parents=True)
    for name in ("conf.py", "llama-decoder.md"):
        shutil.copy2(LESSONS / name, dest / name)
    for folder in ("models", "_static"):
        shutil.copytree(LESSONS / folder, dest / folder, ignore=shutil.ignore_patterns("__pycache__"))
    (dest / "index.md").write_text("# Course\n\n```{toctree}\nllama-decoder\n```\n", "utf-8")
    store = store_dir(dest)
    store.mkdir()
    shutil.copy2(llama_artifact_source(), store)
    return dest


def offered_files(outdir: Path) -> list[str]:
    """What the build offers for download beside the pages: every file under ``_tensorviz/``, with
    the lesson notebooks' zips opened (a notebook of a page whose figure was refused carries no code
    file and no code cell for it, only the notebook itself)."""
    import zipfile

    folder = outdir / "_tensorviz"
    offered: list[str] = []
    for path in sorted(folder.rglob("*")) if folder.exists() else []:
        if path.suffix == ".zip" and path.parent.name == "notebooks":
            offered += [name for name in zipfile.ZipFile(path).namelist() if not name.endswith(".ipynb")]
        elif path.suffix == ".ipynb":
            cells = json.loads(path.read_text("utf-8"))["cells"]
            offered += [f"{path.name}: code cell" for cell in cells if cell["cell_type"] == "code"]
        elif path.is_file() and path.parent.name != "notebooks":
            offered.append(str(path.relative_to(folder)))
    return offered


def source_panels(page_html: str) -> list[str]:
    return re.findall(r"Model source: <code>([^<]*)</code>", page_html)


def test_llama_copy_builds_cache_only_with_its_source_panel(tmp_path: Path) -> None:
    """The baseline the next cases change one thing of: committed artifact, no execution, a source panel."""
    src = llama_copy(tmp_path / "src")
    built = run_sphinx(src, confoverrides=CACHE_ONLY)
    assert_no_crash(built)
    assert built.tensorviz_warnings() == [], built.warnings
    assert status_summary(built) == "tensorviz: 0 executed, 1 cached, 0 failed"
    assert source_panels(built.html("llama-decoder")) == ["models/tiny_llama.py"]


@pytest.mark.parametrize("model_file", ["/etc/passwd", "../../etc/passwd"])
@pytest.mark.parametrize("with_title", [True, False])
def test_artifact_model_file_cannot_leak_a_file(tmp_path: Path, model_file: str, with_title: bool) -> None:
    """``data.modelFile`` is not hashed: pointing it anywhere shows no file outside the project."""
    src = llama_copy(tmp_path / "src")
    if not with_title:  # the default title is built from data.modelFile: it must stay just a name
        page = src / "llama-decoder.md"
        page.write_text(page.read_text("utf-8").replace(":title: One forward pass through TinyLlama\n", ""), "utf-8")
    rewrite_json(only_artifact_path(src), lambda doc: doc["data"].__setitem__("modelFile", model_file))
    built = run_sphinx(src, confoverrides=CACHE_ONLY)
    assert_no_crash(built)
    everything = output_texts(built.outdir)
    assert "root:x:0:0" not in everything
    assert not list(built.outdir.rglob("passwd")), "a copy of /etc/passwd was written"
    # the only source panel allowed is the recorded project file, whose sha256 still matches
    assert source_panels(built.html("llama-decoder")) in ([], ["models/tiny_llama.py"])
    assert f"<code>{model_file}</code>" not in built.html("llama-decoder")


@pytest.mark.parametrize("entry", ["/etc/passwd", "../../etc/passwd"])
def test_artifact_request_entry_outside_is_a_store_problem(tmp_path: Path, entry: str) -> None:
    """An edited ``request.entry`` no longer hashes to the file name: refused, nothing read from it."""
    src = llama_copy(tmp_path / "src")

    def point_outside(doc: dict[str, Any]) -> None:
        request = doc["request"]
        request["files"] = {entry: request["files"]["models/tiny_llama.py"]}
        request["entry"] = entry
        doc["data"]["modelFile"] = entry

    rewrite_json(only_artifact_path(src), point_outside)
    built = run_sphinx(src, confoverrides=CACHE_ONLY)
    assert_no_crash(built)
    assert_one_located(built, src, "llama-decoder", "store", "does not hash to its name", directive="tv-graph")
    page = built.html("llama-decoder")
    assert "root:x:0:0" not in output_texts(built.outdir)
    assert source_panels(page) == []
    assert len(error_boxes(page)) == 1
    assert offered_files(built.outdir) == []


def test_model_file_edited_after_recording_shows_no_source_and_no_download(tmp_path: Path) -> None:
    src = llama_copy(tmp_path / "src")
    model = src / "models" / "tiny_llama.py"
    model.write_text(model.read_text("utf-8") + "\n# edited after the artifact was recorded\n", "utf-8")
    built = run_sphinx(src, confoverrides=CACHE_ONLY)
    assert_no_crash(built)
    assert_one_located(built, src, "llama-decoder", "cache_miss", "cache-only", directive="tv-graph")
    page = built.html("llama-decoder")
    assert source_panels(page) == []
    assert "tv-placeholder" in page
    assert offered_files(built.outdir) == [], "nothing may be offered for download"
    assert status_summary(built) == "tensorviz: 0 executed, 0 cached, 0 failed, 1 not computed"


# ------------------------------------------------------------------------------------------------
# 13. tv-steps :opening: and repeated step ids (on the same llama copy: drawn from the stored graph)
# ------------------------------------------------------------------------------------------------
def test_opening_is_matched_like_step_ids(tmp_path: Path) -> None:
    src = llama_copy(tmp_path / "src")
    page = src / "llama-decoder.md"
    text = page.read_text("utf-8")
    assert text.count(":opening: pre-norm\n") == 1 and text.count("```{tv-step} rotary\n") == 1
    page.write_text(text.replace(":opening: pre-norm\n", ":opening: Rotary\n"), "utf-8")
    built = run_sphinx(src, confoverrides=CACHE_ONLY)
    assert_no_crash(built)
    assert built.tensorviz_warnings() == [], built.warnings
    assert 'data-opening="rotary"' in built.html("llama-decoder")


def test_repeated_step_ids_are_an_option_error(tmp_path: Path) -> None:
    src = llama_copy(tmp_path / "src")
    page = src / "llama-decoder.md"
    text = page.read_text("utf-8")
    assert text.count("```{tv-step} gated\n") == 1
    page.write_text(text.replace("```{tv-step} gated\n", "```{tv-step} Rotary\n"), "utf-8")
    built = run_sphinx(src, confoverrides=CACHE_ONLY)
    assert_no_crash(built)
    assert_one_located(built, src, "llama-decoder", "option", "rotary", directive="tv-steps")
    html = built.html("llama-decoder")
    assert any("unique" in box for box in error_boxes(html))
    assert "data-opening=" not in html


# ------------------------------------------------------------------------------------------------
# 2. an artifact whose request gains a file no longer hashes to its name
# ------------------------------------------------------------------------------------------------
SOURCE_PAGE = heatmap_page("", ":source: models/a.py\n:function: compute", title="From a file")
MODEL_A = "import numpy as np\n\n\ndef compute():\n    return np.arange(6.0).reshape(2, 3)\n"


def test_artifact_that_gains_conf_py_is_refused(tmp_path: Path) -> None:
    src = make_project(tmp_path / "src", {"page": SOURCE_PAGE}, {"models/a.py": MODEL_A})
    first = run_sphinx(src)
    assert_no_crash(first)
    assert first.summary == (1, 0, 0)
    path = only_artifact_path(src)
    conf_sha = sha256_file_text(src / "conf.py")
    rewrite_json(path, lambda doc: doc["request"]["files"].__setitem__("conf.py", conf_sha))

    # cache-only: refused with a located store warning and an error box; no downloads at all
    cached = run_sphinx(src, confoverrides=CACHE_ONLY, freshenv=True)
    assert_no_crash(cached)
    assert_one_located(cached, src, "page", "store", path.name, "does not hash to its name")
    assert len(error_boxes(cached.html("page"))) == 1
    assert not list(cached.outdir.glob("_tensorviz/**/conf.py"))

    # auto: the same warning, then executed again; the new artifact's downloads hold no conf.py
    rewrite_json(path, lambda doc: doc["request"]["files"].__setitem__("conf.py", conf_sha))
    auto = run_sphinx(src, freshenv=True)
    assert_no_crash(auto)
    assert_one_located(auto, src, "page", "store", "executing again")
    assert auto.summary == (1, 0, 0)
    assert "conf.py" not in json.loads(path.read_text("utf-8"))["request"]["files"]
    folders = [p for p in (auto.outdir / "_tensorviz").iterdir() if p.is_dir()]  # download folders
    assert len(folders) == 1
    assert (folders[0] / "models" / "a.py").is_file()
    assert not list(auto.outdir.glob("_tensorviz/**/conf.py"))
    assert "conf.py" not in auto.html("page").split("Reproduce this figure")[1]


# ------------------------------------------------------------------------------------------------
# 3. edited failure records
# ------------------------------------------------------------------------------------------------
def test_edited_failure_records_warn_and_do_not_crash(tmp_path: Path) -> None:
    src = make_project(tmp_path / "src", {"page": heatmap_page(RAISING_BODY)})
    first = run_sphinx(src)
    assert_no_crash(first)
    assert_one_located(first, src, "page", "execution", "lesson exploded on purpose")
    (record,) = (store_dir(src) / "failures").glob("*.json")

    rewrite_json(record, lambda doc: doc.__setitem__("subtype", "bogus"))
    bogus = run_sphinx(src)
    assert_no_crash(bogus)
    assert bogus.summary == (0, 0, 1), "a recorded failure is not executed again"
    assert_one_located(bogus, src, "page", "crash", "lesson exploded on purpose")
    assert len(error_boxes(bogus.html("page"))) == 1

    rewrite_json(record, lambda doc: doc.pop("message"))
    silent = run_sphinx(src)
    assert_no_crash(silent)
    assert silent.summary == (0, 0, 1)
    assert_one_located(silent, src, "page", "crash", "without a message")
    (box,) = error_boxes(silent.html("page"))
    assert "without a message" in box

    rewrite_json(record, lambda doc: doc.update(subtype=["not", "text"], message={"a": 1}))
    odd = run_sphinx(src)  # a record of the wrong shape counts as none: the code runs again
    assert_no_crash(odd)
    assert odd.summary == (1, 0, 1)
    assert_one_located(odd, src, "page", "execution", "lesson exploded on purpose")


# ------------------------------------------------------------------------------------------------
# 4. lesson code that writes the worker's result file itself
# ------------------------------------------------------------------------------------------------
FORGED_FAILURE = """\
import sys, json, os
open(sys.argv[2], "w").write(json.dumps({"ok": False, "subtype": "bogus", "message": "x"}))
os._exit(0)
"""

FORGED_SUCCESS = """\
import sys, json, os
open(sys.argv[2], "w").write(json.dumps({"ok": True}))
os._exit(0)
"""


def test_forged_failure_result_is_a_crash(tmp_path: Path) -> None:
    src = make_project(tmp_path / "src", {"page": heatmap_page(FORGED_FAILURE)})
    built = run_sphinx(src)
    assert_no_crash(built)
    assert built.summary == (1, 0, 1)
    assert_one_located(built, src, "page", "crash", "status 0")
    (box,) = error_boxes(built.html("page"))
    assert "status 0" in box
    (record,) = (store_dir(src) / "failures").glob("*.json")
    assert json.loads(record.read_text("utf-8"))["subtype"] == "crash"


def test_forged_success_result_is_a_crash_not_a_build_error(tmp_path: Path) -> None:
    src = make_project(tmp_path / "src", {"page": heatmap_page(FORGED_SUCCESS)})
    built = run_sphinx(src)
    assert_no_crash(built)
    assert_one_located(built, src, "page", "crash")
    assert len(error_boxes(built.html("page"))) == 1


# ------------------------------------------------------------------------------------------------
# 5. :colormap:
# ------------------------------------------------------------------------------------------------
def test_colormap_is_checked_when_the_page_is_read(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    src = make_project(tmp_path / "src", {
        "bad": heatmap_page(GOOD_BODY, ":colormap: nope_cmap"),
        "good": heatmap_page(GOOD_BODY, ":colormap: BrBG"),
    })
    built = run_sphinx(src)
    assert_no_crash(built)
    assert_one_located(built, src, "bad", "option", "nope_cmap", ":colormap:")
    (box,) = error_boxes(built.html("bad"))
    assert "nope_cmap" in box
    assert "<svg" not in built.html("bad")
    assert tv_records(built, src, "good") == []
    assert "<svg" in built.html("good") and error_boxes(built.html("good")) == []
    assert built.summary == (1, 0, 0), "only the good figure executes"


# ------------------------------------------------------------------------------------------------
# 6. malformed authored diagrams
# ------------------------------------------------------------------------------------------------
DIAGRAMS = {
    "list_id": ("- {id: [a], x: 1, y: 1, label: a}", "id must be a non-empty string"),
    "string_x": ('- {id: a, x: "1", y: 1, label: a}', "x must be a finite number"),
    "nan_x": ("- {id: a, x: .nan, y: 1, label: a}", "x must be a finite number"),
    "duplicate": ("- {id: a, x: 1, y: 1, label: a}\n    - {id: a, x: 2, y: 1, label: b}", "used twice"),
    "label_at": ("- {id: a, x: 1, y: 1, label: a}\n    - {id: b, x: 2, y: 1, label: b}\n"
                 "  edges:\n    - {from: a, to: b, labelAt: [1, 2, 3]}", "labelAt must be two numbers"),
}


def diagram_page(nodes_yaml: str) -> str:
    return f"# A diagram\n\n```{{tv-graph}}\n:title: Broken\npanel:\n  nodes:\n    {nodes_yaml}\n```\n"


@pytest.fixture(scope="module")
def diagram_site(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Build]:
    pages = {name: diagram_page(body) for name, (body, _) in DIAGRAMS.items()}
    pages["fine"] = diagram_page("- {id: a, x: 1, y: 1, label: a}\n    - {id: b, x: 2, y: 2, label: b}\n"
                                 "  edges:\n    - {from: a, to: b, label: e, labelAt: [1.5, 1.5]}")
    src = make_project(tmp_path_factory.mktemp("diagrams") / "src", pages)
    return src, run_sphinx(src)


@pytest.mark.parametrize("page", list(DIAGRAMS))
def test_malformed_diagram_is_an_option_warning(diagram_site: tuple[Path, Build], page: str) -> None:
    src, built = diagram_site
    assert_no_crash(built)
    assert_one_located(built, src, page, "option", DIAGRAMS[page][1], directive="tv-graph")
    html = built.html(page)
    assert len(error_boxes(html)) == 1
    assert 'class="tv-diagram' not in html


def test_wellformed_diagram_with_label_at_is_drawn(diagram_site: tuple[Path, Build]) -> None:
    src, built = diagram_site
    assert tv_records(built, src, "fine") == []
    assert "tv-diagram" in built.html("fine")


# ------------------------------------------------------------------------------------------------
# 7. NaN and dates in :inputs: / :model-args:
# ------------------------------------------------------------------------------------------------
TORCH_MODEL = """\
import numpy as np
import torch


class Small(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(3, 2)

    def forward(self, x):
        return self.lin(x)


class Broken(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(3, 2)

    def forward(self, x):
        return self.lin(x) * float("nan")


def check_numpy_bool(model):
    \"\"\"A check that returns numpy.bool_\"\"\"
    return np.bool_(True)


def check_dict_without_value(model):
    \"\"\"A check that returns a dict with value None\"\"\"
    return {"passed": True, "value": None, "tolerance": 1e-6}
"""


def graph_page(model: str, extra: str = "") -> str:
    opts = (extra.strip() + "\n") if extra.strip() else ""
    return (f"# A graph\n\n```{{tv-graph}}\n:model: models/m.py:{model}\n:inputs: [{{shape: [1, 3]}}]\n"
            f"{opts}:title: A graph\n```\n")


def test_nan_and_dates_in_inputs_are_option_errors(tmp_path: Path) -> None:
    src = make_project(tmp_path / "src", {
        "nan_inputs": heatmap_page("import numpy as np\n\ndef f(x):\n    return np.eye(2) * x",
                                   ":function: f\n:inputs: {x: .nan}"),
        "date_args": graph_page("Small", ":model-args: {when: 2024-01-01}"),
        "good": heatmap_page(GOOD_BODY),
    }, {"models/m.py": TORCH_MODEL})
    built = run_sphinx(src)
    assert_no_crash(built)
    assert_one_located(built, src, "nan_inputs", "option", ":inputs:", "NaN")
    assert_one_located(built, src, "date_args", "option", ":model-args:", "dates", directive="tv-graph")
    for page in ("nan_inputs", "date_args"):
        assert len(error_boxes(built.html(page))) == 1
    assert built.summary == (1, 0, 0), "nothing executes for the two bad directives"
    assert len(artifact_files(src)) == 1
    assert not list((store_dir(src) / "failures").glob("*.json"))


# ------------------------------------------------------------------------------------------------
# 8. schema-valid but inconsistent heatmap artifacts
# ------------------------------------------------------------------------------------------------
INCONSISTENT = {
    "ragged": (lambda data: data["values"][1].pop(), "rows have different lengths"),
    "labels": (lambda data: data["rows"].append("row 2"), "3 row and 3 column labels for 2 x 3 values"),
}


@pytest.mark.parametrize("kind", list(INCONSISTENT))
def test_inconsistent_artifact_is_a_store_problem(tmp_path: Path, kind: str) -> None:
    change, reason = INCONSISTENT[kind]
    src = make_project(tmp_path / "src", {"page": heatmap_page(GOOD_BODY)})
    assert run_sphinx(src).summary == (1, 0, 0)
    path = only_artifact_path(src)

    rewrite_json(path, lambda doc: change(doc["data"]))
    cached = run_sphinx(src, confoverrides=CACHE_ONLY)  # incremental: the replaced file re-reads the page
    assert_no_crash(cached)
    assert_one_located(cached, src, "page", "store", path.name, reason)
    (box,) = error_boxes(cached.html("page"))
    assert reason in box
    assert "<svg" not in cached.html("page")

    auto = run_sphinx(src)
    assert_no_crash(auto)
    assert_one_located(auto, src, "page", "store", reason, "executing again")
    assert auto.summary == (1, 0, 0)
    assert "<svg" in auto.html("page") and error_boxes(auto.html("page")) == []
    assert json.loads(path.read_text("utf-8"))["data"]["values"] == [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]


# ------------------------------------------------------------------------------------------------
# 9. inline code gets a runnable run.py
# ------------------------------------------------------------------------------------------------
FUNCTION_BODY = """\
import numpy as np


def make(n, seed):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(n, n + 1))
"""


@pytest.mark.parametrize("style", ["function", "result"])
def test_inline_code_downloads_reproduce(tmp_path: Path, style: str) -> None:
    page = (heatmap_page(FUNCTION_BODY, ":function: make\n:inputs: {n: 3}\n:seed: 5") if style == "function"
            else heatmap_page(GOOD_BODY))
    src = make_project(tmp_path / "src", {"page": page})
    built = run_sphinx(src)
    assert_no_crash(built)
    assert built.tensorviz_warnings() == []
    content_hash = only_artifact_path(src).stem
    folder = built.outdir / "_tensorviz" / content_hash[:16]
    assert (folder / "lesson_code.py").is_file() and (folder / "run.py").is_file()
    body = FUNCTION_BODY if style == "function" else GOOD_BODY
    assert (folder / "lesson_code.py").read_text("utf-8").strip() == body.strip()
    assert "lesson_code.py" in built.html("page")

    copy = shutil.copytree(folder, tmp_path / "reproduce")
    done = subprocess.run([sys.executable, "run.py", "--check"], cwd=copy, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["arrays"]["values"]["dtype"] == "float64"  # NumPy's default, recorded with the values
    assert report["arrays"]["values"]["ok"] and report["arrays"]["values"]["rtol"] < 1e-12


# ------------------------------------------------------------------------------------------------
# 10, 11. checks returning numpy bools or value None; NaN model output (PyTorch)
# ------------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def torch_site(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Build]:
    pytest.importorskip("torch")
    src = make_project(tmp_path_factory.mktemp("torch") / "src", {
        "checks": graph_page("Small", ":checks: check_numpy_bool, check_dict_without_value"),
        "nan": graph_page("Broken"),
    }, {"models/m.py": TORCH_MODEL})
    return src, run_sphinx(src)


def test_numpy_bool_and_valueless_checks_pass(torch_site: tuple[Path, Build]) -> None:
    src, built = torch_site
    assert_no_crash(built)
    assert tv_records(built, src, "checks") == [], built.warnings
    (artifact,) = [a for a in load_artifacts(src).values() if a["request"]["function"] == "Small"]
    assert [(c["name"], c["passed"], c["value"]) for c in artifact["checks"]] == [
        ("check_numpy_bool", True, None), ("check_dict_without_value", True, None)]
    html = built.html("checks")
    assert "checks 2/2 passed" in html and "tv-check-failed" not in html


def test_nan_model_output_is_a_bad_result(torch_site: tuple[Path, Build]) -> None:
    src, built = torch_site
    assert_one_located(built, src, "nan", "bad_result", "NaN", directive="tv-graph")
    assert built.summary == (2, 0, 1)
    (box,) = error_boxes(built.html("nan"))
    assert "NaN" in box


# ------------------------------------------------------------------------------------------------
# 12. a missing tensorviz_python
# ------------------------------------------------------------------------------------------------
def test_missing_worker_python_is_a_crash_warning(tmp_path: Path) -> None:
    src = make_project(tmp_path / "src", {"page": heatmap_page(GOOD_BODY)})
    built = run_sphinx(src, confoverrides={"tensorviz_python": "/nonexistent/python"})
    assert_no_crash(built)
    assert built.summary == (1, 0, 1)
    assert_one_located(built, src, "page", "crash", "tensorviz_python", "/nonexistent/python")
    assert len(error_boxes(built.html("page"))) == 1


# ------------------------------------------------------------------------------------------------
# 14. a replaced artifact re-renders its page (incremental, no -E)
# ------------------------------------------------------------------------------------------------
def footer_stamp(page_html: str) -> str:
    match = re.search(r"(\d{4}-\d\d-\d\d \d\d:\d\d UTC)", page_html)
    assert match, "no provenance date on the page"
    return match.group(1)


def test_rewritten_artifact_rerenders_the_page(tmp_path: Path) -> None:
    src = make_project(tmp_path / "src", {"page": heatmap_page(GOOD_BODY)})
    first = run_sphinx(src)
    assert first.summary == (1, 0, 0)
    path = only_artifact_path(src)

    forced = run_sphinx(src, confoverrides={"tensorviz_execution_mode": "force"})
    assert_no_crash(forced)
    assert forced.summary == (1, 0, 0)
    stored = json.loads(path.read_text("utf-8"))["generatedAt"]
    assert footer_stamp(forced.html("page")) == stored[:10] + " " + stored[11:16] + " UTC"

    def replace(doc: dict[str, Any]) -> None:
        doc["generatedAt"] = "2020-01-02T03:04:05+00:00"
        doc["data"]["values"][1][2] = 97.0

    rewrite_json(path, replace)
    third = run_sphinx(src)
    assert_no_crash(third)
    assert third.summary == (0, 1, 0)
    html = third.html("page")
    assert footer_stamp(html) == "2020-01-02 03:04 UTC"
    assert "row 1, column 2: 97</title>" in html, "the SVG was drawn again from the new data"


def test_replaced_artifact_with_the_same_timestamp_never_reuses_a_stale_svg(tmp_path: Path) -> None:
    src = make_project(tmp_path / "src", {"page": heatmap_page(GOOD_BODY)})
    assert run_sphinx(src).summary == (1, 0, 0)
    rewrite_json(only_artifact_path(src), lambda doc: doc["data"]["values"][1].__setitem__(2, 97.0))
    again = run_sphinx(src)
    assert_no_crash(again)
    html = again.html("page")
    assert "<td><p>97</p></td>" in html  # the page was re-rendered from the new data
    assert "row 1, column 2: 97</title>" in html


# ------------------------------------------------------------------------------------------------
# 15. the summary line
# ------------------------------------------------------------------------------------------------
def test_summary_line_counts(tmp_path: Path) -> None:
    pages = {"good": heatmap_page(GOOD_BODY), "bad": heatmap_page(RAISING_BODY)}
    src = make_project(tmp_path / "src", pages)
    first = run_sphinx(src)
    assert_no_crash(first)
    assert status_summary(first) == "tensorviz: 2 executed, 0 cached, 1 failed"
    second = run_sphinx(src)
    assert_no_crash(second)
    assert status_summary(second) == "tensorviz: 0 executed, 1 cached, 1 failed"

    empty = make_project(tmp_path / "empty", pages)
    cache_only = run_sphinx(empty, confoverrides=CACHE_ONLY)
    assert_no_crash(cache_only)
    assert status_summary(cache_only) == "tensorviz: 0 executed, 0 cached, 0 failed, 2 not computed"
    for page in pages:
        assert_one_located(cache_only, empty, page, "cache_miss")
    assert not store_dir(empty).exists() or artifact_files(empty) == {}
