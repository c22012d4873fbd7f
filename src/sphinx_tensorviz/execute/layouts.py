"""Names of activation layouts; importable at read time (no NumPy), used by ``:layout:``."""

from __future__ import annotations

__all__ = ["LAYOUTS", "normalise_layout"]

#: Layout name -> the names of its drawn axes, in order.
LAYOUTS: dict[str, tuple[str, ...]] = {
    "tokens": ("token", "feature"),
    "features": ("feature",),
    "channels": ("channel", "height", "width"),
    "heads": ("head", "query token", "key token"),
}


def normalise_layout(text: str) -> str:
    """``"channels x H x W"`` or ``"channels"`` -> ``"channels"``; ValueError names the choices."""
    word = str(text).strip().lower().replace("×", "x").split(" x ")[0].split()[0] if str(text).strip() else ""
    aliases = {"token": "tokens", "feature": "features", "channel": "channels", "head": "heads"}
    word = aliases.get(word, word)
    if word not in LAYOUTS:
        raise ValueError(f"unknown layout {text!r}; use one of: tokens x features, features, "
                         "channels x H x W, heads x T x T")
    return word
