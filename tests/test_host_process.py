"""The extension leaves the process that hosts Sphinx as it found it (issue 25).

A build runs inside a process the extension does not own: ``sphinx-build``, a test session, a
server that builds several projects. After a build in this process: the application carries no
attribute of the extension's, Sphinx's loggers carry no handler of the extension's, the
interpreter's switch interval and the garbage collector's frozen objects are as they were, and
no thread of the extension's is left. And not only after: while it draws and translates a page's
figures, it neither hangs a handler on those loggers nor changes the builder's page attributes or
the garbage collector (watched by the test extension ``tests/host_probe.py``). (How a command-line
build exits: tests/test_quick_exit.py.)
"""

from __future__ import annotations

import gc
import logging
import sys
import threading
from pathlib import Path

import pytest

import host_probe
from conftest import copy_root, run_sphinx

pytestmark = pytest.mark.sphinx


def _sphinx_handlers() -> dict[str, list[logging.Handler]]:
    """Every handler on ``sphinx`` and the loggers under it (Sphinx's own and anyone else's)."""
    found = {"sphinx": list(logging.getLogger("sphinx").handlers)}
    for name, logger in list(logging.root.manager.loggerDict.items()):
        if isinstance(logger, logging.Logger) and name.startswith("sphinx.") and logger.handlers:
            found[name] = list(logger.handlers)
    return found


def _extension_handlers() -> list[str]:
    return [f"{name}: {type(handler).__module__}.{type(handler).__qualname__}"
            for name, handlers in _sphinx_handlers().items() for handler in handlers
            if type(handler).__module__.startswith("sphinx_tensorviz")]


def test_a_build_leaves_the_application_and_the_process_as_it_found_them(tmp_path: Path) -> None:
    src = copy_root("snapshot", tmp_path / "src", with_store=True)
    interval, frozen = sys.getswitchinterval(), gc.get_freeze_count()
    threads = set(threading.enumerate())
    assert not _extension_handlers()
    # twice, in two output folders: the second build uses what the first kept on the machine
    for outdir in ("first", "second"):
        built = run_sphinx(src, confoverrides={"tensorviz_execution_mode": "cache-only"}, builddir=tmp_path / outdir)
        assert built.statuscode == 0 and not built.tensorviz_warnings()
        assert 'class="tv-figure tv-heatmap"' in (Path(built.app.outdir) / "index.html").read_text("utf-8")  # drawn
        attributes = sorted(name for name in vars(built.app) if "tensorviz" in name)
        assert not attributes, f"the extension set {attributes} on Sphinx's application"
        assert not _extension_handlers(), "a handler of the extension's was left on Sphinx's loggers"
        assert sys.getswitchinterval() == interval
        assert gc.get_freeze_count() == frozen
        left = [t.name for t in set(threading.enumerate()) - threads if t.is_alive()]
        assert not left, f"threads left running after the build: {left}"


def test_while_figures_are_drawn_the_loggers_the_builder_and_the_collector_are_left_alone(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A fresh output folder, then another: the first translates the figures' parts to keep them,
    the second uses them. Every state seen while a page's figures are drawn is the one before."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "user-cache"))
    src = copy_root("snapshot", tmp_path / "src", with_store=True)
    overrides = {"tensorviz_execution_mode": "cache-only",
                 "extensions": ["myst_parser", "sphinx_tensorviz", "host_probe"]}
    for outdir in ("first", "second"):
        built = run_sphinx(src, confoverrides=overrides, builddir=tmp_path / outdir)
        assert built.statuscode == 0 and not built.tensorviz_warnings()
        seen = list(host_probe.SEEN)
        (_, _, configured), *pages = seen
        assert {docname for where, docname, _ in pages if where == "before"} == {"index", "lesson"}
        if outdir == "first":
            assert any(where == "translating" for where, _, _ in pages), "no translation seen while drawing"
        before: dict[str, dict[str, object]] = {}
        changed = set()
        for where, docname, now in pages:
            if where == "before":
                before[docname] = now
                continue
            if now["handlers"] != before[docname]["handlers"]:
                changed.add(f"{where} {docname}: a handler on Sphinx's loggers")
            if now["gc"] != configured["gc"]:
                changed.add(f"{where} {docname}: the garbage collector's frozen objects or settings")
            if now["builder"] != before[docname]["builder"]:
                changed.add(f"{where} {docname}: the builder's page attributes")
        assert not changed, f"{outdir} build: " + "; ".join(sorted(changed))


def test_a_freeze_made_by_someone_else_is_left_alone(tmp_path: Path) -> None:
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        built = run_sphinx(copy_root("snapshot", tmp_path / "src", with_store=True))
        assert built.statuscode == 0
        assert gc.get_freeze_count() > 0.9 * frozen  # not thawed by the build (a few objects were freed)
    finally:
        gc.unfreeze()
