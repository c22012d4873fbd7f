"""How ``run.py`` recomputes a logit lens: build the model, find its pieces the same way, read each
block's output out again, and return the target's probabilities and the top-k probabilities.

The script's code is kept here as source text and copied into ``run.py`` with the shared piece
finder (``execute/worker/causal_lm.py``), this kind's captures and its NumPy arithmetic (cut from
their sources), so it runs without this package.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ...execute.reproduce import definitions
from ...execute.worker import causal_lm, results
from .verify import clear_top1

HERE = Path(__file__).parent

CODE = '''
def _piece(options, name, model):
    """(module path, function) of a :residual:/:final-norm:/:unembed: option."""
    given = options.get(name)
    if not isinstance(given, str) or given == "none":
        return None, None
    if ":" not in given:
        return given, None
    where, _, function_name = given.rpartition(":")
    function = getattr(import_file(HERE / where, "tensorviz_" + name + "_" + Path(where).stem), function_name)
    return None, (lambda hidden: function(model, hidden))


def reproduce():
    """Run the recorded forward pass again; returns the lens's probabilities, recomputed."""
    seed_everything(RECORD["backend"], RECORD["seed"])
    options = RECORD["options"]
    factory = getattr(_load_entry(), RECORD["function"])
    model = factory(**seeded_arguments(factory, options["model_args"] or {}, RECORD["seed"], RECORD["backend"],
                                       key=False))
    ids = options["inputs"]
    residual, _ = _piece(options, "residual", model)
    norm_path, norm = _piece(options, "final_norm", model)
    unembed_path, unembed = _piece(options, "unembed", model)
    names = PartNames(residual=residual, final_norm=norm_path, unembed=unembed_path)
    parts = find_parts(model, names, final_norm=NO_NORM if options.get("final_norm") == "none" else norm,
                       unembed=unembed)
    if RECORD["backend"] == "torch":
        import torch

        logits, _, _ = torch_lens(model, parts, (torch.tensor([ids]),), dict(options.get("call_args") or {}))
    else:
        logits, _, _ = jax_lens(model, parts, ids)
    k = min(options.get("top_k") or 5, int(logits[0].shape[-1]))
    chosen, _, top, _, _ = lens_arrays([_array(layer) for layer in logits], ids, options.get("target"), k)
    return {"probabilities": chosen.tolist(), "topProbabilities": top.tolist()}
'''


def script() -> str:
    """The piece finder, the captures and the arithmetic (cut from their modules), then ``reproduce()``."""
    shared = ("ATTENTION_NAMES", "MLP_NAMES", "PartsNotFound", "Layer", "CausalLMParts", "PartNames", "module_at",
              "layer_count", "NO_NORM", "find_parts", "_longest_module_list", "_norm_after", "_unembedding", "_layer",
              "_child_named", "_last_projection", "head_count", "first_tensor")
    parts = [
        *definitions(Path(causal_lm.__file__), shared),
        *definitions(Path(results.__file__), ("dtype_name",)),
        *definitions(HERE / "lens_torch.py", ("torch_lens",)),
        *definitions(HERE / "lens_jax.py", ("kept_outputs", "jax_lens")),
        *definitions(HERE / "data.py", ("softmax", "positions_and_targets", "lens_arrays")),
    ]
    imports = ("from collections.abc import Iterator, Sequence\nfrom contextlib import contextmanager\n"
               "from dataclasses import dataclass, field")
    return "\n\n".join([imports, *parts, CODE.strip("\n")])


def expected_values(artifact: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The target's probabilities and the top-k probabilities, with the dtype of the logits."""
    data = artifact["data"]
    dtype = data.get("dtype")
    return {"probabilities": {"values": data["probabilities"], "dtype": dtype},
            "topProbabilities": {"values": data["topProbabilities"], "dtype": dtype}}


def framework_values(artifact: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """What ``:frameworks:`` compares: the probabilities, the top-k probabilities, and each cell's top-1
    token (the one the figure writes), exactly, where it is clear: ahead of the second by more than the
    tolerance (``mask``: a near tie may fall either way in two frameworks computing the same model; the
    comparison compares the cells clear in both). Sorted top-k probabilities alone would not see two
    tokens' probabilities swapped."""
    data, expected = artifact["data"], expected_values(artifact)
    clear = clear_top1(data, data.get("dtype"))
    expected["top1"] = {"values": [[-1 if n is None else n for n in row] for row in clear], "dtype": "int64",
                        "mask": [[n is not None for n in row] for row in clear]}
    return expected
