"""The test tiers: which tests build a Sphinx project, found two ways, so none escapes its marker.

Three markers (declared in ``pyproject.toml``) set the slow tests apart:

* ``sphinx``: the test builds (or reads) a Sphinx project: a test root, the course, the manual,
  in this process or in a ``sphinx-build`` subprocess, or through the ``tensorviz`` command
  (which loads the project with Sphinx);
* ``browser``: the test needs headless Chromium (these build the pages first, so they are
  ``sphinx`` too);
* ``execution``: the test builds nothing but traces real models through a framework in this
  process at seconds a test (Flax and Equinox under jit). Framework tests that take a fraction
  of a second (the PyTorch and plain JAX graph captures) stay in the fast tier.

Everything else is the fast tier (``-m "not sphinx and not browser and not execution"``).
A test whose tier is wrong is slow where it should be fast, or is left out of a fast loop
that claims to cover it; both are caught:

* :func:`unmarked_builders` reads the test modules' sources (no import) and names every test
  that builds Sphinx, directly or through a fixture or helper (of its module, of ``conftest``,
  of the ``*_util`` modules, or of another test module it imports from), without the
  ``sphinx`` mark. ``tests/test_tiers.py`` asserts the list is empty, in the fast tier, so it
  also covers tests skipped on this machine.
* :class:`TierGuard`, a pytest plugin registered by ``conftest.py``, fails a test without the
  mark at the moment it creates a :class:`sphinx.application.Sphinx` (``SphinxTestApp`` and the
  ``tensorviz`` command included) or starts a ``sphinx-build``, ``sphinx-autobuild`` or
  ``tensorviz`` subprocess: what the source reading cannot follow (a command, a fixture in a
  plugin) is caught when it runs.
"""

from __future__ import annotations

import ast
import functools
import subprocess
import sys
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

TESTS = Path(__file__).resolve().parent
#: the fast tier's selection, as the README gives it
FAST_TIER = "not sphinx and not browser and not execution"

#: callables whose call is a Sphinx build (conftest, browser_util and Sphinx itself)
BUILD_CALLS = frozenset({"run_sphinx", "SphinxTestApp", "Sphinx", "build_lessons", "make_app"})
#: fixtures that build when requested (``build`` is conftest's, the others ``sphinx.testing``'s)
BUILD_FIXTURES = frozenset({"build", "make_app", "app"})
#: words in a subprocess's command line that make it a Sphinx build
SPHINX_COMMANDS = ("sphinx", "sphinx_autobuild", "sphinx.cmd.build", "sphinx-build", "sphinx-autobuild")
#: ``tensorviz`` subcommands that load the project with Sphinx (push and pull only copy a store)
PROJECT_COMMANDS = frozenset({"status", "execute", "verify", "gc", "show"})
HELP = frozenset({"-h", "--help", "--version"})
SUBPROCESS_CALLS = frozenset({"run", "Popen", "check_output", "check_call", "call"})
MARK = "sphinx"


# -- reading the sources ----------------------------------------------------------------

@dataclass
class Module:
    """What one test or helper module defines, read from its source."""

    name: str
    path: Path
    tree: ast.Module
    functions: dict[str, ast.FunctionDef] = field(default_factory=dict)
    assigned: dict[str, ast.expr] = field(default_factory=dict)  # module-level NAME = <expr>
    imports: dict[str, tuple[str, str]] = field(default_factory=dict)  # local name -> (module, name)
    marked: bool = False  # module-level ``pytestmark`` holds the sphinx mark

    @classmethod
    def read(cls, path: Path, source: str | None = None) -> Module:
        tree = ast.parse(source if source is not None else path.read_text("utf-8"), str(path))
        module = cls(path.stem, path, tree)
        for node in tree.body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                module.functions[node.name] = node  # type: ignore[assignment]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                for alias in node.names:
                    module.imports[alias.asname or alias.name] = (node.module, alias.name)
            elif isinstance(node, ast.Assign):
                for target in node.targets:
                    if isinstance(target, ast.Name):
                        module.assigned[target.id] = node.value
                        if target.id == "pytestmark":
                            module.marked = has_mark(node.value)
        return module


def has_mark(expr: ast.AST, mark: str = MARK) -> bool:
    """Whether ``expr`` (a decorator, or a ``pytestmark`` value) holds ``pytest.mark.<mark>``."""
    for node in ast.walk(expr):
        if isinstance(node, ast.Attribute) and node.attr == mark:
            value = node.value
            if isinstance(value, ast.Attribute) and value.attr == "mark":
                return True
    return False


def is_fixture(function: ast.FunctionDef) -> bool:
    return any("fixture" in ast.unparse(d) for d in function.decorator_list)


def parameters(function: ast.FunctionDef) -> list[str]:
    args = function.args
    return [a.arg for a in [*args.posonlyargs, *args.args, *args.kwonlyargs]]


def assignments(function: ast.AST) -> dict[str, list[ast.expr]]:
    """``name -> [values]`` of the plain assignments inside a function."""
    found: dict[str, list[ast.expr]] = {}
    for node in ast.walk(function):
        if isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    found.setdefault(target.id, []).append(node.value)
    return found


def constants(expr: ast.AST) -> set[str]:
    return {n.value for n in ast.walk(expr) if isinstance(n, ast.Constant) and isinstance(n.value, str)}


def cli_loads_project(argv: ast.expr) -> bool:
    """``main(["status", ...])``: a literal command line whose subcommand loads the project."""
    if not isinstance(argv, ast.List) or not argv.elts:
        return False
    first = argv.elts[0]
    return (isinstance(first, ast.Constant) and first.value in PROJECT_COMMANDS
            and not HELP & constants(argv))


def called_names(function: ast.AST) -> Iterator[tuple[str, ast.Call]]:
    """The plain names a function calls (``f(...)``; ``pkg.f(...)`` gives ``f``)."""
    for node in ast.walk(function):
        if isinstance(node, ast.Call):
            if isinstance(node.func, ast.Name):
                yield node.func.id, node
            elif isinstance(node.func, ast.Attribute):
                yield node.func.attr, node


class Sources:
    """Every module under ``tests/`` by name, read lazily; what builds, and why."""

    def __init__(self, folder: Path = TESTS, extra: dict[str, str] | None = None) -> None:
        self.folder = folder
        self.extra = extra or {}  # module name -> source, for the checker's own tests
        self._modules: dict[str, Module | None] = {}
        self._builds: dict[tuple[str, str], str | None] = {}

    def module(self, name: str) -> Module | None:
        if name not in self._modules:
            path = self.folder / f"{name}.py"
            if name in self.extra:
                self._modules[name] = Module.read(path, self.extra[name])
            else:
                self._modules[name] = Module.read(path) if path.is_file() else None
        return self._modules[name]

    def command_mentions_sphinx(self, module: Module, expr: ast.AST, seen: frozenset[str] = frozenset(),
                                local: dict[str, list[ast.expr]] | None = None) -> bool:
        """Whether a subprocess command line holds a Sphinx command word, following the names it
        uses: the function's own (``start = [sys.executable, "-m", "sphinx"]``) and module-level
        ones (``"-c", WITHOUT_FRAMEWORKS``), into the modules they are imported from."""
        local = local or {}
        for node in ast.walk(expr):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                if node.value in SPHINX_COMMANDS or any(w in node.value for w in SPHINX_COMMANDS[2:]):
                    return True
                if node.value == "sphinx_tensorviz" and not HELP & constants(expr):
                    return True  # ``python -m sphinx_tensorviz status DIR``: the command loads the project
            elif isinstance(node, ast.Name) and node.id not in seen:
                if node.id in local:
                    if any(self.command_mentions_sphinx(module, value, seen | {node.id}, local)
                           for value in local[node.id]):
                        return True
                elif node.id in module.assigned:
                    if self.command_mentions_sphinx(module, module.assigned[node.id], seen | {node.id}):
                        return True
                elif node.id in module.imports:
                    source, name = module.imports[node.id]
                    other = self.module(source)
                    if other is not None and name in other.assigned:
                        if self.command_mentions_sphinx(other, other.assigned[name], frozenset({name})):
                            return True
        return False

    def builds(self, module: Module, name: str, stack: tuple[tuple[str, str], ...] = ()) -> str | None:
        """Why ``module.name`` (a test, fixture or helper) builds Sphinx, or None when it does not."""
        key = (module.name, name)
        if key in self._builds:
            return self._builds[key]
        if key in stack:
            return None
        function = module.functions.get(name)
        if function is None:
            if name in module.imports:  # a helper imported from conftest, a *_util or a test module
                source, original = module.imports[name]
                other = self.module(source)
                return self.builds(other, original, (*stack, key)) if other is not None else None
            conftest = self.module("conftest")
            if conftest is not None and module is not conftest and name in conftest.functions:
                return self.builds(conftest, name, (*stack, key))
            return None
        reason = self._why(module, function, (*stack, key))
        self._builds[key] = reason
        return reason

    def _why(self, module: Module, function: ast.FunctionDef, stack: tuple[tuple[str, str], ...]) -> str | None:
        for parameter in parameters(function):
            if parameter in BUILD_FIXTURES:
                return f"the {parameter!r} fixture"
            fixture = self.fixture(module, parameter)
            if fixture is not None:
                owner, fixture_name = fixture
                why = self.builds(owner, fixture_name, stack)
                if why:
                    return f"fixture {fixture_name!r} -> {why}"
        local = assignments(function)
        local_imports = {alias.asname or alias.name: (node.module, alias.name) for node in ast.walk(function)
                         if isinstance(node, ast.ImportFrom) and node.module for alias in node.names}
        cli_main = ("sphinx_tensorviz.cli", "main")
        for called, call in called_names(function):
            if called in BUILD_CALLS:
                return f"{called}()"
            command = call.args[0] if call.args else next((k.value for k in call.keywords if k.arg == "args"), None)
            if called in SUBPROCESS_CALLS and command is not None and self.command_mentions_sphinx(
                    module, command, local=local):
                return "a Sphinx subprocess"
            if called == "main" and cli_main in (module.imports.get("main"), local_imports.get("main")) \
                    and call.args and cli_loads_project(call.args[0]):
                return "the tensorviz command on a project"
            if called != function.name and (called in module.functions or called in module.imports):
                why = self.builds(module, called, stack)
                if why:
                    return f"{called}() -> {why}"
        return None

    def fixture(self, module: Module, name: str) -> tuple[Module, str] | None:
        """Where the fixture ``name`` a function of ``module`` requests is defined (that module,
        a module it imports the fixture from, or conftest)."""
        candidates: list[tuple[Module | None, str]] = [(module, name)]
        if name in module.imports:
            candidates.append((self.module(module.imports[name][0]), module.imports[name][1]))
        candidates.append((self.module("conftest"), name))
        for owner, original in candidates:
            if owner is not None and original in owner.functions and is_fixture(owner.functions[original]):
                return owner, original
        return None


@dataclass(frozen=True)
class Unmarked:
    """A test that builds Sphinx without the ``sphinx`` mark."""

    path: Path
    test: str
    line: int
    reason: str

    def __str__(self) -> str:
        return f"{self.path.name}:{self.line}: {self.test} builds Sphinx ({self.reason}) without the sphinx mark"


def unmarked_builders(paths: Iterable[Path] | None = None, sources: Sources | None = None) -> list[Unmarked]:
    """Every test function in ``paths`` (default: ``tests/test_*.py``) that builds without the mark."""
    sources = sources or Sources()
    found: list[Unmarked] = []
    for path in sorted(paths if paths is not None else TESTS.glob("test_*.py")):
        module = sources.module(path.stem)
        assert module is not None, path
        if module.marked:
            continue
        for name, function in module.functions.items():
            if not name.startswith("test") or any(has_mark(d) for d in function.decorator_list):
                continue
            reason = sources.builds(module, name)
            if reason:
                found.append(Unmarked(path, name, function.lineno, reason))
    return found


# -- at run time ------------------------------------------------------------------------

def loads_project(words: Sequence[str]) -> bool:
    """Whether ``tensorviz WORDS`` loads a project with Sphinx."""
    return bool(words) and words[0] in PROJECT_COMMANDS and not HELP & set(words)


def sphinx_command(argv: Sequence[Any] | str | bytes) -> bool:
    """Whether a subprocess command line runs Sphinx: ``-m sphinx``, ``sphinx-build``,
    ``sphinx-autobuild``, a ``-c`` script calling ``sphinx.cmd.build``, or a ``tensorviz``
    command on a project (``python -m sphinx_tensorviz status DIR``; not ``--help``)."""
    if isinstance(argv, (str, bytes)):
        argv = [argv]
    words = [str(a) if not isinstance(a, bytes) else a.decode("utf-8", "replace") for a in argv]
    for index, word in enumerate(words):
        base = word.rsplit("/", 1)[-1]
        if index == 0 and base in ("sphinx-build", "sphinx-autobuild"):
            return True
        if index == 0 and base == "tensorviz":
            return loads_project(words[1:])
        if word == "-m" and index + 1 < len(words):
            target = words[index + 1]
            if target in ("sphinx", "sphinx_autobuild", "sphinx.cmd.build"):
                return True
            if target == "sphinx_tensorviz":
                return loads_project(words[index + 2:])
        if word == "-c" and index + 1 < len(words):
            script = words[index + 1]
            if "sphinx.cmd.build" in script or "sphinx.application" in script:
                return True
    return False


class TierGuard:
    """Fails a test without the ``sphinx`` mark when it builds Sphinx.

    It wraps :meth:`sphinx.application.Sphinx.__init__` and :class:`subprocess.Popen`'s
    ``__init__`` for the session; the wrappers call straight through, so builds are unchanged.
    ``pytest.fail`` raises a ``BaseException``, which no ``except Exception`` in a test or in
    the code under test swallows. Module-scoped fixtures build in the first test that asks for
    them: in the full suite that test may carry the mark for another that does not, but in the
    fast tier (``-m "not sphinx ..."``) the marked one is deselected, so the other one builds and
    fails here: the fast tier itself never builds Sphinx.
    """

    def __init__(self) -> None:
        self.item: pytest.Item | None = None
        self._restore: list[tuple[type, str, Any]] = []

    def install(self) -> None:
        from sphinx.application import Sphinx

        for cls, check in ((Sphinx, self._on_sphinx), (subprocess.Popen, self._on_popen)):
            self._restore.append((cls, "__init__", cls.__init__))
            cls.__init__ = _checked(cls.__init__, check)  # type: ignore[method-assign]

    def uninstall(self) -> None:
        while self._restore:
            cls, name, original = self._restore.pop()
            setattr(cls, name, original)

    def _unmarked(self) -> pytest.Item | None:
        item = self.item
        if item is None or item.get_closest_marker(MARK) is not None:
            return None
        return item

    def _on_sphinx(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        if (item := self._unmarked()) is not None:
            pytest.fail(f"{item.nodeid} builds a Sphinx project but is not marked 'sphinx': add "
                        "pytest.mark.sphinx (pytestmark for a whole module); see tests/tiers_util.py",
                        pytrace=True)

    def _on_popen(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        argv = args[0] if args else kwargs.get("args", ())
        if (item := self._unmarked()) is not None and sphinx_command(argv):
            pytest.fail(f"{item.nodeid} runs Sphinx in a subprocess ({' '.join(map(str, argv))[:120]}) but "
                        "is not marked 'sphinx': add pytest.mark.sphinx; see tests/tiers_util.py")

    # -- pytest hooks --

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(self, item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
        self.item = item
        try:
            yield
        finally:
            self.item = None


def _checked(original: Any, check: Any) -> Any:
    """``original`` (an ``__init__``), calling ``check(args, kwargs)`` first."""

    @functools.wraps(original)
    def init(instance: Any, *args: Any, **kwargs: Any) -> None:
        check(args, kwargs)
        original(instance, *args, **kwargs)

    return init


def pytest_configure(config: pytest.Config) -> None:
    """Register the guard (``-p tiers_util`` loads it into a session without this conftest)."""
    if config.pluginmanager.has_plugin("tensorviz-tier-guard"):
        return
    guard = TierGuard()
    guard.install()
    config.pluginmanager.register(guard, "tensorviz-tier-guard")
    config.add_cleanup(guard.uninstall)


if __name__ == "__main__":  # python tests/tiers_util.py: list the tests that need the mark
    for unmarked in unmarked_builders():
        print(unmarked)
    sys.exit(0)
