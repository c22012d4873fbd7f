"""Content and renderer hashes, and the discovery of project-local imports.

Two levels: :class:`ExecutionRequest` and :func:`local_imports` directly, and a real
Sphinx read of ``tests/roots/test-hashing`` (execution mode ``off``, so nothing runs)
whose figures differ from the first in exactly one way.
"""

from __future__ import annotations

import dataclasses
import hashlib
from pathlib import Path

import pytest

from conftest import Build, copy_root, edit, run_sphinx
from sphinx_tensorviz.core.hashing import canonical_json, digest, sha256_text
from sphinx_tensorviz.core.request import INLINE, ExecutionRequest
from sphinx_tensorviz.core.state import requests_of
from sphinx_tensorviz.read import sources
from sphinx_tensorviz.read.sources import local_imports

CODE = "import numpy as np\nresult = np.ones((2, 2))\n"


def request(**changes: object) -> ExecutionRequest:
    base = ExecutionRequest(
        directive="tv-heatmap", docname="lesson", lineno=3, lesson_id="lesson", backend="numpy",
        entry=INLINE, files={INLINE: sha256_text(CODE)}, inline_code=CODE, function=None,
        inputs={"a": 1}, seed=0, device="cpu",
        options={"rows": None, "columns": None, "unit": "", "diverging": False},
        render={"title": "A title"},
    )
    return dataclasses.replace(base, **changes)


# -- ExecutionRequest ---------------------------------------------------------------------


def test_hashes_are_sha256_hex_and_stable() -> None:
    a, b = request(), request()
    assert a.content_hash == b.content_hash and a.renderer_hash == b.renderer_hash
    assert len(a.content_hash) == 64 and int(a.content_hash, 16) >= 0
    assert a.content_hash == hashlib.sha256(canonical_json(a.hashed_inputs()).encode()).hexdigest()


def test_canonical_json_ignores_key_order() -> None:
    assert digest({"a": 1, "b": [1, 2]}) == digest({"b": [1, 2], "a": 1})
    assert canonical_json({"b": 1, "a": "\u00e9"}) == '{"a":"\u00e9","b":1}'
    with pytest.raises(ValueError):
        canonical_json({"x": float("nan")})


@pytest.mark.parametrize("changes", [
    {"files": {INLINE: sha256_text(CODE + "result = result * 2\n")}},
    {"seed": 1},
    {"inputs": {"a": 2}},
    {"backend": "torch"},
    {"backend": "jax"},
    {"function": "compute"},
    {"files": {INLINE: sha256_text(CODE), "helpers/b.py": sha256_text("X = 1\n")}},
    {"options": {"rows": None, "columns": None, "unit": "logits", "diverging": False}},
    {"options": {"rows": None, "columns": None, "unit": "", "diverging": True}},
    {"device": "gpu"},
], ids=["code", "seed", "inputs", "backend-torch", "backend-jax", "function", "local-module", "unit",
        "diverging", "device"])
def test_content_hash_changes_with_what_changes_the_result(changes: dict) -> None:
    base, changed = request(), request(**changes)
    assert changed.content_hash != base.content_hash
    assert changed.renderer_hash == base.renderer_hash


@pytest.mark.parametrize("render", [
    {"title": "Another title"},
    {"title": "A title", "alt": "Some alt text."},
    {"title": "A title", "prediction": "What happens?"},
    {"title": "A title", "colormap": "magma"},
    {"title": "A title", "description": "More words."},
], ids=["title", "alt", "prediction", "colormap", "description"])
def test_render_options_change_only_the_renderer_hash(render: dict) -> None:
    base, changed = request(), request(render=render)
    assert changed.content_hash == base.content_hash
    assert changed.renderer_hash != base.renderer_hash


def test_where_the_directive_is_does_not_change_the_hash() -> None:
    base = request()
    moved = request(docname="other/page", lineno=99, lesson_id="other")
    assert moved.content_hash == base.content_hash


# -- local_imports ------------------------------------------------------------------------


@pytest.fixture
def project(tmp_path: Path) -> Path:
    files = {
        "lesson.md": "# inline code lives here\n",
        "helpers/__init__.py": "",
        "helpers/x.py": "X = 1\n",
        "pkg/__init__.py": "",
        "pkg/mod.py": "from . import sibling\nfrom .util import f\n",
        "pkg/sibling.py": "S = 2\n",
        "pkg/util.py": "def f():\n    return 3\n",
        "pkg/sub/__init__.py": "",
        "pkg/sub/deep.py": "from ..util import f\n",
        "tools/__init__.py": "SCALE = 2\n",
        "tools/ops.py": "def double(x):\n    return x * 2\n",
        "chain/a.py": "from chain_b import B\n",
        "chain_b.py": "import chain_c\nB = chain_c.C\n",
        "chain_c.py": "C = 3\n",
        "models/near.py": "N = 1\n",
        "models/lesson.py": "import near\nimport numpy\n",
        "near.py": "N = 'the top-level one'\n",
    }
    for rel, text in files.items():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, "utf-8")
    return tmp_path


def rel(paths: list[Path], root: Path) -> list[str]:
    return [p.relative_to(root.resolve()).as_posix() for p in paths]


def test_from_package_import_module(project: Path) -> None:
    found = rel(local_imports("from helpers import x\n", project / "lesson.md", project), project)
    assert "helpers/x.py" in found
    assert "helpers/__init__.py" in found


def test_import_dotted_module_and_its_relative_imports(project: Path) -> None:
    found = rel(local_imports("import pkg.mod\n", project / "lesson.md", project), project)
    assert "pkg/mod.py" in found
    assert "pkg/sibling.py" in found  # from . import sibling
    assert "pkg/util.py" in found  # from .util import f
    assert len(found) == len(set(found))


def test_relative_import_two_levels_up(project: Path) -> None:
    deep = project / "pkg" / "sub" / "deep.py"
    found = rel(local_imports(deep.read_text("utf-8"), deep, project), project)
    assert "pkg/util.py" in found


def test_import_dotted_module_depends_on_parent_package_init(project: Path) -> None:
    found = rel(local_imports("import tools.ops\n", project / "lesson.md", project), project)
    assert "tools/ops.py" in found
    assert "tools/__init__.py" in found


def test_transitive_imports_are_followed(project: Path) -> None:
    importer = project / "chain" / "a.py"
    found = rel(local_imports(importer.read_text("utf-8"), importer, project), project)
    assert found == ["chain_b.py", "chain_c.py"]


def test_imports_inside_functions_classes_and_blocks_count(project: Path) -> None:
    """A lazy import is a dependency all the same, at any depth of blocks."""
    code = ("class Model:\n    def forward(self):\n        try:\n            from helpers import x\n"
            "        except ImportError:\n            import tools.ops\n        finally:\n            pass\n"
            "def later():\n    with open(__file__):\n        if True:\n            pass\n        else:\n"
            "            import chain_c\n    for _ in ():\n        import near\n")
    found = rel(local_imports(code, project / "lesson.md", project), project)
    assert {"helpers/x.py", "tools/ops.py", "chain_c.py", "near.py"} <= set(found)


def test_installed_packages_are_ignored(project: Path) -> None:
    code = "import numpy as np\nimport json\nfrom os import path\nimport jax.numpy as jnp\nfrom torch import nn\n"
    assert local_imports(code, project / "lesson.md", project) == []


def test_module_beside_the_importer_wins(project: Path) -> None:
    importer = project / "models" / "lesson.py"
    found = rel(local_imports(importer.read_text("utf-8"), importer, project), project)
    assert found == ["models/near.py"]


def test_syntax_error_is_left_to_the_worker(project: Path) -> None:
    assert local_imports("def broken(:\n", project / "lesson.md", project) == []


def test_modules_outside_the_project_are_not_followed(tmp_path: Path) -> None:
    root = tmp_path / "course"
    root.mkdir()
    (tmp_path / "secret.py").write_text("S = 1\n", "utf-8")
    lesson = root / "lesson.py"
    lesson.write_text("from .. import secret\n", "utf-8")
    assert local_imports(lesson.read_text("utf-8"), lesson, root) == []


def test_finding_the_imports_keeps_nothing_on_the_machine(project: Path, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """The scan is parsed anew in each process: a cache in the user's home saved 16 ms a build,
    less than the noise of one (issue 25), and was one more thing the extension left behind."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "user-cache"))
    sources._imported_names.cache_clear()  # texts earlier tests parsed in this process
    code = "from helpers import x\nimport tools.ops\n"
    found = rel(local_imports(code, project / "lesson.md", project), project)
    assert found == ["helpers/__init__.py", "helpers/x.py", "tools/__init__.py", "tools/ops.py"]
    assert not (tmp_path / "user-cache").exists(), sorted((tmp_path / "user-cache").rglob("*"))
    sources._imported_names.cache_clear()


# -- through a real Sphinx read -----------------------------------------------------------

LABELS = ["base", "same", "code", "seed", "inputs", "backend", "unit", "title", "alt", "prediction", "colormap"]


@pytest.fixture(scope="module")
def variants(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Build, dict[str, ExecutionRequest]]:
    src = copy_root("hashing", tmp_path_factory.mktemp("hashing") / "src")
    built = run_sphinx(src)
    requests = requests_of(built.app.env)["index"]
    assert len(requests) == len(LABELS)
    return src, built, dict(zip(LABELS, requests))


@pytest.mark.sphinx
def test_off_mode_reads_without_executing(variants) -> None:  # noqa: ANN001
    src, built, _ = variants
    assert built.summary == (0, 0, 0)
    assert built.warnings.strip() == ""
    assert not list(src.glob("tensorviz_artifacts/*.json"))


@pytest.mark.sphinx
@pytest.mark.parametrize("label", ["code", "seed", "inputs", "backend", "unit"])
def test_directive_content_hash_changes(variants, label: str) -> None:  # noqa: ANN001
    _, _, requests = variants
    assert requests[label].content_hash != requests["base"].content_hash


@pytest.mark.sphinx
@pytest.mark.parametrize("label", ["same", "title", "alt", "prediction", "colormap"])
def test_directive_content_hash_does_not_change(variants, label: str) -> None:  # noqa: ANN001
    _, _, requests = variants
    assert requests[label].content_hash == requests["base"].content_hash


@pytest.mark.sphinx
@pytest.mark.parametrize("label", ["title", "alt", "prediction", "colormap"])
def test_directive_renderer_hash_changes(variants, label: str) -> None:  # noqa: ANN001
    _, _, requests = variants
    assert requests[label].renderer_hash != requests["base"].renderer_hash


@pytest.mark.sphinx
def test_inline_code_with_installed_imports_hashes_only_itself(variants) -> None:  # noqa: ANN001
    _, _, requests = variants
    assert list(requests["base"].files) == [INLINE]


@pytest.mark.sphinx
def test_editing_a_transitively_imported_module_changes_the_hash(tmp_path: Path, build) -> None:  # noqa: ANN001
    src = copy_root("hashing", tmp_path / "src")
    first = build(src)
    before = requests_of(first.app.env)
    (source_request,) = before["source"]
    assert set(source_request.files) == {"models/lesson.py", "helpers/mid.py", "helpers/leaf.py"}
    for rel_path, digest_ in source_request.files.items():
        assert digest_ == hashlib.sha256((src / rel_path).read_bytes()).hexdigest()

    edit(src / "helpers" / "unused.py", "UNUSED = 1", "UNUSED = 2")  # not imported: nothing changes
    quiet = build(src)
    assert requests_of(quiet.app.env)["source"][0].content_hash == source_request.content_hash

    edit(src / "helpers" / "leaf.py", "FACTOR = 3", "FACTOR = 4")
    second = build(src)
    after = requests_of(second.app.env)
    assert after["source"][0].content_hash != source_request.content_hash
    assert after["source"][0].renderer_hash == source_request.renderer_hash
    assert [r.content_hash for r in after["index"]] == [r.content_hash for r in before["index"]]
