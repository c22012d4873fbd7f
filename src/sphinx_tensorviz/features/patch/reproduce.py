"""How ``run.py`` recomputes a patching figure: build the model again, find its pieces (or take the
named ones, for JAX), run the same batched patching and normalise the effects.

The script's code is kept here as source text and copied into ``run.py`` with the piece finder, the
patching and the normalisation (cut from their sources), so it runs without this package.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ...execute.reproduce import definitions
from ...execute.worker import causal_lm

HERE = Path(__file__).parent

CODE = '''
def reproduce():
    """Patch every place again; returns the baselines and the normalised effects, recomputed."""
    seed_everything(RECORD["backend"], RECORD["seed"])
    options = RECORD["options"]
    factory = getattr(_load_entry(), RECORD["function"])
    model = factory(**seeded_arguments(factory, options["model_args"] or {}, RECORD["seed"], RECORD["backend"],
                                       key=False))
    if hasattr(model, "eval"):
        model.eval()
    names = {name: options[name] for name in ("residual", "attention", "mlp", "head_input") if name in options}
    words = options["metric"].split()
    if words[0] == "logit-diff":
        metric = lambda logits: logit_diff(logits, int(words[1]), int(words[2]))
    else:
        where, _, name = options["metric"].rpartition(":")
        metric = getattr(import_file(HERE / where, "tensorviz_metric_" + Path(where).stem), name)
    if RECORD["backend"] == "jax":
        found = patch_jax_model(model, names, options["patch"], options["clean"], options["corrupted"], metric)
    else:
        found = patch_model(model, find_parts(model, PartNames(**names)), options["patch"], options["clean"],
                            options["corrupted"], metric, dict(options.get("call_args") or {}))
    return {"baselines": [found["clean"], found["corrupted"]],
            "effects": normalised(found["patched"], found["clean"], found["corrupted"])}
'''


def script() -> str:
    """The piece finder, the patching and the normalisation (cut from their modules), then ``reproduce()``."""
    parts = [
        *definitions(Path(causal_lm.__file__), (
            "ATTENTION_NAMES", "MLP_NAMES", "PartsNotFound", "Layer", "CausalLMParts", "PartNames", "module_at",
            "layer_count", "NO_NORM", "find_parts", "_longest_module_list", "_norm_after", "_unembedding", "_layer",
            "_child_named", "_last_projection", "head_count", "first_tensor", "with_first")),
        *definitions(HERE / "patch_torch.py", (
            "ROWS", "LOGITS_BUDGET", "rows_per_pass", "SITES", "PatchError", "site_modules", "model_logits",
            "record_clean", "patcher", "patched_logits", "metric_value", "patch_places", "patch_model")),
        *definitions(HERE / "patch_jax.py", ("PATTERN_OF", "swapped", "jax_sites", "jax_patched", "jax_logits",
                                             "jax_record", "patch_jax_model")),
        *definitions(HERE / "metric.py", ("logit_diff",)),
        *definitions(HERE / "data.py", ("NEAR_EQUAL", "NEAR_ZERO", "normalised")),
    ]
    imports = ("from collections.abc import Callable, Iterator\nfrom contextlib import ExitStack, contextmanager\n"
               "from dataclasses import dataclass, field")
    return "\n\n".join([imports, *parts, CODE.strip("\n")])


def expected_values(artifact: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The two baselines and every effect, with the dtype they were computed in."""
    data = artifact["data"]
    return {"baselines": {"values": [data["clean"], data["corrupted"]], "dtype": data.get("dtype")},
            "effects": {"values": data["effects"], "dtype": data.get("dtype")}}


def framework_values(artifact: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """What ``:frameworks:`` compares: the baselines and the effects, each effect with the scale its
    rounding follows. An effect is ``(patched - corrupted) / (clean - corrupted)``: the two frameworks'
    metrics differ by their dtype's rounding of the metrics' magnitude, and dividing by a gap smaller
    than the metrics magnifies that, so its tolerance is the metrics' magnitude over the gap (else a
    clean and corrupted pair only a little apart would make two correct ports disagree)."""
    data, expected = artifact["data"], expected_values(artifact)
    clean, corrupted = float(data["clean"]), float(data["corrupted"])
    gap = abs(clean - corrupted)
    metrics = [abs(corrupted + effect * (clean - corrupted)) for row in data["effects"] for effect in row]
    if gap:
        expected["effects"]["scale"] = max([abs(clean), abs(corrupted), *metrics]) / gap
    return expected
