"""Activation patching of a PyTorch model: run the clean and the corrupted input once, then the
corrupted input again with one activation replaced by its clean value, for every place.

Why batched: a 2-layer, 32-position model has 64 places to patch, an 8-head one 16 per layer; one
forward pass per place would pay the model's fixed cost (Python, hooks, small matrix products) 64
times. Instead the corrupted input is repeated as many rows as places (up to :data:`ROWS` per pass,
fewer where the logits of that many rows would pass :data:`LOGITS_BUDGET`), and one hook per
patched module replaces, in row ``b``, the activation at row ``b``'s own place only. Rows do not
interact in a causal LM, so each row is the un-batched patched run.

What is patched, per layer (the modules come from :mod:`...execute.worker.causal_lm`):

- ``residual``: the block's output (the residual stream after it) at one position;
- ``attn-out`` / ``mlp-out``: the attention's / MLP's output at one position (before it is added);
- ``heads``: one head's slice of the attention output projection's input, at every position (its
  last axis is heads x head width, side by side).

Every function here is copied into ``run.py`` (:mod:`.reproduce`) with the two helpers it takes from
``causal_lm``, so it uses nothing else of the package.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ...execute.worker.causal_lm import first_tensor, with_first

#: the most patched rows in one forward pass
ROWS = 64
#: the most logits one forward pass may return (rows x positions x vocabulary; 128 MB of float32): a
#: real vocabulary over a long input gets fewer rows per pass
LOGITS_BUDGET = 1 << 25


def rows_per_pass(logits_shape: tuple[int, ...]) -> int:
    """How many patched rows go in one forward pass, given one row's logits ``[1, T, V]``."""
    return max(1, min(ROWS, LOGITS_BUDGET // max(1, logits_shape[-2] * logits_shape[-1])))

#: what each ``:patch:`` replaces: the layer's piece (a :class:`causal_lm.Layer` field), and whether
#: it is the piece's input (the heads, side by side) rather than its output
SITES = {"residual": ("block", False), "attn-out": ("attention", False), "mlp-out": ("mlp", False),
         "heads": ("head_input", True)}


class PatchError(Exception):
    """The model or the inputs cannot be patched as asked; the message says why."""


def site_modules(layers: list[Any], patch: str) -> list[Any]:
    """Each layer's module whose activation ``patch`` replaces."""
    field, _ = SITES[patch]
    modules = [getattr(layer, field) for layer in layers]
    missing = [n for n, module in enumerate(modules) if module is None]
    if missing:
        option = {"attention": ":attention:", "mlp": ":mlp:", "head_input": ":head-input:"}.get(field, ":residual:")
        raise PatchError(f"layer {missing[0]} has no {patch} to patch (found no {field.replace('_', ' ')} module); "
                         f"name it with {option} (e.g. blocks.{{i}}.{'attn.out' if field == 'head_input' else 'attn'})")
    return modules


def model_logits(model: Any, ids: Any, kwargs: dict[str, Any]) -> Any:
    """The logits ``[batch, positions, vocabulary]`` of a forward pass (a tensor, ``.logits``, or a
    tuple's first item)."""
    out = model(ids, **kwargs)
    logits = getattr(out, "logits", None)
    if logits is None:
        logits = out[0] if isinstance(out, (tuple, list)) else out
    if getattr(logits, "ndim", 0) != 3:
        raise PatchError(f"the model returned {type(out).__name__}, not logits [batch, positions, vocabulary]")
    return logits


def record_clean(model: Any, modules: list[Any], on_input: bool, ids: Any,
                 kwargs: dict[str, Any]) -> tuple[Any, list[Any]]:
    """The clean run's logits ``[1, T, V]`` and each module's activation ``[T, width]`` (one row)."""
    kept: list[Any] = []

    def keep(module: Any, args: Any, output: Any = None) -> None:
        kept.append(first_tensor(args if on_input else output)[0].detach().clone())

    handles = [m.register_forward_pre_hook(keep) if on_input else m.register_forward_hook(keep) for m in modules]
    try:
        logits = model_logits(model, ids, kwargs)
    finally:
        for handle in handles:
            handle.remove()
    if len(kept) != len(modules):
        raise PatchError(f"not one activation per layer was recorded (layers: {len(modules)}, recorded: "
                         f"{len(kept)}): a patched module ran more or less than once per forward pass")
    return logits, kept


def patcher(places: list[tuple[int, int]], layer: int, clean: Any, on_input: bool, head_width: int) -> Callable:
    """A hook replacing, in each row whose place is in ``layer``, that place's activation by its clean value.

    A place is ``(layer, index)``: ``index`` is a position (output hooks) or a head (the input hook,
    every position of the head's slice)."""
    import torch

    rows = [b for b, (at, _) in enumerate(places) if at == layer]
    where = [index for at, index in places if at == layer]

    def patched(tensor: Any) -> Any:
        tensor = tensor.clone()
        if on_input:
            for row, head in zip(rows, where):
                part = slice(head * head_width, (head + 1) * head_width)
                tensor[row, :, part] = clean[:, part].to(tensor.dtype)
        else:
            positions = torch.tensor(where, dtype=torch.long)
            tensor[torch.tensor(rows, dtype=torch.long), positions] = clean[positions].to(tensor.dtype)
        return tensor

    def pre_hook(module: Any, args: Any) -> Any:
        return with_first(args, patched(first_tensor(args)))

    def hook(module: Any, args: Any, output: Any) -> Any:
        return with_first(output, patched(first_tensor(output)))

    return pre_hook if on_input else hook


def patched_logits(model: Any, modules: list[Any], on_input: bool, corrupted: Any, kwargs: dict[str, Any],
                   clean: list[Any], places: list[tuple[int, int]], head_width: int, rows: int) -> list[Any]:
    """The logits ``[T, V]`` of the corrupted input with each place patched, in the order of ``places``:
    ``rows`` places per forward pass, each row patching its own."""
    found: list[Any] = []
    for start in range(0, len(places), rows):
        chunk = places[start:start + rows]
        handles = []
        for layer, module in enumerate(modules):
            if any(at == layer for at, _ in chunk):
                hook = patcher(chunk, layer, clean[layer], on_input, head_width)
                handles.append(module.register_forward_pre_hook(hook) if on_input
                               else module.register_forward_hook(hook))
        try:
            logits = model_logits(model, corrupted.expand(len(chunk), -1), kwargs)
        finally:
            for handle in handles:
                handle.remove()
        found.extend(logits)
    return found


def metric_value(metric: Callable[[Any], Any], logits: Any) -> float:
    """The metric of one input's logits ``[T, V]`` as a finite float."""
    value = metric(logits)
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise PatchError(f"the metric returned {type(value).__name__}, not one number (a float or a 0-d "
                         "tensor)") from None
    if number != number or number in (float("inf"), float("-inf")):
        raise PatchError(f"the metric returned {number}: give a metric that is finite for these inputs")
    return number


def patch_places(layers: int, across: int) -> list[tuple[int, int]]:
    """Every (layer, position or head), layer by layer."""
    return [(layer, index) for layer in range(layers) for index in range(across)]


def patch_model(model: Any, parts: Any, patch: str, clean_ids: list[int], corrupted_ids: list[int],
                metric: Callable[[Any], Any], kwargs: dict[str, Any]) -> dict[str, Any]:
    """The metric of the clean run, the corrupted run and every patched run (``patched``:
    ``[layers, positions]``, or ``[layers, heads]``), as floats, and the logits' dtype."""
    import torch

    modules = site_modules(parts.layers, patch)
    _, on_input = SITES[patch]
    clean_ids_t, corrupted_t = torch.tensor([clean_ids]), torch.tensor([corrupted_ids])
    with torch.no_grad():
        clean_logits, clean = record_clean(model, modules, on_input, clean_ids_t, kwargs)
        corrupted_logits = model_logits(model, corrupted_t, kwargs)
        across, head_width = len(clean_ids), 0
        if on_input:
            if not parts.heads:
                raise PatchError("the model does not say how many attention heads it has (no num_attention_heads "
                                 "in its config, no num_heads on its attention)")
            across, head_width = parts.heads, clean[0].shape[-1] // parts.heads
        places = patch_places(len(modules), across)
        patched = patched_logits(model, modules, on_input, corrupted_t, kwargs, clean, places, head_width,
                                 rows_per_pass(tuple(clean_logits.shape)))
        values = [metric_value(metric, logits) for logits in patched]
        baselines = metric_value(metric, clean_logits[0]), metric_value(metric, corrupted_logits[0])
    return {
        "clean": baselines[0],
        "corrupted": baselines[1],
        "patched": [values[n * across:(n + 1) * across] for n in range(len(modules))],
        "dtype": str(clean_logits.dtype).removeprefix("torch."),
    }
