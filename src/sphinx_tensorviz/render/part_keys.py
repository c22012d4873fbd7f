"""What the name of a figure's kept parts covers (:mod:`.part_cache`): everything their HTML
depends on besides the artifact and the renderer hash (which the part cache adds); the bytes of the
artifact and of the project files it shows are checked on every use.

A value left out here would show a stale figure without a word, so the key is generous: the whole
configuration rather than the values known to matter, every file of this package rather than
the drawing code, the translator's whole class hierarchy and the files of its modules. Something
that changes from run to run only costs a miss.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import re
import sys
from enum import Enum
from functools import cache
from importlib.util import find_spec
from pathlib import Path
from typing import Any

from ..config import app_of
from ..core.hashing import digest
from ..core.per_app import PerApp
from ..core.request import package_files
from .page import Page
from .registry import lazy

#: the layout of an entry of kept parts; a new one never reads an old one
FORMAT_VERSION = 5
_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")


def plain(value: Any) -> Any:
    """``value`` as JSON for a key: dataclasses by field, mappings by key, anything else by its
    ``repr`` without memory addresses (a value whose ``repr`` changes from run to run only costs
    a miss)."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {"@": type(value).__qualname__,
                **{f.name: plain(getattr(value, f.name)) for f in dataclasses.fields(value)}}
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, (set, frozenset)):
        return sorted(_ADDRESS.sub("", repr(v)) for v in value)
    if value is None or isinstance(value, (str, bool, int)):
        return value
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, Enum):
        return plain(value.value)
    return _ADDRESS.sub("", repr(value))


#: each builder's page key, per application (computed once a build: the configuration and the code
#: do not change within it)
_PAGE_KEYS: PerApp[dict[str, str]] = PerApp(dict)


def page_key(page: Page) -> str:
    """Everything the parts of a figure of ``page`` depend on that is not the figure's own.

    Not the project's or the output's folder: the HTML names neither (a test builds kept parts
    in another folder and compares), so a second checkout of a course, or a fresh output folder,
    uses what the first made. The project files a figure shows are checked with its artifact.
    """
    builder = page.builder
    app = app_of(page.env)
    shared = _PAGE_KEYS.of(app)
    if builder.name not in shared:  # the configuration and the code do not change within a build
        shared[builder.name] = digest({
            "version": FORMAT_VERSION, "code": _code_identity(),
            "config": {opt.name: plain(opt.value) for opt in app.config},
            # conf.py may define a translator or node handler (no module file of its own), and
            # docutils.conf files give the writer settings (table_style, ...)
            "conf.py": _file_digest(Path(app.confdir) / "conf.py") if app.confdir else None,
            "writer": {name: plain(value) for name, value in sorted(vars(builder.docsettings).items())
                       if name not in _RUN_SETTINGS},
            "translator": _translator_identity(app, builder),
            "registry": _registry_identity(page.registry),
        })
    return digest({"build": shared[builder.name], "builder": [builder.name, builder.format],
                   "docname": page.docname, "uri": builder.get_target_uri(page.docname), "mode": page.mode})


#: docutils settings that are the run's objects, not options of the writer
_RUN_SETTINGS = frozenset({"env", "warning_stream", "record_dependencies", "_source", "_destination"})


def _file_digest(path: Path) -> str | None:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return None


@cache
def _code_identity() -> str:
    """This package's files (by name, size and time) and the versions of what translates them."""
    import docutils
    import pygments
    import sphinx

    package = Path(__file__).resolve().parent.parent
    files = []
    for folder, subfolders, names in os.walk(package):
        subfolders[:] = sorted(s for s in subfolders if s != "__pycache__")
        for name in sorted(names):
            stat = os.stat(os.path.join(folder, name))
            files.append([os.path.relpath(os.path.join(folder, name), package), stat.st_size, stat.st_mtime_ns])
    return digest({"files": files, "python": sys.version, "sphinx": sphinx.__version__,
                   "docutils": docutils.__version__, "pygments": pygments.__version__})


def _translator_identity(app: Any, builder: Any) -> dict[str, Any]:
    """The translator class and the node handlers extensions gave it, with their modules' files."""
    cls = app.registry.get_translator_class(builder)
    handlers = app.registry.translation_handlers.get(builder.name)
    if handlers is None:
        handlers = app.registry.translation_handlers.get(builder.format, {})
    functions = {name: [_function_name(f) for f in pair if f] for name, pair in handlers.items()}
    modules = {c.__module__ for c in cls.__mro__} | {
        getattr(f, "__module__", "") for pair in handlers.values() for f in pair if f}
    return {"mro": [f"{c.__module__}.{c.__qualname__}" for c in cls.__mro__], "handlers": functions,
            "modules": {name: _module_signature(name) for name in sorted(modules)}}


def _registry_identity(registry: Any) -> dict[str, Any]:
    """The figure kinds, page passes and details registered, and the files of any from elsewhere."""
    functions = [*(lazy(k.parts) for k in registry.executed.values() if k.parts),
                 *(lazy(k.sweep) for k in registry.executed.values() if k.sweep),
                 *registry.authored.values(), *(p for _, p in registry.passes), *registry.details]
    names = sorted(_function_name(f) for f in functions if f is not None)
    ours = __name__.split(".")[0]
    modules = {_module_of(f) for f in functions if f is not None}
    return {"functions": names,
            "modules": {m: [_module_signature(m), *_package_signature(m)] for m in sorted(modules)
                        if m.split(".")[0] != ours}}


def _package_signature(module: str) -> list[list[Any]]:
    """The size and time of each file of the package ``module`` is in: a kind's drawing from elsewhere
    imports its own helpers (its ``render.py`` draws with its ``drawing.py``)."""
    signatures = []
    for name, path in package_files(module).items():
        try:
            stat = path.stat()
        except OSError:
            continue
        signatures.append([name, stat.st_size, stat.st_mtime_ns])
    return signatures


def _function_name(function: Any) -> str:
    return f"{getattr(function, '__module__', '')}.{getattr(function, '__qualname__', repr(function))}"


def _module_of(function: Any) -> str:
    """The module a function comes from (for :func:`.registry.lazy`, the one it will import)."""
    qualname = getattr(function, "__qualname__", "")
    return qualname.split(":")[0] if ":" in qualname else getattr(function, "__module__", "") or ""


def _module_signature(name: str) -> list[Any]:
    """The size and time of a module's file (so an upgraded theme or extension changes the key)."""
    module = sys.modules.get(name)
    origin = getattr(module, "__file__", None)
    if origin is None:
        try:
            spec = find_spec(name)
        except (ImportError, ValueError):
            spec = None
        origin = spec.origin if spec is not None else None
    try:
        stat = Path(origin).stat() if origin else None
    except OSError:
        stat = None
    return [origin, stat.st_size, stat.st_mtime_ns] if stat else [origin]
