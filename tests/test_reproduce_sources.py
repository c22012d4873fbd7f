"""``run.py`` carries the loader's, the inputs' and the tolerance's code as text: each definition
is cut from its module exactly as :func:`ast.get_source_segment` would cut it."""

from __future__ import annotations

import ast
import io
from pathlib import Path

import pytest

from sphinx_tensorviz.execute import reproduce

EXECUTE = Path(reproduce.__file__).parent
AWKWARD = ('X = {"é": 1,\r\n     "ß": 2}  # two lines, CRLF\r\n'
           'def f(a="ü"):\n    return a\n\n'
           'class K:\r    pass\r'  # old Mac line ends
           'Y = "\\x0c"; Z = 3\n')  # a form feed escape, and two statements on one line


@pytest.mark.parametrize("text", [AWKWARD, *(p.read_text("utf-8") for p in sorted(EXECUTE.glob("*.py")) if p.name != "__init__.py")])
def test_definitions_are_cut_as_get_source_segment_cuts_them(text: str) -> None:
    lines = io.StringIO(text, newline="").readlines()
    cut = [node for node in ast.parse(text).body if isinstance(node, (ast.FunctionDef, ast.ClassDef, ast.Assign))]
    assert cut
    for node in cut:
        assert reproduce._segment(lines, node) == ast.get_source_segment(text, node)


def test_a_definition_is_cut_with_its_decorators(tmp_path: Path) -> None:
    """A dataclass cut without ``@dataclass`` takes no arguments (``run.py`` of ``tv-patch`` builds one)."""
    module = tmp_path / "m.py"
    module.write_text("from dataclasses import dataclass\n\n\n@dataclass(frozen=True)\nclass P:\n    x: int = 0\n"
                      "\n\ndef f():\n    return 1\n", "utf-8")
    klass, function = reproduce.definitions(module, ("P", "f"))
    assert klass.startswith("@dataclass(frozen=True)\nclass P:") and function.startswith("def f():")
    namespace: dict = {}
    exec("from dataclasses import dataclass\n" + klass, namespace)
    assert namespace["P"](x=3).x == 3


def test_run_py_carries_the_named_definitions() -> None:
    loader, = reproduce.definitions(EXECUTE / "worker" / "loader.py", ("import_file",))
    assert loader.startswith("def import_file(") and "\n" in loader


# ------------------------------------------------------------------------------------------------
# issue 24, point 22: nothing an artifact holds can become code in run.py
# ------------------------------------------------------------------------------------------------
import copy  # noqa: E402
import json  # noqa: E402
from collections.abc import Iterator  # noqa: E402
from typing import Any  # noqa: E402

SNAPSHOT_STORE = Path(__file__).parent / "roots" / "test-snapshot" / "tensorviz_artifacts"
#: a heatmap (NumPy, inline code) and a graph (PyTorch, a model file), as the build stored them
BASES = {p.stem[:8]: json.loads(p.read_text("utf-8")) for p in sorted(SNAPSHOT_STORE.glob("*.json"))}
PAYLOADS = [
    'x"""; __import__("os").system("touch pwned"); """',
    "x'''; __import__('os').system('touch pwned'); '''",
    "a\nimport os; os.system('touch pwned')\n#",
    'q"\r\n\\" + __import__("os").getcwd() + "\u2028{0}}',
]


def _string_places(value: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[tuple[Any, ...], bool]]:
    """Every string in ``value``: (its path, whether it is a dict key rather than a value)."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield (*path, key), True
            yield from _string_places(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _string_places(item, (*path, index))
    elif isinstance(value, str):
        yield path, False


def _with(artifact: dict[str, Any], path: tuple[Any, ...], is_key: bool, payload: str) -> dict[str, Any]:
    changed = copy.deepcopy(artifact)
    parent = changed
    for step in path[:-1]:
        parent = parent[step]
    if is_key:
        parent[payload + path[-1]] = parent.pop(path[-1])
    else:
        parent[path[-1]] = payload + parent[path[-1]]
    return changed


def _shape(code: str) -> str:
    """The statements of ``code`` with every constant blanked: equal shapes run the same code."""
    tree = ast.parse(code)
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant):
            node.value = None
    return ast.dump(tree)


@pytest.mark.parametrize("base", sorted(BASES))
def test_no_artifact_string_becomes_code_in_run_py(base: str) -> None:
    """Every string of a stored artifact (values and keys), given quotes, newlines and ``\"\"\"``,
    leaves run.py's statements as they are with the benign value: the payload stays a value.

    run.py is a header of values and a body that is the same for every artifact: the whole script
    must end with that body, and its header parse (complete statements, strings closed) to the
    benign header's statements; so the whole script does too, without parsing 12 kB per case."""
    artifact = BASES[base]
    body = reproduce.script_body(artifact["data"]["kind"])
    benign_code = reproduce.run_py(artifact)
    assert benign_code.endswith(body) and "def reproduce():" in body
    benign = _shape(benign_code[:-len(body)])
    assert _shape(benign_code) == _shape(benign_code[:-len(body)] + "\n" + body)
    places = list(_string_places(artifact))
    assert len(places) > 20 and any(p == ("lessonId",) for p, _ in places)
    made = 0
    for path, is_key in places:
        for payload in PAYLOADS:
            hostile = _with(artifact, path, is_key, payload)
            try:
                code = reproduce.run_py(hostile)
            except KeyError:
                assert is_key, (path, payload)  # only a renamed key that run.py needs makes no script
                continue
            except LookupError:  # a kind of another name: no kind of that name, so no script
                assert path == ("data", "kind"), (path, payload)
                continue
            made += 1
            assert code.endswith(body), (path, is_key, payload)
            assert _shape(code[:-len(body)]) == benign, (path, is_key, payload)
    assert made > 0.8 * len(places) * len(PAYLOADS)  # nearly every place was tried in a real script


def test_every_committed_artifact_may_have_its_downloads() -> None:
    """The download checks (issue 24, point 25) refuse hostile fields, not the course's own artifacts."""
    from sphinx_tensorviz.features.downloads.checked import check_download_fields

    repo = Path(__file__).resolve().parent.parent
    paths = [*repo.glob("lessons/tensorviz_artifacts/*.json"), *repo.glob("docs/tensorviz_artifacts/*.json"),
             *SNAPSHOT_STORE.glob("*.json")]
    assert len(paths) > 20
    for path in paths:
        check_download_fields(json.loads(path.read_text("utf-8")))
