"""Shared helpers for the Sphinx test-root builds.

Each test root in ``tests/roots/test-<name>/`` is a small Sphinx project. Tests never
build a root in place: :func:`copy_root` copies it into a pytest temporary folder
first, because the artifact store (``tensorviz_artifacts/``) is created inside the
source folder. (``sphinx.testing``'s own ``app`` fixture copies a root into
``sphinx_test_tempdir / <testroot>``, a folder *shared by every test that uses the
same root*; artifacts would then leak from one test into the next, so we pass our
own ``srcdir`` instead.)

Builds go through :func:`run_sphinx`, which creates a ``SphinxTestApp`` (directly, or
through the ``make_app`` fixture), builds, and cleans the docutils/Sphinx global
state right away, so several builds can follow each other in one test without
"node class already registered" warnings.
"""

from __future__ import annotations

import json
import re
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from sphinx.testing.util import SphinxTestApp
from sphinx.util.console import strip_escape_sequences

from sphinx_tensorviz.features import declare_builtin_kinds

declare_builtin_kinds()  # tests that read artifacts without a Sphinx application know the package's kinds

#: ``tiers_util`` fails a test that builds Sphinx without the ``sphinx`` mark (see its docstring)
pytest_plugins = ("sphinx.testing.fixtures", "tiers_util")

ROOTS = Path(__file__).resolve().parent / "roots"
STORE = "tensorviz_artifacts"
SUMMARY = re.compile(r"tensorviz: (\d+) executed, (\d+) cached, (\d+) failed")
HASH_NAME = re.compile(r"^[0-9a-f]{64}\.json$")


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--update-snapshots", action="store_true", default=False,
                     help="rewrite tests/snapshots/ from this build instead of comparing (then review git diff)")


@pytest.fixture(scope="session")
def update_snapshots(request: pytest.FixtureRequest) -> bool:
    """Whether ``--update-snapshots`` was given: the snapshot tests write instead of comparing."""
    return bool(request.config.getoption("--update-snapshots"))


@pytest.fixture(scope="session")
def rootdir() -> Path:
    return ROOTS


def copy_root(name: str, dest: Path, *, with_store: bool = False) -> Path:
    """Copy ``tests/roots/test-<name>`` to ``dest`` without build products, and without its
    artifact store unless ``with_store`` (a root that commits its store, e.g. ``test-snapshot``,
    builds from it in ``cache-only`` mode; its ``failures/`` folder is never copied)."""
    ignored = ["_build", "_build*", "__pycache__"] + (["failures"] if with_store else [STORE])
    shutil.copytree(ROOTS / f"test-{name}", dest, ignore=shutil.ignore_patterns(*ignored))
    return dest


@dataclass
class Build:
    """What one ``app.build()`` produced: the app, its streams (colours stripped) and status code."""

    app: SphinxTestApp
    status: str
    warnings: str
    statuscode: int

    @property
    def summary(self) -> tuple[int, int, int]:
        """(executed, cached, failed) from the ``tensorviz: N executed, ...`` status line."""
        found = SUMMARY.findall(self.status)
        assert len(found) == 1, f"expected one tensorviz summary line in:\n{self.status}"
        return tuple(int(n) for n in found[0])  # type: ignore[return-value]

    @property
    def outdir(self) -> Path:
        return Path(self.app.outdir)

    def html(self, docname: str) -> str:
        return (self.outdir / f"{docname}.html").read_text("utf-8")

    def tensorviz_warnings(self) -> list[str]:
        return [w for w in warning_records(self.warnings) if "[tensorviz." in w]


#: the terminal colour codes Sphinx writes (``ESC [ ... m``)
_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def warning_records(text: str) -> list[str]:
    """Split a warning stream into records (a record may span several lines, e.g. a traceback).

    Colour codes are taken out first: ``sphinx-build`` colours its output whenever ``CI`` is set,
    even into a pipe, and a subprocess build's records must read the same there as here."""
    records: list[str] = []
    for line in _ANSI.sub("", text).splitlines():
        if re.match(r"^(\S.*?:\d+: )?(WARNING|ERROR|CRITICAL):", line) or not records:
            records.append(line)
        else:
            records[-1] += "\n" + line
    return [r for r in records if r.strip()]


def run_sphinx(
    srcdir: Path,
    buildername: str = "html",
    *,
    make: Callable[..., SphinxTestApp] = SphinxTestApp,
    **kwargs: Any,
) -> Build:
    """Build ``srcdir`` once with a fresh ``SphinxTestApp`` and return what it produced."""
    app = make(buildername, srcdir=Path(srcdir), **kwargs)
    try:
        app.build()
    finally:
        app.cleanup()
    return Build(
        app=app,
        status=strip_escape_sequences(app.status.getvalue()),
        warnings=strip_escape_sequences(app.warning.getvalue()),
        statuscode=app.statuscode,
    )


@pytest.fixture
def build(make_app: Callable[..., SphinxTestApp]) -> Callable[..., Build]:
    """``build(srcdir, buildername="html", **make_app_kwargs)`` using ``sphinx.testing``'s ``make_app``."""

    def _build(srcdir: Path, buildername: str = "html", **kwargs: Any) -> Build:
        return run_sphinx(srcdir, buildername, make=make_app, **kwargs)

    return _build


# -- the artifact store -------------------------------------------------------------

def store_dir(srcdir: Path) -> Path:
    return Path(srcdir) / STORE


def artifact_files(srcdir: Path) -> dict[str, Path]:
    """content hash -> artifact file, for every hash-named JSON file at the top of the store."""
    root = store_dir(srcdir)
    if not root.is_dir():
        return {}
    return {p.stem: p for p in sorted(root.glob("*.json")) if HASH_NAME.match(p.name)}


def load_artifacts(srcdir: Path) -> dict[str, dict[str, Any]]:
    return {h: json.loads(p.read_text("utf-8")) for h, p in artifact_files(srcdir).items()}


def snapshot(srcdir: Path) -> dict[str, tuple[bytes, int]]:
    """Every file in the store (relative path -> (bytes, mtime_ns)); temp files included on purpose."""
    root = store_dir(srcdir)
    return {
        p.relative_to(root).as_posix(): (p.read_bytes(), p.stat().st_mtime_ns)
        for p in sorted(root.rglob("*")) if p.is_file() and p.name != ".lock"
    }


def without_generated_at(path: Path) -> bytes:
    """The artifact's bytes with the facts of one run blanked: ``generatedAt`` and ``execution``
    (wall time, peak memory), the only fields allowed to differ between two executions."""
    text = path.read_text("utf-8")
    assert len(re.findall(r'^\s*"generatedAt": ', text, flags=re.M)) == 1, f"{path.name}: not one generatedAt"
    return without_run_facts(text)


def without_run_facts(text: str) -> bytes:
    """``text`` of an artifact with its ``generatedAt`` and ``execution`` values blanked."""
    text = re.sub(r'^(\s*"generatedAt": )"[^"]*"', r'\1"-"', text, flags=re.M)
    return re.sub(r'^(\s*"execution": )\{[^{}]*\}', r'\1"-"', text, flags=re.M).encode("utf-8")


def edit(path: Path, old: str, new: str) -> None:
    """Replace ``old`` (which must occur exactly once) and move the mtime clearly forward."""
    text = path.read_text("utf-8")
    assert text.count(old) == 1, f"{old!r} occurs {text.count(old)} times in {path}"
    write(path, text.replace(old, new))


def write(path: Path, text: str) -> None:
    """Write ``text`` so that Sphinx sees the file as changed since the last build read it.

    Sphinx compares a file's mtime with the time it last read the document; file
    mtimes come from a coarse kernel clock, so an edit right after a build could
    look older than the read. Sleeping a little first keeps mtimes honest (no
    future timestamps, which would make every later build re-read the page).
    """
    time.sleep(0.05)
    path.write_text(text, "utf-8")


def directive_lines(path: Path, name: str = "tv-heatmap") -> list[int]:
    """1-based line numbers of every ``{name}`` fence in a MyST page (derived from the file itself)."""
    return [
        number for number, line in enumerate(Path(path).read_text("utf-8").splitlines(), start=1)
        if re.match(r"^(```+|:::+)\{" + re.escape(name) + r"\}", line)
    ]


@pytest.fixture(autouse=True)
def _isolated_docutils() -> Any:
    """Every test starts and ends with docutils' global directive and role tables as they were.

    Sphinx registers its directives in those module-level tables; an app built in-process by one
    test (the CLI, the docs build) would otherwise make the next test's build warn
    "directive ... is already registered".
    """
    from sphinx.util.docutils import docutils_namespace

    with docutils_namespace():
        yield


@pytest.fixture(autouse=True, scope="module")
def _isolated_docutils_per_module() -> Any:
    """The same for module-scoped fixtures that build in-process."""
    from sphinx.util.docutils import docutils_namespace

    with docutils_namespace():
        yield


@pytest.fixture(scope="module")
def browser() -> Any:
    """Headless Chromium for one test module (the browser tests skip first where it is missing)."""
    from playwright.sync_api import sync_playwright

    from browser_util import launch

    with sync_playwright() as playwright:
        chromium = launch(playwright)
        yield chromium
        chromium.close()
