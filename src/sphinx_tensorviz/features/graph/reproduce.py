"""How ``run.py`` recomputes a graph: build the model and its inputs again, run one forward pass,
and compare the output and the token vectors of recorded module outputs.

The script's code is kept here as source text and copied into ``run.py`` with this kind's input
builder (:mod:`...execute.worker.inputs`, cut from its source), after the shared helpers, so it runs without this
package. JAX checkpoints and op outputs need the package's capture: ``tensorviz verify`` checks those.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ...execute.reproduce import definitions
from ...execute.worker import inputs as input_builder

CODE = '''
def _model_arguments(factory):
    """A model factory gets the seed, never a JAX key (as in the worker that recorded the figure)."""
    return seeded_arguments(factory, RECORD["options"]["model_args"] or {}, RECORD["seed"], RECORD["backend"],
                            key=False)


def reproduce():
    """Run the recorded computation again; returns what the artifact stored, recomputed."""
    seed_everything(RECORD["backend"], RECORD["seed"])
    module = _load_entry()
    function = getattr(module, RECORD["function"]) if RECORD["function"] else None
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
'''


def script() -> str:
    """The shared input builder (cut from :mod:`...execute.worker.inputs`), then this kind's ``reproduce()``."""
    inputs = definitions(Path(input_builder.__file__), ("InputSpecError", "numpy_input", "build_call",
                                                                "_input_name"))
    return "\n\n".join([*inputs, CODE.strip("\n")])


def expected_values(artifact: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Every recorded array by name, with the dtype it was computed in (``None``: not recorded)."""
    data = artifact["data"]
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


def framework_values(artifact: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """What ``:frameworks:`` compares (:mod:`...execute.frameworks_points`): what ``run.py`` compares, and
    every checkpoint recorded as a token's vector, JAX's too (both captures record them, by the same
    module paths; ``run.py`` cannot recompute JAX's). Channel maps are left out: their layout is the
    framework's own (NCHW, NHWC), so two correct ports would record them differently."""
    expected = expected_values(artifact)
    for name, record in (artifact["data"].get("activations") or {}).items():
        if record.get("layout", "tokens") == "tokens" and "values" in record:
            expected.setdefault(f"activations[{name}]", {"values": record["values"], "dtype": record.get("dtype")})
    return expected
