"""The ``tensorviz`` command, run for real against copies of the course and of ``roots/test-cli``.

Commands run in-process through :func:`sphinx_tensorviz.cli.main` (one run through
``python -m sphinx_tensorviz`` checks the module entry point). Every test works on its own
copy in a temporary folder, because the store lives inside the source folder.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from sphinx_tensorviz.cli import SUBCOMMANDS, main

HERE = Path(__file__).resolve().parent
LESSONS = HERE.parent / "lessons"
#: the committed artifact of transformers-03's heatmap (looked up, so editing the lesson keeps the tests true)
T03 = next(p.stem for p in (LESSONS / "tensorviz_artifacts").glob("*.json")
           if json.loads(p.read_text())["lessonId"] == "transformers-03")
LLAMA = next(p.stem for p in (LESSONS / "tensorviz_artifacts").glob("*.json")
             if json.loads(p.read_text())["lessonId"] == "llama-decoder")
CLI_ROOT = HERE / "roots" / "test-cli"
STORE = "tensorviz_artifacts"


def copy_project(source: Path, dest: Path, *, with_store: bool) -> Path:
    ignore = ["_build", "__pycache__", "failures"] + ([] if with_store else [STORE])
    shutil.copytree(source, dest, ignore=shutil.ignore_patterns(*ignore))
    return dest


def tv(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    """Run ``tensorviz ARGS``; returns (exit status, stdout, stderr)."""
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


def status_json(capsys: pytest.CaptureFixture[str], srcdir: Path) -> dict:
    code, out, _ = tv(capsys, "status", srcdir, "--json")
    assert code == 0
    return json.loads(out)


def artifacts(srcdir: Path) -> set[str]:
    return {p.stem for p in (srcdir / STORE).glob("*.json")}


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text("utf-8")
    assert text.count(old) == 1, f"{old!r} occurs {text.count(old)} times in {path}"
    time.sleep(0.05)
    path.write_text(text.replace(old, new), "utf-8")


# -- the course, with its committed artifacts -------------------------------------------

@pytest.fixture(scope="module")
def course(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return copy_project(LESSONS, tmp_path_factory.mktemp("cli") / "lessons", with_store=True)


@pytest.mark.sphinx
def test_course_status_everything_cached(course: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = tv(capsys, "status", course, "--check")
    assert code == 0, out
    lines = out.strip().splitlines()
    # the course sweeps (kv-cache.md): its points are told apart in a "point" column
    assert lines[0].split() == ["document:line", "point", "directive", "state", "hash", "why"]
    assert re.search(r"^kv-cache\.md:\d+ +tokens=3 +tv-heatmap +cached", out, re.M)
    assert re.search(r"^transformers-03\.md:\d+ +tv-heatmap +cached +" + T03[:12], out, re.M)
    assert re.search(r"^llama-decoder\.md:\d+ +tv-graph +cached", out, re.M)
    # after the summary, one line per training names the figures that use it (induction-heads.md)
    summary = next(i for i, line in enumerate(lines) if re.match(r"\d+ directives: ", line))
    (uses,) = lines[summary + 1:]
    assert re.fullmatch(r"\d+ figures use induction \(induction-heads\.md:\d+\)", uses), uses
    total = summary - 1
    assert lines[summary] == f"{total} directives: {total} cached, 0 stale, 0 missing, 0 failed"
    report = status_json(capsys, course)
    assert {r["state"] for r in report["directives"]} == {"cached"}
    assert report["summary"]["cached"] == total


@pytest.mark.sphinx
def test_course_gc_finds_nothing(course: Path, capsys: pytest.CaptureFixture[str]) -> None:
    before = artifacts(course)
    code, out, _ = tv(capsys, "gc", course, "--delete")
    assert code == 0
    assert "deleted 0 unused artifact(s)" in out
    assert artifacts(course) == before


@pytest.mark.sphinx
def test_course_show_prefix(course: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = tv(capsys, "show", T03[:8], course)
    assert code == 0
    assert re.search(r"^lesson +transformers-03$", out, re.M)
    assert re.search(r"^directive +tv-heatmap \(jax\)$", out, re.M)
    assert "heatmap of output minus input, 4 x 8" in out
    assert "Block shape: (4, 8)" in out  # the recorded stdout
    code, out, _ = tv(capsys, "show", LLAMA[:10], course)
    assert code == 0 and "checks: 4/4 passed" in out and "tv-graph (torch)" in out
    code, out, _ = tv(capsys, "show", T03[:8], course, "--json")
    assert json.loads(out)["lessonId"] == "transformers-03"


@pytest.mark.sphinx
def test_show_bad_prefixes(course: Path, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, _, err = tv(capsys, "show", T03[:4], course)
    assert code == 2 and "at least 6 hex digits" in err
    code, _, err = tv(capsys, "show", "ffffff", course)
    assert code == 2 and "no artifact" in err
    store = copy_project(course, tmp_path / "twins", with_store=True) / STORE
    original = store / f"{T03}.json"
    shutil.copy(original, store / (T03[:8] + "0" * 56 + ".json"))
    code, _, err = tv(capsys, "show", T03[:8], store.parent)
    assert code == 2 and "ambiguous" in err


@pytest.mark.sphinx
def test_course_verify_transformers_heatmap(course: Path, capsys: pytest.CaptureFixture[str]) -> None:
    before = {p.name: p.read_bytes() for p in (course / STORE).glob("*.json")}
    code, out, _ = tv(capsys, "verify", course, "--doc", "transformers-03")
    assert code == 0, out
    assert re.search(r"^ok +transformers-03\.md:\d+ tv-heatmap \[" + T03[:12] + r"\]: compared 32 values;", out, re.M)
    assert re.search(r"^ +32 float32 values in data\.values within rtol=6\.1e-05, atol=\S+$", out, re.M), out
    assert out.strip().endswith("1 of 1 artifact reproduced")
    assert {p.name: p.read_bytes() for p in (course / STORE).glob("*.json")} == before  # store untouched


@pytest.mark.sphinx
def test_verify_unknown_doc_is_a_usage_error(course: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = tv(capsys, "verify", course, "--doc", "no-such-page")
    assert code == 2 and "no document named no-such-page" in err


# -- a project of our own: edits, orphans, execution -------------------------------------

@pytest.fixture
def project(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    """``roots/test-cli`` copied and executed once (both heatmaps cached)."""
    srcdir = copy_project(CLI_ROOT, tmp_path / "cli", with_store=False)
    code, out, _ = tv(capsys, "execute", srcdir)
    assert code == 0, out
    assert out.startswith("2 executed, 0 already cached, 0 failed")
    return srcdir


@pytest.mark.sphinx
def test_fresh_project_is_missing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    srcdir = copy_project(CLI_ROOT, tmp_path / "cli", with_store=False)
    code, out, _ = tv(capsys, "status", srcdir, "--check")
    assert code == 1
    assert out.count("never executed") == 2
    assert out.strip().endswith("2 directives: 0 cached, 0 stale, 2 missing, 0 failed")


@pytest.mark.sphinx
def test_status_names_the_changed_code(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    edit(project / "models" / "grid.py", "* factor()", "* factor() + 1.0")
    records = status_json(capsys, project)["directives"]
    assert [(r["line"], r["state"]) for r in records] == [(3, "stale"), (12, "cached")]
    assert records[0]["why"] == ["code changed: models/grid.py"]
    code, out, _ = tv(capsys, "status", project)
    assert code == 0
    assert re.search(r"^index\.md:3 +tv-heatmap +stale +[0-9a-f]{12} +code changed: models/grid\.py$", out, re.M)


@pytest.mark.sphinx
def test_status_names_the_changed_helper(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    edit(project / "helpers" / "scale.py", "2.0", "2.5")
    records = status_json(capsys, project)["directives"]
    assert records[0]["state"] == "stale"
    assert records[0]["why"] == ["an imported module changed: helpers/scale.py"]


@pytest.mark.sphinx
def test_status_names_inline_seed_and_option_changes(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    page = project / "index.md"
    edit(page, ":seed: 3", ":seed: 4")
    edit(page, ":unit: ramp", ":unit: ramp\n:diverging:")
    edit(page, "reshape(2, 3)", "reshape(3, 2)")
    first, second = status_json(capsys, project)["directives"]
    assert first["why"] == ["seed changed (3 -> 4)"]
    assert second["why"] == ["code changed: the inline code", "options changed: diverging"]


@pytest.mark.sphinx
def test_execute_runs_exactly_the_missing_one(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    before = artifacts(project)
    edit(project / "helpers" / "scale.py", "2.0", "4.0")
    code, out, err = tv(capsys, "execute", project, "-j", "1")
    assert code == 0
    assert out.startswith("1 executed, 1 already cached, 0 failed")
    assert "tensorviz: 1 executed, 1 cached, 0 failed" in err  # the build's own summary line
    after = artifacts(project)
    assert len(after - before) == 1 and before <= after
    code, out, _ = tv(capsys, "execute", project)
    assert out.startswith("0 executed, 2 already cached")


@pytest.mark.sphinx
def test_execute_reports_a_failure(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    edit(project / "models" / "grid.py", "rng = np", "raise RuntimeError('broken on purpose')\n    rng = np")
    code, out, _ = tv(capsys, "execute", project)
    assert code == 1
    assert re.search(r"^failed: index\.md:3 \[([0-9a-f]{12})\] execution: models/grid\.py:\d+ in grid\(\): "
                     r"RuntimeError: broken on purpose", out, re.M)
    failed_hash = re.search(r"\[([0-9a-f]{12})\]", out).group(1)
    records = status_json(capsys, project)["directives"]
    assert records[0]["state"] == "failed" and "broken on purpose" in records[0]["why"][0]
    code, out, _ = tv(capsys, "show", failed_hash, project)
    assert code == 0 and "failure record" in out and "RuntimeError: broken on purpose" in out


@pytest.mark.sphinx
def test_gc_deletes_an_orphan_only_when_asked(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    orphan = f"{T03}.json"
    shutil.copy(LESSONS / STORE / orphan, project / STORE / orphan)
    used = artifacts(project) - {orphan[:-5]}
    code, out, _ = tv(capsys, "gc", project)
    assert code == 0
    assert re.search(r"^" + T03[:12] + r" +transformers-03 +tv-heatmap", out, re.M)
    assert "1 unused artifact(s)" in out
    assert (project / STORE / orphan).is_file()
    code, out, _ = tv(capsys, "gc", project, "--delete")
    assert code == 0 and "deleted 1 unused artifact(s)" in out
    assert artifacts(project) == used
    assert {r["state"] for r in status_json(capsys, project)["directives"]} == {"cached"}


@pytest.mark.sphinx
def test_verify_detects_a_changed_value(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    records = status_json(capsys, project)["directives"]
    path = project / STORE / f"{records[1]['contentHash']}.json"
    artifact = json.loads(path.read_text("utf-8"))
    artifact["data"]["values"][1][2] += 1e-3
    path.write_text(json.dumps(artifact, indent=2) + "\n", "utf-8")
    code, out, _ = tv(capsys, "verify", project)
    assert code == 1
    assert "MISMATCH  index.md:12 tv-heatmap" in out
    assert "largest difference 0.001 at data.values[1][2]" in out
    assert "1 of 2 artifacts reproduced, 1 did not" in out
    code, out, _ = tv(capsys, "verify", project, "--atol", "0.01")
    assert code == 0, out


# -- usage --------------------------------------------------------------------------------

@pytest.mark.parametrize("command", [m.__name__.rsplit(".", 1)[-1] for m in SUBCOMMANDS])
def test_help_for_each_subcommand(command: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = tv(capsys, command, "--help")
    assert code == 0
    assert out.startswith(f"usage: tensorviz {command}")


def test_usage_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = tv(capsys)
    assert code == 2 and "usage: tensorviz" in err
    code, _, err = tv(capsys, "status", tmp_path)
    assert code == 2 and "no conf.py" in err
    code, _, err = tv(capsys, "nonsense")
    assert code == 2 and "invalid choice" in err


def test_module_entry_point() -> None:
    done = subprocess.run([sys.executable, "-m", "sphinx_tensorviz", "--help"], capture_output=True, text=True,
                          check=False)
    assert done.returncode == 0
    for command in ("status", "execute", "verify", "gc", "show"):
        assert command in done.stdout


# -- what a new author's project shows: sweeps, a multi-line failure, a page with a bad option ------

AUTHOR_PAGE = '''# An author's page

```{tv-heatmap}
:source: models/grid.py
:function: grid
:sweep: rows=[1, 2]
:inputs: {cols: 3}
```

```{tv-heatmap}
:seed: minus
:title: A bad option, warned about when the project is read
result = 1
```

```{tv-heatmap}
:title: A failure whose message has three lines

raise ValueError("first line\\nsecond line\\nthird line")
```
'''


@pytest.fixture
def author(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    srcdir = copy_project(CLI_ROOT, tmp_path / "cli", with_store=False)
    (srcdir / "author.md").write_text(AUTHOR_PAGE, "utf-8")
    code, out, _ = tv(capsys, "execute", srcdir)
    assert code == 1 and "4 executed" in out and "1 failed" in out, out
    return srcdir


@pytest.mark.sphinx
def test_status_tells_the_points_of_a_sweep_apart(author: Path, capsys: pytest.CaptureFixture[str]) -> None:
    records = [r for r in status_json(capsys, author)["directives"] if r["location"] == "author.md:3"]
    assert sorted(json.dumps(r["point"]) for r in records) == ['{"rows": 1}', '{"rows": 2}']
    code, out, _ = tv(capsys, "status", author)
    rows = [line for line in out.splitlines() if line.startswith("author.md:3 ")]
    assert len(rows) == 2 and len(set(rows)) == 2, out
    assert re.search(r"^author\.md:3 +rows=1 +tv-heatmap +cached", out, re.M), out
    assert re.search(r"^author\.md:3 +rows=2 +tv-heatmap +cached", out, re.M), out
    assert re.search(r"^index\.md:3 {2,}tv-heatmap +cached", out, re.M), out


@pytest.mark.sphinx
def test_a_multi_line_failure_keeps_the_status_table_one_line_a_row(author: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    (failed,) = [r for r in status_json(capsys, author)["directives"] if r["state"] == "failed"]
    assert "second line" in failed["why"][0]  # the JSON keeps the whole message
    code, out, _ = tv(capsys, "status", author)
    lines = out.splitlines()
    assert lines[-1].startswith("5 directives:") and "1 failed" in lines[-1]
    table_rows = lines[1:-1]
    assert len(table_rows) == 5 and all(re.match(r"^\S+\.md:\d+ ", row) for row in table_rows), out
    (row,) = [row for row in table_rows if " failed " in row]
    assert "first line" in row and "second line" not in row
    assert f"tensorviz show {failed['contentHash'][:12]}" in row


@pytest.mark.sphinx
def test_show_prints_the_record_alone(author: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The project's read warnings (the bad :seed:) belong to status, not to show; the record ends
    with a line break, so nothing printed after it joins its last line."""
    code, out, err = tv(capsys, "status", author)
    assert ":seed:" in err
    (failed,) = [r for r in status_json(capsys, author)["directives"] if r["state"] == "failed"]
    code, out, err = tv(capsys, "show", failed["contentHash"][:12], author)
    assert code == 0 and err == "", err
    assert out.endswith("  | third line\n"), out[-200:]


#: what a shared store's artifact may hold in the fields it does not hash: a line separator, a newline
#: and terminal escapes (an OSC that retitles the terminal, a CSI that clears the screen)
HOSTILE_TEXT = "transformers-03\u2028FAKE ROW\nsecond line\x1b]0;pwned\x07\x1b[2J"


@pytest.mark.sphinx
def test_gc_and_show_print_a_hostile_artifacts_fields_as_text(project: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    """An artifact from a shared store (or a cloned course) is listed by ``gc`` and printed by
    ``show``: its unhashed fields reach the terminal. Each stays on its row, and no control
    character (a line break, an escape sequence that retitles or clears the terminal) is written."""
    orphan = project / STORE / f"{T03}.json"
    document = json.loads((LESSONS / STORE / f"{T03}.json").read_text("utf-8"))
    document["lessonId"] = HOSTILE_TEXT
    document["stdout"] = f"fine\n{HOSTILE_TEXT}\n"
    orphan.write_text(json.dumps(document, indent=2) + "\n", "utf-8")
    code, out, _ = tv(capsys, "gc", project)
    assert code == 0, out
    lines = out.splitlines()
    assert len(lines) == 3 and lines[1].startswith(f"{T03[:12]}  transformers-03"), lines  # header, row, total
    code, shown, _ = tv(capsys, "show", T03[:12], project)
    assert code == 0, shown
    (lesson,) = [line for line in shown.splitlines() if line.startswith("lesson ")]
    assert "FAKE ROW" in lesson and "second line" in lesson, lesson
    failure = "ab" * 32
    (project / STORE / "failures" / f"{failure}.json").write_text(json.dumps(
        {"contentHash": failure, "subtype": "execution", "message": HOSTILE_TEXT, "traceback": HOSTILE_TEXT,
         "stdout": HOSTILE_TEXT}), "utf-8")
    code, recorded, _ = tv(capsys, "show", failure[:12], project)
    assert code == 0 and "FAKE ROW" in recorded, recorded
    for text in (out, shown, recorded):
        assert not any(ch in text for ch in ("\x1b", "\x07", "\u2028")), repr(text)
