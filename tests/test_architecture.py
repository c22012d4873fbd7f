"""The package's shape, enforced: which folder may import which, and how big a module may grow.

The pipeline folders hand data forward (read -> execute -> store -> render) through the shared
types of ``core/``; a stage that imported another backwards would tie their code together
again. Every import counts, including those inside functions (lazy imports are still
dependencies). The rules (see ``docs/explanation/architecture.md``):

* ``core/`` imports only ``core/`` (and the package root, for its version);
* ``read/``, ``execute/``, ``store/`` and ``render/`` import ``core/``, their own folder and the
  top-level helpers (``config``, ``warnings_``); ``execute/`` and ``render/`` may also import
  ``store/``, their hand-off;
* ``features/<kind>`` imports the stages, ``core/`` and the helpers, never another feature;
* only the Sphinx glue (``extension``) and ``cli/`` import ``features/``;
* the helpers import only ``core/`` and each other.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "sphinx_tensorviz"
ROOT = "sphinx_tensorviz"
STAGES = ("read", "execute", "store", "render")
HELPERS = ("config", "warnings_")
MAX_LINES = 400


def module_name(path: Path) -> str:
    parts = [ROOT, *path.relative_to(PACKAGE).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported(path: Path) -> set[str]:
    """Every ``sphinx_tensorviz`` module ``path`` imports, anywhere in it, as absolute names."""
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text("utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            found.add(target)
            # ``from . import options``: the names may be modules themselves
            found.update(f"{target}.{alias.name}" for alias in node.names
                         if (PACKAGE.parent / Path(*f"{target}.{alias.name}".split("."))).with_suffix(".py").exists()
                         or (PACKAGE.parent / Path(*f"{target}.{alias.name}".split("."))).is_dir())
    return {m for m in found if m == ROOT or m.startswith(ROOT + ".")}


def is_feature(parts: list[str]) -> bool:
    """``features/<kind>`` or a sub-feature in it (``features/graph/tour``): a package with its own
    ``setup_<name>``. Other packages inside a feature (``features/graph/capture``) are its code."""
    init = PACKAGE.joinpath(*parts, "__init__.py")
    return init.exists() and f"def setup_{parts[-1]}(" in init.read_text("utf-8")


def area(module: str) -> str:
    """``core``, a stage, ``features.<kind>`` (or ``features.<kind>.<sub-feature>``), ``cli``, a helper,
    ``extension`` or ``root``."""
    parts = module.split(".")
    if len(parts) == 1:
        return "root"
    if parts[1] == "features":
        if len(parts) == 2:
            return "features"
        depth = max(n for n in range(3, len(parts) + 1) if n == 3 or is_feature(parts[1:n]))
        return ".".join(parts[1:depth])
    return parts[1]


def allowed(source: str, target: str) -> bool:
    """May a module of area ``source`` import one of area ``target``?"""
    if target == "root" or source == target:
        return True
    if source in ("extension", "root", "__main__"):
        return True  # the Sphinx glue wires everything together
    if source == "cli":
        return target != "extension"
    if source == "core":
        return False
    if source in HELPERS:
        return target in ("core", *HELPERS)
    if source in STAGES:
        return target in ("core", *HELPERS) or (source in ("execute", "render") and target == "store")
    if source.startswith("features."):
        # a sub-feature may use its parent, and a feature sets its sub-features up; siblings never meet
        family = source.startswith(target + ".") or target.startswith(source + ".")
        return target in ("core", *HELPERS, *STAGES) or family
    if source == "features":  # the package's own __init__
        return target.startswith("features.") or target in ("core", *HELPERS, *STAGES)
    return False


MODULES = sorted(PACKAGE.rglob("*.py"))


def test_the_package_has_the_folders_the_rules_talk_about() -> None:
    folders = {p.name for p in PACKAGE.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    assert {"core", *STAGES, "cli"} <= folders
    assert len(MODULES) > 50  # the scan sees the whole package


@pytest.mark.parametrize("path", MODULES, ids=lambda p: p.relative_to(PACKAGE).as_posix())
def test_imports_follow_the_pipeline(path: Path) -> None:
    source = area(module_name(path))
    wrong = sorted(t for t in imported(path) if not allowed(source, area(t)))
    assert not wrong, f"{module_name(path)} ({source}) may not import {', '.join(wrong)}"


@pytest.mark.parametrize("path", MODULES, ids=lambda p: p.relative_to(PACKAGE).as_posix())
def test_no_module_is_too_long(path: Path) -> None:
    lines = len(path.read_text("utf-8").splitlines())
    assert lines <= MAX_LINES, f"{path.name} has {lines} lines; split it by job (at most {MAX_LINES})"


def test_the_rules_reject_what_they_should() -> None:
    """The checker itself: backwards and sideways imports are refused, the allowed ones pass."""
    assert not allowed("read", "execute")
    assert not allowed("render", "read")
    assert not allowed("store", "render")
    assert not allowed("core", "store")
    assert not allowed("features.heatmap", "features.graph")
    assert not allowed("features.graph.tour", "features.graph.activations")
    assert not allowed("features.graph.tour", "features.heatmap")
    assert allowed("features.graph.tour", "features.graph") and allowed("features.graph", "features.graph.tour")
    assert not allowed("render", "features.graph")
    assert allowed("execute", "store") and allowed("render", "store") and allowed("read", "core")
    assert allowed("features.graph", "render") and allowed("cli", "features.graph")
    assert area("sphinx_tensorviz.features.graph.render") == "features.graph"
    assert area("sphinx_tensorviz.features.graph.capture.torch_graph") == "features.graph"
    assert area("sphinx_tensorviz.features.graph.tour.render") == "features.graph.tour"
    inside = PACKAGE / "execute" / "phase.py"
    assert "sphinx_tensorviz.core.request" in imported(inside) or "sphinx_tensorviz.core.state" in imported(inside)


def test_every_feature_is_set_up_by_its_own_setup_function() -> None:
    """The glue finds the features; each has ``setup_<kind>`` (a new kind needs no line in the glue)."""
    import importlib

    kinds = sorted(p.name for p in (PACKAGE / "features").iterdir() if (p / "__init__.py").exists())
    assert {"heatmap", "graph", "diagram", "lesson", "downloads"} <= set(kinds)
    for kind in kinds:
        module = importlib.import_module(f"{ROOT}.features.{kind}")
        assert callable(getattr(module, f"setup_{kind}", None)), f"features/{kind} has no setup_{kind}(app)"
    glue = (PACKAGE / "extension.py").read_text("utf-8")
    assert not [kind for kind in kinds if f"features.{kind}" in glue], "the glue names a feature by hand"
    # tours and activation strips read what a graph recorded: sub-features of graph, set up by it
    for sub in ("tour", "activations"):
        assert is_feature(["features", "graph", sub])
        assert f"setup_{sub}(app)" in (PACKAGE / "features" / "graph" / "__init__.py").read_text("utf-8")


def test_a_warm_pool_parent_has_every_worker_entry_and_no_sphinx() -> None:
    """A pool's parent imports each kind's worker entry once, so a forked job pays for none of them,
    and a worker entry needs neither Sphinx nor docutils (each forked job paid a third of a second
    importing Sphinx when a feature's package imported its directive at the top)."""
    import json
    import subprocess
    import sys

    import sphinx_tensorviz.features.graph
    import sphinx_tensorviz.features.heatmap  # noqa: F401 - each declares its kind
    from sphinx_tensorviz.core.kinds import declared

    runners = [kind.run for kind in declared()]
    assert len(runners) >= 3
    code = ("import json, sys\nfrom sphinx_tensorviz.execute.worker.zygote import preload\n"
            f"preload('numpy', [], {runners!r})\nprint(json.dumps(sorted(sys.modules)))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    loaded = set(json.loads(done.stdout))
    assert {runner.partition(":")[0] for runner in runners} <= loaded
    assert not {m for m in loaded if m.split(".")[0] in ("sphinx", "docutils", "jinja2", "myst_parser")}


# -- the host process is left alone (issue 25) --------------------------------------------------

#: calls that change the whole interpreter a build runs in, for every extension in it
PROCESS_WIDE = frozenset({"setswitchinterval", "register_at_fork"})


def process_wide_calls(tree: ast.AST) -> list[str]:
    """Every use of a :data:`PROCESS_WIDE` function (``sys.setswitchinterval``, an imported alias...)."""
    found = []
    for node in ast.walk(tree):
        name = (node.attr if isinstance(node, ast.Attribute) else node.id if isinstance(node, ast.Name)
                else node.name if isinstance(node, ast.alias) else None)
        if name in PROCESS_WIDE:
            found.append(f"line {node.lineno}: {name}" if hasattr(node, "lineno") else name)
    return found


def app_attributes(tree: ast.AST) -> list[str]:
    """Every ``_tensorviz*`` attribute the code sets or reads by name on an object it does not own:
    ``app._tensorviz_x = ...``, ``setattr``/``getattr``/``vars(app)[...]`` with such a name."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr.startswith("_tensorviz"):
            found.append(f"line {node.lineno}: .{node.attr}")
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.startswith("_tensorviz_"):
            found.append(f"line {node.lineno}: {node.value!r}")
    return found


@pytest.mark.parametrize("path", MODULES, ids=lambda p: p.relative_to(PACKAGE).as_posix())
def test_no_module_changes_the_interpreter_for_the_whole_process(path: Path) -> None:
    """No switch interval set, no fork hook registered: the Sphinx process is not the extension's."""
    found = process_wide_calls(ast.parse(path.read_text("utf-8")))
    assert not found, f"{path.name} changes the host process: {found}"


@pytest.mark.parametrize("path", MODULES, ids=lambda p: p.relative_to(PACKAGE).as_posix())
def test_no_module_keeps_state_in_attributes_of_the_application(path: Path) -> None:
    """State goes in the environment or in a ``core.per_app.PerApp`` slot, not in ``app._tensorviz_*``."""
    found = app_attributes(ast.parse(path.read_text("utf-8")))
    assert not found, f"{path.name} keeps state on the Sphinx application: {found}"


def test_the_host_process_checks_see_what_they_look_for() -> None:
    """The two checkers themselves, on code written the ways the package used to."""
    assert process_wide_calls(ast.parse("import sys\nsys.setswitchinterval(1e-4)\n"))
    assert process_wide_calls(ast.parse("from os import register_at_fork\nregister_at_fork(before=f)\n"))
    assert not process_wide_calls(ast.parse("import sys\nsys.getswitchinterval()\n"))
    assert app_attributes(ast.parse("app._tensorviz_registry = {}\n"))
    assert app_attributes(ast.parse("getattr(app, '_tensorviz_variants', None)\n"))
    assert app_attributes(ast.parse("vars(app).setdefault('_tensorviz_read_artifacts', {})\n"))
    assert not app_attributes(ast.parse("OUTPUT_FOLDER = '_tensorviz'\nenv.tensorviz_requests = {}\n"))


# -- a figure kind is one package (issue 25) ----------------------------------------------------

def kind_words() -> frozenset[str]:
    """Every name a kind is known by: its data's ``kind`` and its directive, for each declared kind,
    and the features' own names (``diagram``, ``tour``, ``activations``...)."""
    from sphinx_tensorviz.core.kinds import declared
    from sphinx_tensorviz.features import declare_builtin_kinds

    declare_builtin_kinds()
    features = {p.name for p in (PACKAGE / "features").rglob("*") if is_feature(["features", *p.relative_to(
        PACKAGE / "features").parts])}
    return frozenset({*(k.name for k in declared()), *(k.directive for k in declared()), *features,
                      *(f"tv-{name}" for name in features)})


def kind_comparisons(tree: ast.AST, words: frozenset[str]) -> list[str]:
    """Every comparison of something with a kind's name (``data["kind"] == "heatmap"``,
    ``directive in ("tv-graph", ...)``, ``case "graph":``): a stage that branches on a kind."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            operands = [node.left, *node.comparators]
            operands += [e for n in node.comparators if isinstance(n, (ast.Tuple, ast.List, ast.Set)) for e in n.elts]
            hits = [n.value for n in operands if isinstance(n, ast.Constant) and n.value in words]
        elif isinstance(node, ast.MatchValue):
            hits = [node.value.value] if isinstance(node.value, ast.Constant) and node.value.value in words else []
        else:
            continue
        found.extend(f"line {node.lineno}: {hit!r}" for hit in hits)
    return found


@pytest.mark.parametrize("path", [p for p in MODULES if "features" not in p.relative_to(PACKAGE).parts],
                         ids=lambda p: p.relative_to(PACKAGE).as_posix())
def test_no_stage_branches_on_a_kind_s_name(path: Path) -> None:
    """Outside ``features/`` the stages ask a kind's :class:`FigureKind`, never compare its name."""
    found = kind_comparisons(ast.parse(path.read_text("utf-8")), kind_words())
    assert not found, f"{path.name} branches on a figure kind's name: {found}"


@pytest.mark.parametrize("path", sorted((PACKAGE / "render").glob("*.py")), ids=lambda p: p.name)
def test_render_holds_only_what_every_kind_shares(path: Path) -> None:
    """``render/`` is the page pass, the drawing model and its writers, colours, ids, the caches: no
    module named for a kind, and no kind's name as a value in it."""
    words = kind_words()
    assert not [w for w in words if w.removeprefix("tv-") in path.stem.split("_")], f"{path.name} is named for a kind"
    tree = ast.parse(path.read_text("utf-8"))
    named = [f"line {n.lineno}: {n.value!r}" for n in ast.walk(tree) if isinstance(n, ast.Constant) and n.value in words]
    assert not named, f"render/{path.name} names a figure kind: {named}"


def test_the_kind_checks_see_what_they_look_for() -> None:
    words = kind_words()
    assert {"heatmap", "graph", "tv-heatmap", "tv-graph", "sweep-check", "diagram", "tour", "activations"} <= words
    assert kind_comparisons(ast.parse('if data["kind"] == "heatmap":\n    pass\n'), words)
    assert kind_comparisons(ast.parse('ok = request.directive in ("tv-graph", "x")\n'), words)
    assert kind_comparisons(ast.parse('match kind:\n    case "graph":\n        pass\n'), words)
    assert not kind_comparisons(ast.parse('if kind.name == name:\n    pass\n'), words)
