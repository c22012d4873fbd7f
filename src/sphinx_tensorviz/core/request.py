"""What the reader hands to the executor: one directive's code, inputs and options.

A request is plain data (picklable, so ``sphinx-build -j`` can merge it across
read workers) and knows its two hashes: the *content hash* of everything that
changes the result, and the *renderer hash* of what only changes the picture.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from functools import cache, cached_property
from importlib.util import find_spec
from pathlib import Path
from typing import Any

from .hashing import SCHEMA_VERSION, digest

INLINE = "<inline>"
#: the request option of a figure that uses a trained model (``:model: @name``): ``{"name", "training"
#: (its content hash), "step"}``, hashed; the job adds the weights file
TRAINED = "trained"

#: a lesson id: a document name or a ``:lesson:`` name (letters, digits, spaces and ``_.,+:()-``). Not
#: hashed, it reaches the downloads (``run.py``), which refuse an artifact whose id has another form.
LESSON_ID = re.compile(r"\w[\w .,+:()-]{0,199}")


def default_lesson_id(docname: str) -> str:
    """The lesson id of a page without ``:lesson:``: the last part of its name, with each character a
    lesson id may not hold made ``_``, so a page called ``q&a`` never costs its figures their downloads."""
    name = re.sub(r"[^\w .,+:()-]", "_", docname.rsplit("/", 1)[-1]).strip()
    name = name if re.match(r"\w", name) else f"_{name}"
    return name[:200]


@dataclass(frozen=True)
class ExecutionRequest:
    directive: str  #: e.g. ``tv-heatmap``
    docname: str
    lineno: int
    lesson_id: str
    backend: str  #: ``jax`` | ``torch`` | ``numpy``
    entry: str  #: source path relative to the source folder, or ``<inline>``
    files: dict[str, str]  #: relative path -> sha256 of the text, entry and local imports
    inline_code: str | None
    function: str | None
    inputs: Any
    seed: int
    device: str  #: ``cpu`` unless configured
    options: dict[str, Any] = field(default_factory=dict)  #: result-affecting, directive-specific
    render: dict[str, Any] = field(default_factory=dict)  #: render-only options
    versions: dict[str, str] | None = None  #: library versions, only when configured to hash them
    #: the worker's entry, ``module:function``, from the figure kind's declaration (not hashed: where
    #: the code lives is not what it computes)
    runner: str = field(default="", repr=False)
    #: what else the kind hashes, at the top level (a graph: the version of its capture)
    hashed_extra: dict[str, Any] = field(default_factory=dict, repr=False)

    def hashed_inputs(self) -> dict[str, Any]:
        """The canonical description of the computation; its digest names the artifact."""
        inputs = {
            "schemaVersion": SCHEMA_VERSION,
            "directive": self.directive,
            "backend": self.backend,
            "device": self.device,
            "entry": self.entry,
            "files": self.files,
            "function": self.function,
            "inputs": self.inputs,
            "seed": self.seed,
            "options": self.options,
        }
        inputs.update(self.hashed_extra)
        if self.versions is not None:
            inputs["versions"] = self.versions
        return inputs

    @cached_property
    def content_hash(self) -> str:
        return digest(self.hashed_inputs())

    @property
    def renderer_hash(self) -> str:
        """Computed when used (never pickled with the environment), so new drawing code redraws: the
        package's, and a kind's from elsewhere (its package, found from its worker entry)."""
        drawn_with = {"renderer": renderer_fingerprint(), "directive": self.directive, **self.render}
        outside = kind_code_fingerprint(self.runner)
        if outside:  # only for a kind from elsewhere, so the package's kinds keep their hashes
            drawn_with["kindCode"] = outside
        return digest(drawn_with)


@cache
def renderer_fingerprint() -> str:
    """Changes whenever the drawing code changes, so cached figures are never stale.

    The drawing code is ``render/`` and the figure kinds of ``features/``; they are hashed as
    files (read, never imported: the request must not depend on the stages that use it).
    """
    from .. import __version__

    package = Path(__file__).resolve().parent.parent
    files = [*package.joinpath("render").glob("*.py"), *package.joinpath("render").glob("*.json"),
             *package.joinpath("features").rglob("*.py")]
    hashed = hashlib.sha256(f"{__version__}:".encode())
    for name, content in sorted((p.relative_to(package).as_posix(), p.read_bytes()) for p in files):
        hashed.update(f"{name}:{len(content)}:".encode())  # name and length: no two file sets hash alike
        hashed.update(content)
    return hashed.hexdigest()


def package_files(module: str) -> dict[str, Path]:
    """The ``.py`` and ``.json`` files of the package that holds ``module`` (of ``module`` itself when it
    is a package, or only its file when it is a top-level module), by name relative to that package's
    folder; empty when it cannot be found.

    What a figure kind from outside this package draws with: its drawing imports its own helpers, so
    the module a declaration names is not enough. Found by import spec, not imported (by the time a
    figure is drawn the package is imported anyway, as an extension of the build).
    """
    try:
        spec = find_spec(module)
    except (ImportError, ValueError):
        return {}
    origin = Path(spec.origin) if spec is not None and spec.origin else None
    if origin is None or not origin.is_file():
        return {}
    if spec.submodule_search_locations is None and "." not in module:
        return {origin.name: origin}
    folder = origin.parent
    return {p.relative_to(folder).as_posix(): p
            for p in sorted(p for pattern in ("*.py", "*.json") for p in folder.rglob(pattern)) if p.is_file()}


@cache
def kind_code_fingerprint(runner: str) -> str:
    """The content of a figure kind's package, found from its worker entry (``module:function``), when
    the kind comes from elsewhere; ``""`` for the package's own kinds, which
    :func:`renderer_fingerprint` covers. Computed once a process, as the package's own fingerprint;
    names relative to the package, so a second checkout of a course shares the drawings."""
    module = runner.partition(":")[0]
    if not module or module.split(".")[0] == __name__.split(".")[0]:
        return ""
    package = module.rpartition(".")[0] or module  # the entry's package: the kind is one package
    hashed = hashlib.sha256()
    for name, path in package_files(package).items():
        content = path.read_bytes()
        hashed.update(f"{name}:{len(content)}:".encode())
        hashed.update(content)
    return hashed.hexdigest()
