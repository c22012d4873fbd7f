"""Everything that can go wrong with a ``tv-heatmap``: each is a located warning, an error box,
a finished build, a clean store, and a failed build under ``-W``.

The root ``tests/roots/test-failures`` has one page per failure; its lesson code is tiny
(NumPy only) and the timeout is 3 s, so the whole module builds in a few seconds.
"""

from __future__ import annotations

import html as html_lib
import json
import re
import shutil
from pathlib import Path

import pytest

from conftest import (
    Build,
    artifact_files,
    copy_root,
    directive_lines,
    run_sphinx,
    store_dir,
    warning_records,
    write,
)
from sphinx_tensorviz.store.artifacts import schema_errors

pytestmark = pytest.mark.sphinx

TIMEOUT = 3.0
CONF = {"tensorviz_timeout": TIMEOUT}

#: page -> (warning subtype, text that the warning and the error box must contain)
CASES: dict[str, tuple[str, str]] = {
    "raises": ("execution", "ValueError: lesson exploded on purpose"),
    "sleeps": ("timeout", "tensorviz_timeout"),
    "exits": ("crash", "status 1"),
    "string": ("bad_result", "str"),
    "nan": ("bad_result", "NaN"),
    "cube": ("bad_result", "(2, 3, 4)"),
    "outside": ("source", "../outside.py"),
    "missing": ("source", "models/does_not_exist.py"),
    "badseed": ("option", ":seed:"),
    "both": ("option", "not both"),
    "notbool": ("bad_result", "check 'looks_fine' returned 'no'"),
    "nocheck": ("bad_result", "no check function named 'rows_sum_to_one' in models/fine.py"),
    "bigseed": ("option", ":seed: 4294967296"),
}
EXECUTED = {page for page, (subtype, _) in CASES.items() if subtype not in ("source", "option")}


@pytest.fixture(scope="module")
def failed_site(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Build]:
    base = tmp_path_factory.mktemp("failures")
    # a real file just outside the project, so ':source: ../outside.py' is refused for where it is
    (base / "outside.py").write_text("def compute():\n    return [[1.0, 2.0]]\n", "utf-8")
    src = copy_root("failures", base / "src")
    return src, run_sphinx(src, confoverrides=CONF)


def records_for(built: Build, srcdir: Path, page: str) -> list[str]:
    path = str(srcdir / f"{page}.md")
    return [r for r in warning_records(built.warnings) if r.startswith(path + ":")]


def error_boxes(html: str) -> list[str]:
    """Text of every ``tv-error`` admonition (HTML unescaped, tags dropped)."""
    boxes = re.findall(r'<div class="[^"]*\btv-error\b[^"]*">(.*?)</div>', html, re.S)
    return [html_lib.unescape(re.sub(r"<[^>]+>", "", box)) for box in boxes]


def test_build_finishes_and_counts_every_failure(failed_site: tuple[Path, Build]) -> None:
    src, built = failed_site
    assert built.statuscode == 0
    assert built.summary == (len(EXECUTED), 0, len(EXECUTED))
    for page in CASES:
        assert (built.outdir / f"{page}.html").is_file(), page


@pytest.mark.parametrize("page", list(CASES))
def test_located_warning(failed_site: tuple[Path, Build], page: str) -> None:
    src, built = failed_site
    subtype, text = CASES[page]
    records = records_for(built, src, page)
    assert len(records) == 1, f"expected one warning for {page}, got {records}"
    (line,) = directive_lines(src / f"{page}.md")
    assert records[0].startswith(f"{src / page}.md:{line}: WARNING:")
    assert records[0].rstrip().endswith(f"[tensorviz.{subtype}]")
    assert text in records[0]


@pytest.mark.parametrize("page", list(CASES))
def test_error_box_on_the_page(failed_site: tuple[Path, Build], page: str) -> None:
    _, built = failed_site
    html = built.html(page)
    boxes = error_boxes(html)
    assert len(boxes) == 1
    assert CASES[page][1] in boxes[0]
    assert "<svg" not in html


def test_raise_shows_the_lesson_traceback(failed_site: tuple[Path, Build]) -> None:
    src, built = failed_site
    (record,) = records_for(built, src, "raises")
    assert re.search(r'File ".*raises\.md.*", line \d+, in compute', record)
    assert re.search(r'File ".*raises\.md.*", line \d+, in helper_that_fails', record)
    assert "sphinx_tensorviz" not in record, "the worker's own frames should be hidden"
    html = built.html("raises")
    pre = re.findall(r'<pre>(.*?)</pre>', html, re.S)
    traceback = html_lib.unescape(re.sub(r"<[^>]+>", "", "".join(pre)))
    assert "in helper_that_fails" in traceback
    assert "ValueError: lesson exploded on purpose" in traceback


def test_store_holds_only_failure_records(failed_site: tuple[Path, Build]) -> None:
    src, _ = failed_site
    root = store_dir(src)
    assert not [p for p in root.rglob("*") if p.name.endswith(".tmp")]
    for path in root.glob("*.json"):  # nothing was stored, and nothing half-written
        assert schema_errors(json.loads(path.read_text("utf-8"))) == [], path
    assert artifact_files(src) == {}
    records = {p.stem: json.loads(p.read_text("utf-8")) for p in (root / "failures").glob("*.json")}
    assert len(records) == len(EXECUTED)
    for content_hash, record in records.items():
        assert record["contentHash"] == content_hash
    subtypes = sorted(r["subtype"] for r in records.values())
    assert subtypes == sorted(CASES[p][0] for p in EXECUTED)
    (raised,) = [r for r in records.values() if r["subtype"] == "execution"]
    assert raised["stdout"] == "about to fail\n"
    (timed_out,) = [r for r in records.values() if r["subtype"] == "timeout"]
    assert timed_out["timeout"] == TIMEOUT
    ignore = (root / "failures" / ".gitignore").read_text("utf-8").splitlines()
    assert "*" in ignore


def test_second_build_executes_nothing_but_still_warns(failed_site: tuple[Path, Build]) -> None:
    src, _ = failed_site
    again = run_sphinx(src, confoverrides=CONF)
    assert again.statuscode == 0
    assert again.summary == (0, 0, len(EXECUTED))
    for page in EXECUTED:
        records = records_for(again, src, page)
        assert len(records) == 1, page
        (line,) = directive_lines(src / f"{page}.md")
        assert records[0].startswith(f"{src / page}.md:{line}: WARNING:")
        assert records[0].rstrip().endswith(f"[tensorviz.{CASES[page][0]}]")
        assert len(error_boxes(again.html(page))) == 1


# -- one page at a time: -W fails the build ----------------------------------------------


def single_page(failed_src: Path, page: str, dest: Path, *, with_store: bool = True) -> Path:
    """A project with only ``page`` (and the failure records the full build made)."""
    dest.mkdir(parents=True)
    shutil.copy2(failed_src / "conf.py", dest / "conf.py")
    shutil.copy2(failed_src / f"{page}.md", dest / f"{page}.md")
    shutil.copytree(failed_src / "models", dest / "models")
    (dest / "index.md").write_text(f"# Only {page}\n\n```{{toctree}}\n{page}\n```\n", "utf-8")
    if with_store:
        shutil.copytree(store_dir(failed_src), store_dir(dest))
    return dest


@pytest.mark.parametrize("page", list(CASES))
def test_warning_is_error_fails_the_build(failed_site: tuple[Path, Build], tmp_path: Path, build,  # noqa: ANN001
                                          page: str) -> None:
    src, _ = failed_site
    dest = single_page(src, page, tmp_path / "src")
    built = build(dest, confoverrides=CONF, warningiserror=True)
    assert built.statuscode != 0
    if page in EXECUTED:
        assert built.summary == (0, 0, 1), "the recorded failure is not executed again"
    assert (built.outdir / f"{page}.html").is_file(), "the build still finishes"
    (record,) = [r for r in warning_records(built.warnings) if "[tensorviz." in r]
    assert record.rstrip().endswith(f"[tensorviz.{CASES[page][0]}]")


def test_clean_project_passes_under_warning_is_error(tmp_path: Path, build) -> None:  # noqa: ANN001
    src = copy_root("rebuild", tmp_path / "src")
    built = build(src, warningiserror=True)
    assert built.statuscode == 0
    assert built.summary == (2, 0, 0)


def test_creating_a_missing_source_later_executes_it(failed_site: tuple[Path, Build], tmp_path: Path,
                                                     build) -> None:  # noqa: ANN001
    src, _ = failed_site
    dest = single_page(src, "missing", tmp_path / "src", with_store=False)
    first = build(dest)
    assert any(r.rstrip().endswith("[tensorviz.source]") for r in warning_records(first.warnings))
    write(dest / "models" / "does_not_exist.py", "import numpy as np\n\n\ndef compute():\n    return np.eye(2)\n")
    second = build(dest)
    assert "tensorviz:" in second.status and second.summary == (1, 0, 0)
    assert "<svg" in second.html("missing")


# -- configuration ------------------------------------------------------------------------


def test_invalid_execution_mode_warns_and_falls_back(tmp_path: Path, build) -> None:  # noqa: ANN001
    src = copy_root("rebuild", tmp_path / "src")
    built = build(src, confoverrides={"tensorviz_execution_mode": "sometimes", "tensorviz_workers": 1})
    (record,) = [r for r in warning_records(built.warnings) if "[tensorviz." in r]
    assert "tensorviz_execution_mode" in record and record.rstrip().endswith("[tensorviz.config]")
    assert built.app.config.tensorviz_execution_mode == "auto"
    assert built.summary == (2, 0, 0)


def test_timeout_can_be_set_from_the_command_line(tmp_path: Path, build) -> None:  # noqa: ANN001
    src = copy_root("rebuild", tmp_path / "src")
    # -D passes strings; confoverrides with a string goes through the same conversion
    built = build(src, confoverrides={"tensorviz_timeout": "30", "tensorviz_execution_mode": "off"})
    assert built.warnings.strip() == ""
    assert float(built.app.config.tensorviz_timeout) == 30.0


def test_no_page_or_failure_record_names_the_project_folder(failed_site: tuple[Path, Build]) -> None:
    """Error boxes are published and failure records committed: paths in them are the project's own
    (``raises.md:5``), never the build machine's folders."""
    src, built = failed_site
    folders = {str(src), str(src.resolve())}
    records = [p.read_text("utf-8") for p in (store_dir(src) / "failures").glob("*.json")]
    assert len(records) == len(EXECUTED)
    for text in [*records, *(built.html(page) for page in CASES)]:
        assert not [folder for folder in folders if folder in text], text[:3000]
    (record,) = records_for(built, src, "raises")
    (line,) = directive_lines(src / "raises.md")
    assert f'File "raises.md:{line}", line' in record and "raises.md:" in record.split("WARNING:")[1].split("\n")[0]
