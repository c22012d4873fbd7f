"""Each named block's output of one eager JAX call (a Flax NNX or Equinox model), read out through
the named final norm and unembedding.

JAX has no hooks: each block object is given, for the call, a subclass of its own class whose
``__call__`` keeps the output, and gets its class back however the call ends. The model runs
eagerly (a jitted model would hand over tracers, not values): the lens is one forward pass.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from ...execute.worker.causal_lm import CausalLMParts, first_tensor
from ...execute.worker.loader import BadResult
from ...execute.worker.results import dtype_name


@contextmanager
def kept_outputs(blocks: list[Any]) -> Iterator[dict[int, Any]]:
    """``{layer: output}`` of each block's call while the context is open."""
    kept: dict[int, Any] = {}
    classes = [type(block) for block in blocks]
    for index, (block, cls) in enumerate(zip(blocks, classes)):
        def call(self: Any, *args: Any, _index: int = index, _cls: type = cls, **kwargs: Any) -> Any:
            output = _cls.__call__(self, *args, **kwargs)
            kept.setdefault(_index, first_tensor(output))
            return output
        object.__setattr__(block, "__class__", type(cls.__name__, (cls,), {"__call__": call}))
    try:
        yield kept
    finally:
        for block, cls in zip(blocks, classes):
            object.__setattr__(block, "__class__", cls)


def jax_lens(model: Any, parts: CausalLMParts, ids: list[int]) -> tuple[list[Any], str, Any]:
    """Every layer's read-out logits ``[T, V]`` (first batch row), the dtype they are in, and what the
    model itself returned."""
    import jax.numpy as jnp

    with kept_outputs([layer.block for layer in parts.layers]) as kept:
        output = model(jnp.asarray([ids], dtype=jnp.int32))
    missing = [n for n in range(len(parts.layers)) if n not in kept]
    if missing:
        raise BadResult(f"layer {missing[0]}'s module ({parts.names.get('layers')}) was not called in the "
                        "forward pass; check :residual:")
    logits = [parts.read_out(kept[n])[0] for n in range(len(parts.layers))]
    return logits, dtype_name(logits[-1]), output
