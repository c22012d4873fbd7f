"""Activation patching of a JAX model (Flax NNX, or any tree of Python objects) in eager mode.

JAX has no forward hooks, so the pieces are named by module pattern (``:residual: blocks.{i}``,
``:attention:``, ``:mlp:``, ``:head-input:``) and, for one forward pass, the object at each path is
swapped for a wrapper that records or patches what flows through it, then put back. The wrapper
needs values, not tracers: call the model without ``jax.jit`` (the patching runs eagerly, so the
whole batch is still one forward pass per :func:`.patch_torch.rows_per_pass` places).

The places, the batching and the metric are :mod:`.patch_torch`'s; only the swap differs. A head's
slice is its index on the second-to-last axis where the projection's input keeps the heads apart
(``[batch, positions, heads, width]``, as ``nnx.MultiHeadAttention``'s ``out`` gets it), or its run
of the last axis where they sit side by side.

Every function here is copied into ``run.py`` (:mod:`.reproduce`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from typing import Any

from ...execute.worker.causal_lm import Layer, first_tensor, head_count, layer_count, module_at, with_first
from .patch_torch import SITES, PatchError, metric_value, patch_places, rows_per_pass

#: the pattern option that names each ``:patch:``'s module
PATTERN_OF = {"residual": "residual", "attn-out": "attention", "mlp-out": "mlp", "heads": "head_input"}


@contextmanager
def swapped(model: Any, path: str, wrap: Callable[[Any], Any]) -> Iterator[None]:
    """The object at ``path`` replaced by ``wrap(it)`` inside the block, and put back after it."""
    parent_path, _, step = path.rpartition(".")
    parent = module_at(model, parent_path) if parent_path else model
    original = module_at(model, path)
    if step.isdigit():
        parent[int(step)] = wrap(original)
    else:
        setattr(parent, step, wrap(original))
    try:
        yield
    finally:
        if step.isdigit():
            parent[int(step)] = original
        else:
            setattr(parent, step, original)


def jax_sites(model: Any, names: dict[str, str], patch: str) -> tuple[list[str], int | None]:
    """The path of each layer's patched module, and the head count (``heads`` only)."""
    for needed in ("residual", PATTERN_OF[patch]):
        if not names.get(needed):
            option = ":" + needed.replace("_", "-") + ":"
            example = {"residual": "", "head_input": ".attn.out", "mlp": ".mlp"}.get(needed, ".attn")
            raise PatchError(f"a JAX model names its pieces: give {option} (a module pattern such as "
                             f"blocks.{{i}}{example})")
    layers = layer_count(model, names["residual"])
    if not layers:
        raise PatchError(f":residual: {names['residual']!r} names no module for layer 0")
    paths = [names[PATTERN_OF[patch]].format(i=i) for i in range(layers)]
    for path in paths:
        module_at(model, path)  # a missing one says which step
    if patch != "heads":
        return paths, None
    attention = (names.get("attention") or names["head_input"].rpartition(".")[0]).format(i=0)
    heads = head_count(model, [Layer(block=None, attention=module_at(model, attention))])
    if not heads:
        raise PatchError(f"the attention at {attention!r} does not say how many heads it has (no num_heads); name "
                         "the attention module that does with :attention:")
    return paths, heads


def jax_patched(tensor: Any, rows: list[int], where: list[int], clean: Any, on_input: bool, heads: int) -> Any:
    """``tensor`` with each of ``rows`` patched at its place from ``clean`` (one row's activation)."""
    import jax.numpy as jnp

    if not on_input:
        positions = jnp.asarray(where)
        return tensor.at[jnp.asarray(rows), positions].set(clean[positions].astype(tensor.dtype))
    for row, head in zip(rows, where):
        if tensor.ndim == 4:  # [batch, positions, heads, width]
            tensor = tensor.at[row, :, head].set(clean[:, head].astype(tensor.dtype))
        else:
            width = tensor.shape[-1] // heads
            part = slice(head * width, (head + 1) * width)
            tensor = tensor.at[row, :, part].set(clean[:, part].astype(tensor.dtype))
    return tensor


def jax_logits(model: Any, ids: Any) -> Any:
    logits = first_tensor(model(ids))
    if getattr(logits, "ndim", 0) != 3:
        raise PatchError(f"the model returned {type(logits).__name__}, not logits [batch, positions, vocabulary]")
    return logits


def jax_record(model: Any, paths: list[str], on_input: bool, ids: Any) -> tuple[Any, list[Any]]:
    """The clean logits and each patched module's activation (first row)."""
    kept: list[Any] = []

    def recorder(original: Any) -> Callable[..., Any]:
        def call(*args: Any, **kwargs: Any) -> Any:
            out = original(*args, **kwargs)
            kept.append(first_tensor(args if on_input else out)[0])
            return out
        return call

    with ExitStack() as stack:
        for path in paths:
            stack.enter_context(swapped(model, path, recorder))
        logits = jax_logits(model, ids)
    return logits, kept


def patch_jax_model(model: Any, names: dict[str, str], patch: str, clean_ids: list[int], corrupted_ids: list[int],
                    metric: Callable[[Any], Any]) -> dict[str, Any]:
    """:func:`.patch_torch.patch_model` for a JAX model whose pieces ``names`` gives."""
    import jax.numpy as jnp

    paths, heads = jax_sites(model, names, patch)
    _, on_input = SITES[patch]
    clean_logits, clean = jax_record(model, paths, on_input, jnp.asarray([clean_ids], dtype=jnp.int32))
    corrupted = jnp.asarray([corrupted_ids], dtype=jnp.int32)
    corrupted_logits = jax_logits(model, corrupted)
    across = heads if on_input else len(clean_ids)
    places = patch_places(len(paths), across)
    values: list[float] = []
    rows = rows_per_pass(tuple(clean_logits.shape))
    for start in range(0, len(places), rows):
        chunk = places[start:start + rows]

        def patcher(layer: int) -> Callable[[Any], Any]:
            rows = [b for b, (at, _) in enumerate(chunk) if at == layer]
            where = [index for at, index in chunk if at == layer]

            def wrap(original: Any) -> Callable[..., Any]:
                def call(*args: Any, **kwargs: Any) -> Any:
                    if on_input:
                        return original(jax_patched(args[0], rows, where, clean[layer], True, heads), *args[1:],
                                        **kwargs)
                    out = original(*args, **kwargs)
                    return with_first(out, jax_patched(first_tensor(out), rows, where, clean[layer], False, 0))
                return call
            return wrap

        with ExitStack() as stack:
            for layer, path in enumerate(paths):
                if any(at == layer for at, _ in chunk):
                    stack.enter_context(swapped(model, path, patcher(layer)))
            logits = jax_logits(model, jnp.repeat(corrupted, len(chunk), axis=0))
        values.extend(metric_value(metric, row) for row in logits)
    return {
        "clean": metric_value(metric, clean_logits[0]),
        "corrupted": metric_value(metric, corrupted_logits[0]),
        "patched": [values[n * across:(n + 1) * across] for n in range(len(paths))],
        "dtype": str(clean_logits.dtype),
    }
