"""The lens's last row must be the model's own prediction: checked in the worker, against the logits
the model returned from the same forward pass.

A model may do more after its last block than its final norm and unembedding: a logit soft-cap
(Gemma 2), a scale, a bias added outside the unembedding module. The found pieces would then draw a
last row that is not what the model predicts, and words that say it is; such a lens is refused
with what to name instead. A model that returns no logits (a loss, a dict without ``logits``,
something of another shape) is not compared.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...execute.worker.loader import BadResult
from ...execute.worker.results import to_numpy

#: how far the last row's logits may be from the model's, relative to the largest logit: float32, and
#: 16-bit floats (the read-out may run in another order than the model's own)
RELATIVE, HALF_RELATIVE = 1e-3, 2e-2


def returned_logits(output: Any) -> Any | None:
    """The first batch row ``[T, V]`` of the logits a forward pass returned, if it returned logits."""
    found = getattr(output, "logits", None)
    if found is None and isinstance(output, (tuple, list)) and output:
        found = output[0]
    if found is None and hasattr(output, "shape"):
        found = output
    if found is None or len(getattr(found, "shape", ())) != 3:
        return None
    return to_numpy(found)[0]


def check_last_row(read_out: np.ndarray, output: Any, dtype: str, pieces: str) -> None:
    """Raise :class:`BadResult` when the last layer's read-out is not the model's own logits."""
    own = returned_logits(output)
    if own is None or own.shape != read_out.shape:
        return
    largest = float(np.abs(own).max()) or 1.0
    relative = HALF_RELATIVE if dtype in ("bfloat16", "float16") else RELATIVE
    difference = float(np.abs(read_out - own).max())
    if difference > relative * largest:
        raise BadResult(f"the last layer read out through {pieces} is not the model's own logits (they differ by "
                        f"up to {difference:.3g}, the largest logit is {largest:.3g}): the model does more after "
                        "its last block (a logit soft-cap, a scale?). Give :unembed: as file.py:function "
                        "(model, hidden) -> logits that does all of it, or name the pieces with :final-norm:")
