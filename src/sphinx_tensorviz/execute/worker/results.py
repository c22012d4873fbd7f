"""Turn what lesson code returns into artifact ``data``, refusing what cannot be drawn.

Runs inside the worker. Raises :class:`BadResult` with a message for the author
when the value has the wrong type, shape, or non-finite entries.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .loader import BadResult

__all__ = ["BadResult", "dtype_name", "is_complex", "to_numpy"]


def dtype_name(value: Any) -> str:
    """The dtype ``value`` was computed in (``float32``, ``bfloat16``, ``int64``...).

    Stored beside the values (which are kept as float64 JSON numbers), so that ``verify`` can
    compare a re-run within what that dtype can reproduce on another machine.
    """
    dtype = getattr(value, "dtype", None)
    if dtype is None:
        try:
            dtype = np.asarray(value).dtype
        except (TypeError, ValueError):
            return "float64"
    name = str(dtype).removeprefix("torch.")
    return "float64" if name in ("object", "double") else {"float": "float32", "half": "float16"}.get(name, name)


def to_numpy(value: Any) -> np.ndarray:
    """A float64 array from a NumPy, PyTorch or JAX array (or nested lists); of a complex array,
    its real part (callers that draw it say so: see :func:`is_complex`)."""
    if hasattr(value, "detach"):  # torch.Tensor, without importing torch here
        tensor = value.detach().cpu()
        value = (tensor.float() if str(tensor.dtype) == "torch.bfloat16" else tensor).numpy()  # NumPy has no bfloat16
    if isinstance(value, (str, bytes)) or value is None:
        raise BadResult(f"expected an array, got {type(value).__name__}")
    if is_complex(value):
        value = np.real(np.asarray(value))
    try:
        array = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise BadResult(f"expected a numeric array, got {type(value).__name__} ({exc})") from None
    return array


def is_complex(value: Any) -> bool:
    """Whether ``value`` holds complex numbers (a FFT, a rotary embedding in complex form): drawn
    from its real part, which the page must say, as the imaginary part is lost."""
    return dtype_name(value).startswith("complex")
