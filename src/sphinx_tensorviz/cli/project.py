"""Open a Sphinx project for the CLI: load ``conf.py`` and, when asked, run the read phase only.

Nothing is written into the project: the environment and doctrees go to a
temporary folder, and the ``dummy`` builder never writes pages. Reading runs in
``tensorviz_execution_mode = "off"``, so no lesson code runs while the CLI looks.
"""

from __future__ import annotations

import io
import re
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from sphinx.application import Sphinx
from sphinx.errors import SphinxError
from sphinx.util.console import strip_escape_sequences
from sphinx.util.docutils import docutils_namespace, patch_docutils

from ..config import Settings, settings
from ..core.request import ExecutionRequest
from ..core.state import all_requests
from ..store.artifacts import ArtifactStore


class CliError(Exception):
    """A problem to report on stderr, with the exit status to use (2: usage, 1: failure)."""

    def __init__(self, message: str, code: int = 2) -> None:
        super().__init__(message)
        self.code = code


class Gate(io.TextIOBase):
    """A stream that forwards to ``target`` only while ``open`` (Sphinx's chatter stays quiet)."""

    def __init__(self, target: TextIO) -> None:
        self.target = target
        self.open = False

    def write(self, text: str) -> int:
        if self.open:
            tty = getattr(self.target, "isatty", lambda: False)()
            self.target.write(text if tty else strip_escape_sequences(text))
            self.target.flush()
        return len(text)

    def isatty(self) -> bool:
        return self.open and getattr(self.target, "isatty", lambda: False)()


@dataclass
class Project:
    """An opened project: the app, its settings, the store and (after reading) the requests."""

    app: Sphinx
    conf: Settings
    store: ArtifactStore
    status: Gate
    warnings: io.StringIO
    requests: list[ExecutionRequest] = field(default_factory=list)

    @property
    def srcdir(self) -> Path:
        return Path(self.app.srcdir)

    def read(self) -> list[ExecutionRequest]:
        """Read every document (execution off) and collect the requests of every directive."""
        try:
            self.app.builder.read()
        except SphinxError as exc:
            raise CliError(f"reading the project failed: {exc}", 1) from None
        self.requests = all_requests(self.app.env)
        return self.requests

    def location(self, request: ExecutionRequest) -> str:
        """``path/to/page.md:LINE`` relative to the source folder."""
        path = Path(self.app.env.doc2path(request.docname))
        try:
            shown = path.relative_to(self.srcdir).as_posix()
        except ValueError:
            shown = str(path)
        return f"{shown}:{request.lineno}"

    def tensorviz_warnings(self) -> list[str]:
        """Warnings of type ``tensorviz`` seen while reading (e.g. a directive with a bad option)."""
        text = strip_escape_sequences(self.warnings.getvalue())
        records: list[str] = []
        for line in text.splitlines():
            if re.search(r"(WARNING|ERROR|CRITICAL):", line) or not records:
                records.append(line)
            else:
                records[-1] += "\n" + line
        return [r for r in records if "[tensorviz." in r]


def add_project_arguments(parser: Any) -> None:
    parser.add_argument("sourcedir", nargs="?", default=".", metavar="SOURCEDIR",
                        help="the Sphinx source folder (default: the current folder)")
    parser.add_argument("-c", "--conf-dir", metavar="DIR",
                        help="the folder of conf.py, if it is not SOURCEDIR (as sphinx-build -c)")
    parser.add_argument("-D", "--define", metavar="NAME=VALUE", action="append", default=[],
                        help="override a configuration value (as sphinx-build -D); may repeat")


@contextmanager
def open_project(args: Any, overrides: dict[str, Any] | None = None) -> Iterator[Project]:
    """Load the project named by ``args`` (SOURCEDIR, --conf-dir, --define) with a dummy builder."""
    srcdir = Path(args.sourcedir).resolve()
    confdir = Path(args.conf_dir).resolve() if args.conf_dir else srcdir
    if not srcdir.is_dir():
        raise CliError(f"{args.sourcedir}: no such folder")
    if not (confdir / "conf.py").is_file():
        raise CliError(f"{confdir}: no conf.py here; give the Sphinx source folder (or -c CONFDIR)")
    confoverrides: dict[str, Any] = {}
    for item in args.define:
        name, sep, value = item.partition("=")
        if not sep or not name:
            raise CliError(f"-D {item!r}: expected NAME=VALUE")
        confoverrides[name] = value
    confoverrides.update(overrides or {})
    confoverrides.setdefault("tensorviz_execution_mode", "off")
    warnings = io.StringIO()
    status = Gate(sys.stderr)
    with tempfile.TemporaryDirectory(prefix="tensorviz-cli-") as tmp, patch_docutils(confdir), docutils_namespace():
        try:
            app = Sphinx(srcdir, confdir, Path(tmp) / "out", Path(tmp) / "doctrees", "dummy",
                         confoverrides=confoverrides, status=status, warning=warnings, freshenv=True)
        except SphinxError as exc:
            raise CliError(f"cannot load the project: {exc}", 1) from None
        if "sphinx_tensorviz" not in app.extensions:
            raise CliError(f"{confdir / 'conf.py'} does not load the sphinx_tensorviz extension", 1)
        conf = settings(app)
        yield Project(app, conf, ArtifactStore.for_settings(conf), status, warnings)


def print_read_warnings(project: Project) -> None:
    found = project.tensorviz_warnings()
    for record in found:
        print(record, file=sys.stderr)
