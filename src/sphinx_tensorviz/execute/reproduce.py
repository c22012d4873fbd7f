"""Generate ``run.py``: a standalone script that repeats a recorded execution and compares.

The script carries its own copies of the loader, the seeding code and the tolerances (their
source is copied from this package, so the two never drift apart), then the figure kind's
``reproduce()`` (:attr:`~..core.kinds.FigureKind.reproduce`: a graph adds its input builder), and
needs only the frameworks in ``requirements.txt`` and the model files beside it.
"""

from __future__ import annotations

import ast
import importlib
import io
import json
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import Any

from ..core.hashing import sha256_text
from ..core.kinds import FigureKind, kind_named
from ..core.locations import recorded_project_file
from .tolerance import OUTPUT_VALUES_LIMIT

_SHARED = '''

def _load_entry():
    path = HERE / RECORD["entry"]
    sys.path[:0] = [str(path.parent), str(HERE)]
    return import_file(path, path.stem)


def _array(value):
    if hasattr(value, "detach"):
        value = value.detach().cpu().numpy()
    return np.asarray(value, dtype=np.float64)

'''

_COMPARE_FUNCTION = '''

def compare(got, expected):
    """Per recorded array: the largest difference, the tolerance its dtype allows, and whether it held."""
    report = {}
    for name, record in expected.items():
        old = np.ravel(np.asarray(record["values"], dtype=np.float64))
        new = np.ravel(np.asarray(got.get(name, []), dtype=np.float64))
        dtype = record.get("dtype") or ASSUMED_DTYPE
        rtol, atol = default_tolerance(dtype, float(np.max(np.abs(old))) if old.size else 0.0)
        if old.shape != new.shape:
            report[name] = {"dtype": dtype, "ok": False, "largestDifference": None, "rtol": rtol, "atol": atol}
            continue
        ok = all(within(float(a), float(b), rtol, atol) for a, b in zip(old, new))
        worst = float(np.max(np.abs(new - old))) if old.size else 0.0
        report[name] = {"dtype": dtype, "ok": ok, "largestDifference": worst, "rtol": rtol, "atol": atol}
    return report
'''

_MAIN = '''

if __name__ == "__main__":
    got = reproduce()
    report = compare(got, RECORD["expected"])
    differences = [r["largestDifference"] for r in report.values()]
    worst = float("inf") if None in differences else max(differences, default=0.0)
    print(json.dumps({"reproduced": got, "arrays": report, "largestDifference": worst}))
    failed = [name for name, r in report.items() if not r["ok"]]
    if "--check" in sys.argv and failed:
        sys.exit("not reproduced within the dtype's tolerance: " + ", ".join(failed))
'''
_COMPARE = _COMPARE_FUNCTION.rstrip("\n") + "\n" + _MAIN


def run_py(artifact: dict[str, Any], entry: str | None = None) -> str:
    """The script; ``entry`` names the code file beside it when it differs from the recorded one
    (inline code is saved as a file of its own)."""
    kind = reproducible_kind(artifact)
    # Every value of the artifact enters the script through repr(), as data: a lesson id or a name
    # that holds quotes or newlines (the artifact may come from a shared store) cannot become code.
    header = (
        '"""Reproduce a recorded tensorviz figure (its artifact: ARTIFACT below; its lesson: LESSON).\n\n'
        "Usage: python run.py [--check]   (prints the recomputed values and, per recorded array, the\n"
        "largest difference and the tolerance its dtype allows; --check exits non-zero when a value\n"
        "is outside it).\n"
        '"""\n\n'
        + _preamble() +
        f"ARTIFACT = {str(artifact['contentHash'])[:16]!r}\n"
        f"LESSON = {str(artifact['lessonId'])!r}\n"
        "HERE = pathlib.Path(__file__).resolve().parent\n"
        f"OUTPUT_VALUES = {int(OUTPUT_VALUES_LIMIT)!r}\n"
        f"{record_line(artifact, entry)}\n\n\n"
    )
    return header + script_body(kind.name)


def reproducible_kind(artifact: dict[str, Any]) -> FigureKind:
    """The artifact's kind, if it has a ``run.py`` (else ``LookupError``)."""
    kind = kind_named(artifact["data"]["kind"])
    if kind is None or not kind.reproduce:
        raise LookupError(f"figures of kind {artifact['data']['kind']!r} have no run.py")
    return kind


def record_line(artifact: dict[str, Any], entry: str | None = None) -> str:
    """``RECORD = ...``: the recorded request and values the kind's ``reproduce()`` reads, as data."""
    request = artifact["request"]
    record = {
        "directive": request["directive"], "backend": request["backend"], "entry": entry or request["entry"],
        "function": request["function"], "inputs": request["inputs"], "seed": request["seed"],
        "options": request.get("options", {}),
        "expected": _reproduction(reproducible_kind(artifact)).expected_values(artifact),
    }
    return f"RECORD = json.loads({json.dumps(record, sort_keys=True)!r})"


def _preamble() -> str:
    """The imports, with the deterministic environment set before NumPy is imported."""
    from .determinism import worker_environment

    environment = worker_environment("cpu")
    return ("from __future__ import annotations\n\n"
            "import importlib.util\nimport inspect\nimport json\nimport os\nimport pathlib\nimport random\nimport sys\n"
            "import types\nfrom pathlib import Path\nfrom typing import Any\n\n"
            f"os.environ.update({dict(sorted(environment.items()))!r})\n\n"
            "import numpy as np\n\n")


def notebook_setup(depth: int = 0) -> str:
    """What a notebook runs once before its figures' cells: ``run.py``'s imports, helpers and
    comparison, with the project's folder found from the notebook's (the kernel's, ``depth`` folders
    below it) in place of the script's."""
    return (_preamble() + f"HERE = pathlib.Path.cwd(){'.parent' * depth}\n"
            f"OUTPUT_VALUES = {int(OUTPUT_VALUES_LIMIT)!r}\n\n" + _shared() + _COMPARE_FUNCTION).rstrip("\n") + "\n"


def kind_script(artifact: dict[str, Any]) -> str:
    """The kind's ``reproduce()`` (with its helpers), as ``run.py`` carries it."""
    return _reproduction(reproducible_kind(artifact)).script().strip("\n") + "\n"


@cache
def script_body(kind_name: str) -> str:
    """Everything after the header: the same for every artifact of a kind, so no artifact value can
    reach it: the shared helpers, the kind's ``reproduce()``, the comparison."""
    kind = kind_named(kind_name)
    assert kind is not None  # run_py looked it up
    return _shared() + "\n" + _reproduction(kind).script().strip("\n") + "\n" + _COMPARE


@cache
def _shared() -> str:
    here = Path(__file__).parent
    shared = "\n\n".join([*definitions(here / "worker" / "loader.py", ("BadResult", "import_file", "seeded_arguments")),
                           *definitions(here / "determinism.py", ("seed_everything",)),
                           *definitions(here / "tolerance.py", ("FLOAT_EPS", "RTOL_ULPS", "RTOL_ULPS_HALF", "ATOL_ULPS",
                                                               "NOISE_ULPS", "ASSUMED_DTYPE", "is_exact",
                                                               "default_tolerance", "within"))])
    return shared + _SHARED


def _reproduction(kind: FigureKind) -> ModuleType:
    """The kind's part of the script (:attr:`~..core.kinds.FigureKind.reproduce`)."""
    return importlib.import_module(str(kind.reproduce))


@cache
def definitions(module_file: Path, names: tuple[str, ...]) -> tuple[str, ...]:
    """The source of top-level definitions (functions, classes, constants) of a module, read without
    importing it (importing ``inputs`` would import NumPy into every build that writes a page). A
    kind's reproduction copies its own helpers into ``run.py`` with it."""
    text = module_file.read_text("utf-8")
    lines = io.StringIO(text, newline="").readlines()  # split once (get_source_segment splits per node)
    found: dict[str, str] = {}
    for node in ast.parse(text).body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            # with its decorators' lines: a ``@dataclass`` cut without one is a class that takes no arguments
            decorated = min((d.lineno for d in node.decorator_list), default=node.lineno) - 1
            found[node.name] = "".join(lines[decorated:node.lineno - 1]) + _segment(lines, node)
        elif isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            found[node.targets[0].id] = _segment(lines, node)
    return tuple(found[name] for name in names)


def _segment(lines: list[str], node: ast.stmt) -> str:
    """The source text of ``node``, as :func:`ast.get_source_segment` gives it (offsets are UTF-8 bytes)."""
    first, last = node.lineno - 1, (node.end_lineno or node.lineno) - 1
    start, end = node.col_offset, node.end_col_offset
    if first == last:
        return lines[first].encode()[start:end].decode()
    return "".join([lines[first].encode()[start:].decode(), *lines[first + 1:last],
                    lines[last].encode()[:end].decode()])


def code_files(artifact: dict[str, Any], srcdir: Path, inline_code: str | None, inline_name: str) -> dict[str, bytes]:
    """The project files the recorded run read, by path relative to the project, that still hold what
    it read (nothing outside the project); code written in the directive body (``inline_code``, if it
    is what ran) as ``inline_name``. What ``run.py`` and a lesson's notebook need beside them."""
    files: dict[str, bytes] = {}
    if inline_code is not None and sha256_text(inline_code) == artifact["request"]["files"].get("<inline>"):
        files[inline_name] = inline_code.encode()
    root = srcdir.resolve()
    for relative, recorded in artifact["request"]["files"].items():
        if relative == "<inline>":
            continue
        source = recorded_project_file(srcdir, relative, recorded)
        if source is not None:
            files[source.relative_to(root).as_posix()] = source.read_bytes()
    return files


def requirements_txt(artifact: dict[str, Any]) -> str:
    env = artifact["environment"]
    lines = [f"# the environment that recorded artifact {artifact['contentHash'][:16]} (Python {env['python']})"]
    for package in dict.fromkeys((env.get("framework"), "numpy")):
        if package and package in env:
            version = env[package].split("+")[0]
            lines.append(f"{'jax[cpu]' if package == 'jax' else package}=={version}")
    return "\n".join(lines) + "\n"
