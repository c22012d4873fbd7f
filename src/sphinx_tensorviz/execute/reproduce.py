"""Generate ``run.py``: a standalone script that repeats a recorded execution and compares.

The script carries its own copies of the input builder and the seeding code
(their source is copied from this package, so the two never drift apart) and
needs only the frameworks in ``requirements.txt`` and the model files beside it.
"""

from __future__ import annotations

import ast
import io
import json
from functools import cache
from pathlib import Path
from typing import Any

from .tolerance import OUTPUT_VALUES_LIMIT

_MAIN = '''

def _load_entry():
    path = HERE / RECORD["entry"]
    sys.path[:0] = [str(path.parent), str(HERE)]
    return import_file(path, path.stem)


def _array(value):
    if hasattr(value, "detach"):
        value = value.detach().cpu().numpy()
    return np.asarray(value, dtype=np.float64)


def _model_arguments(factory):
    """A model factory gets the seed, never a JAX key (as in the worker that recorded the figure)."""
    return seeded_arguments(factory, RECORD["options"]["model_args"] or {}, RECORD["seed"], RECORD["backend"],
                            key=False)


def reproduce():
    """Run the recorded computation again; returns what the artifact stored, recomputed."""
    seed_everything(RECORD["backend"], RECORD["seed"])
    module = _load_entry()
    function = getattr(module, RECORD["function"]) if RECORD["function"] else None
    if RECORD["directive"] == "tv-heatmap":
        if function is None:  # the code's module-level ``result``
            value = module.result
        else:
            value = function(**seeded_arguments(function, RECORD["inputs"] or {}, RECORD["seed"], RECORD["backend"]))
        if isinstance(value, dict):
            value = value["values"]
        return {"values": _array(value).tolist()}
    args, kwargs = build_call(RECORD["options"]["inputs"], RECORD["backend"], RECORD["seed"])
    if RECORD["backend"] != "torch":
        fn = function(**_model_arguments(function))
        import jax  # a tuple, dict or scan's (carry, ys): its first array, as the capture recorded

        return {"output": _array(jax.tree_util.tree_leaves(fn(*args))[0]).ravel()[:OUTPUT_VALUES].tolist()}
    import torch

    model = function(**_model_arguments(function))
    model.eval()
    recorded, hooks = {}, []
    modules = dict(model.named_modules())
    for key in RECORD["expected"]:
        name = key[len("activations["):-1] if key.startswith("activations[") else None
        if name not in modules:
            continue  # the output, or an op's output: only the capture can tell which call made it
        def keep(_module, _inputs, output, name=name):
            recorded[name] = output[0] if isinstance(output, tuple) else output
        hooks.append(modules[name].register_forward_hook(keep))
    with torch.no_grad():
        output = model(*args, **kwargs, **(RECORD["options"].get("call_args") or {}))
    while not hasattr(output, "shape"):  # a tuple, dict or ModelOutput: its first tensor
        output = next(v for v in (output.values() if hasattr(output, "values") else output)
                      if hasattr(v, "shape") or isinstance(v, (tuple, list, dict)))
    for hook in hooks:
        hook.remove()
    got = {"output": _array(output).ravel()[:OUTPUT_VALUES].tolist()}
    for name, value in recorded.items():
        array = _array(value)
        token = RECORD["expected"][f"activations[{name}]"]["token"]
        got[f"activations[{name}]"] = array.reshape(-1, array.shape[-2], array.shape[-1])[0, token].tolist()
    return got


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


def expected_values(artifact: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Every recorded array by name, with the dtype it was computed in (``None``: not recorded)."""
    data = artifact["data"]
    if data["kind"] == "heatmap":
        return {"values": {"values": data["values"], "dtype": data.get("dtype")}}
    expected: dict[str, dict[str, Any]] = {}
    output = data.get("output") or {}
    if "values" in output:
        expected["output"] = {"values": output["values"], "dtype": output.get("dtype")}
    if artifact["request"]["backend"] != "torch":
        return expected  # JAX checkpoints need the package's jaxpr capture: `tensorviz verify` checks them
    modules = {n["id"] for n in data.get("layers") or () if n.get("label", n["id"]) == n["id"]}
    for name, record in (data.get("activations") or {}).items():
        if record.get("layout", "tokens") != "tokens" or name not in modules:
            continue  # run.py recomputes token vectors of module outputs (ops and maps: only the capture)
        expected[f"activations[{name}]"] = {"values": record["values"], "dtype": record.get("dtype"),
                                            "token": record["token"]}
    return expected


def run_py(artifact: dict[str, Any], entry: str | None = None) -> str:
    """The script; ``entry`` names the code file beside it when it differs from the recorded one
    (inline code is saved as a file of its own)."""
    from .determinism import worker_environment

    request = artifact["request"]
    record = {
        "directive": request["directive"], "backend": request["backend"], "entry": entry or request["entry"],
        "function": request["function"], "inputs": request["inputs"], "seed": request["seed"],
        "options": request.get("options", {}), "expected": expected_values(artifact),
    }
    environment = worker_environment("cpu")
    # Every value of the artifact enters the script through repr(), as data: a lesson id or a name
    # that holds quotes or newlines (the artifact may come from a shared store) cannot become code.
    header = (
        '"""Reproduce a recorded tensorviz figure (its artifact: ARTIFACT below; its lesson: LESSON).\n\n'
        "Usage: python run.py [--check]   (prints the recomputed values and, per recorded array, the\n"
        "largest difference and the tolerance its dtype allows; --check exits non-zero when a value\n"
        "is outside it).\n"
        '"""\n\n'
        "from __future__ import annotations\n\n"
        "import importlib.util\nimport inspect\nimport json\nimport os\nimport pathlib\nimport random\nimport sys\n"
        "import types\nfrom pathlib import Path\nfrom typing import Any\n\n"
        f"os.environ.update({dict(sorted(environment.items()))!r})\n\n"
        "import numpy as np\n\n"
        f"ARTIFACT = {str(artifact['contentHash'])[:16]!r}\n"
        f"LESSON = {str(artifact['lessonId'])!r}\n"
        "HERE = pathlib.Path(__file__).resolve().parent\n"
        f"OUTPUT_VALUES = {int(OUTPUT_VALUES_LIMIT)!r}\n"
        f"RECORD = json.loads({json.dumps(record, sort_keys=True)!r})\n\n\n"
    )
    return header + script_body()


@cache
def script_body() -> str:
    """Everything after the header: the same for every artifact, so no artifact value can reach it."""
    shared = "\n\n".join([*_sources("worker/loader.py", ("BadResult", "import_file", "seeded_arguments")),
                           *_sources("../features/graph/inputs.py", ("InputSpecError", "numpy_input", "build_call", "_input_name")),
                           *_sources("determinism.py", ("seed_everything",)),
                           *_sources("tolerance.py", ("FLOAT_EPS", "RTOL_ULPS", "RTOL_ULPS_HALF", "ATOL_ULPS",
                                                      "NOISE_ULPS", "ASSUMED_DTYPE", "is_exact", "default_tolerance",
                                                      "within"))])
    return shared + _MAIN


@cache
def _sources(module_file: str, names: tuple[str, ...]) -> tuple[str, ...]:
    """The source of top-level definitions (functions, classes, constants) of a module beside this
    one, read without importing it (importing ``inputs`` would import NumPy into every build that
    writes a page)."""
    text = (Path(__file__).parent / module_file).read_text("utf-8")
    lines = io.StringIO(text, newline="").readlines()  # split once (get_source_segment splits per node)
    found: dict[str, str] = {}
    for node in ast.parse(text).body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            found[node.name] = _segment(lines, node)
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


def requirements_txt(artifact: dict[str, Any]) -> str:
    env = artifact["environment"]
    lines = [f"# the environment that recorded artifact {artifact['contentHash'][:16]} (Python {env['python']})"]
    for package in dict.fromkeys((env.get("framework"), "numpy")):
        if package and package in env:
            version = env[package].split("+")[0]
            lines.append(f"{'jax[cpu]' if package == 'jax' else package}=={version}")
    return "\n".join(lines) + "\n"
