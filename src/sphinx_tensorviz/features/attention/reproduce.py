"""How ``run.py`` recomputes an attention grid: build the model and its inputs again, capture the
weights of one forward pass the same way, and return the chosen maps.

The script's code is kept here as source text and copied into ``run.py`` with the shared input
builder and this kind's captures (cut from their sources), so it runs without this package.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ...execute.reproduce import definitions
from ...execute.worker import inputs as input_builder

HERE = Path(__file__).parent

CODE = '''
def reproduce():
    """Run the recorded forward pass again; returns the chosen maps' weights, recomputed."""
    seed_everything(RECORD["backend"], RECORD["seed"])
    options = RECORD["options"]
    factory = getattr(_load_entry(), RECORD["function"])
    model = factory(**seeded_arguments(factory, options["model_args"] or {}, RECORD["seed"], RECORD["backend"],
                                       key=False))
    given = options["inputs"]
    ids = given if given and all(isinstance(n, int) for n in given) else None
    specs = [{"shape": [1, len(ids)], "dtype": "int64" if RECORD["backend"] == "torch" else "int32",
              "fill": "values", "values": [ids]}] if ids else given
    args, kwargs = build_call(specs, RECORD["backend"], RECORD["seed"])
    kwargs.update(options.get("call_args") or {})
    if RECORD["backend"] == "torch":
        found = torch_attention(model, args, kwargs)
    else:
        found = jax_attention(model, args)
    maps = self_attention([_array(value) for value in found], len(ids) if ids else None)
    layers = options.get("layers") or list(range(len(maps)))
    heads = options.get("heads") or list(range(min(maps[n].shape[0] for n in layers)))
    return {"weights": [weights.tolist() for _, _, weights in chosen_maps(maps, layers, heads)]}
'''


def script() -> str:
    """The input builder, the captures and the map selection (cut from their modules), then ``reproduce()``."""
    parts = [
        *definitions(Path(input_builder.__file__), ("InputSpecError", "numpy_input", "build_call", "_input_name")),
        *definitions(HERE / "capture_torch.py", ("torch_attention", "_library_attentions", "_captured_attentions",
                                                 "attention_mode", "_over_keys", "sdpa_weights")),
        *definitions(HERE / "capture_jax.py", ("TracedAttention", "jax_attention", "unmapped", "fused_weights")),
        *definitions(HERE / "data.py", ("self_attention", "chosen_maps")),
    ]
    return "\n\n".join(["import math\nfrom typing import Any", *parts, CODE.strip("\n")])


def expected_values(artifact: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Every drawn map's weights, with the dtype they were computed in."""
    data = artifact["data"]
    return {"weights": {"values": [item["weights"] for item in data["maps"]], "dtype": data.get("dtype")}}
