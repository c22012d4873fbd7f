"""Shared checks for the hostile-input tests (tests/test_hostile_*.py).

Every hostile case is a real build of a small project written into a temporary folder,
with real worker processes. After each build the tests check the same four things: the
located ``[tensorviz.<subtype>]`` warning, the build's exit status, that the store holds
only valid artifacts, and that nothing is left behind (no process the lesson started, no
``tensorviz-job-*`` temp folder of this process), plus a bound on the page size.
"""

from __future__ import annotations

import os
import re
import tempfile
import time
from pathlib import Path

from conftest import Build, directive_lines, store_dir, warning_records
from sphinx_tensorviz.execute.processes import TEMP_PREFIX
from sphinx_tensorviz.store.artifacts import ArtifactStore
from test_hardening import CONF  # the same small project settings as the hardening pins


def make_project(dest: Path, pages: dict[str, str], conf_extra: str = "",
                 files: dict[str, str] | None = None) -> Path:
    """``conf.py`` (``CONF`` + ``conf_extra``), an index with a toctree of ``pages``, and ``files``."""
    dest.mkdir(parents=True)
    (dest / "conf.py").write_text(CONF + conf_extra, "utf-8")
    (dest / "index.md").write_text("# Hostile\n\n```{toctree}\n" + "\n".join(pages) + "\n```\n", "utf-8")
    for name, text in pages.items():
        (dest / f"{name}.md").write_text(text, "utf-8")
    for name, text in (files or {}).items():
        (dest / name).parent.mkdir(parents=True, exist_ok=True)
        (dest / name).write_text(text, "utf-8")
    return dest


def heatmap_page(body: str, title: str = "A figure", options: str = "") -> str:
    opts = options.strip() + "\n" if options.strip() else ""
    return f"# {title}\n\nProse.\n\n```{{tv-heatmap}}\n:title: {title}\n{opts}\n{body.strip()}\n```\n"


def located(built: Build, src: Path, page: str, subtype: str, *texts: str, directive: str = "tv-heatmap") -> str:
    """The one ``[tensorviz.<subtype>]`` warning located at ``page``'s directive line, holding ``texts``."""
    line = directive_lines(src / f"{page}.md", directive)[0]
    prefix = f"{src / page}.md:{line}: WARNING:"
    found = [r for r in warning_records(built.warnings)
             if r.startswith(prefix) and r.rstrip().endswith(f"[tensorviz.{subtype}]")]
    assert len(found) == 1, f"expected one tensorviz.{subtype} warning at {prefix}\n{built.warnings}"
    for text in texts:
        assert text in found[0], (text, found[0])
    return found[0]


def no_warnings_for(built: Build, src: Path, page: str) -> None:
    records = [r for r in warning_records(built.warnings) if r.startswith(f"{src / page}.md:")]
    assert not records, records


def assert_store_valid(src: Path) -> None:
    """Every top-level file of the store is a valid artifact named by its hash; nothing else is there."""
    root = store_dir(src)
    if not root.is_dir():
        return
    store = ArtifactStore(root)
    for path in root.iterdir():
        if path.name == "failures":
            continue
        assert re.fullmatch(r"[0-9a-f]{64}\.json", path.name), f"stray file in the store: {path.name}"
        found = store.read_artifact(path.stem)
        assert isinstance(found, dict), (path.name, found)
        assert path.stat().st_mode & 0o777 == 0o644, oct(path.stat().st_mode)


def own_job_dirs(pid: int | None = None) -> list[Path]:
    """``tensorviz-job-<pid>-*`` folders of the build process ``pid`` (default: this test process)."""
    prefix = f"{TEMP_PREFIX}{pid or os.getpid()}-"
    return sorted(p for p in Path(tempfile.gettempdir()).iterdir() if p.name.startswith(prefix))


def processes_matching(text: str) -> list[int]:
    """Live (non-zombie) processes whose command line contains ``text``."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode("utf-8", "replace")
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if text in cmdline and state != "Z":
            found.append(int(entry.name))
    return found


def wait_until_gone(text: str, seconds: float = 10.0) -> list[int]:
    """Processes matching ``text`` still alive after up to ``seconds`` (an empty list when all are gone)."""
    deadline = time.monotonic() + seconds
    while (left := processes_matching(text)) and time.monotonic() < deadline:
        time.sleep(0.1)
    return left


def nothing_left_behind(*markers: str) -> None:
    """No process with any of ``markers`` in its command line, and no job folder of this process."""
    for marker in markers:
        assert not processes_matching(marker), f"processes left running: {marker}"
    assert not own_job_dirs(), own_job_dirs()


def kill_leftovers(*markers: str) -> None:
    """Test teardown: never leave a stray process on the machine, even when a test failed."""
    import signal

    for marker in markers:
        for pid in processes_matching(marker):
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass


def page_size(built: Build, page: str) -> int:
    return (built.outdir / f"{page}.html").stat().st_size
