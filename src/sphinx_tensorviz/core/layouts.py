"""Names of activation layouts; importable at read time (no NumPy), used by ``:layout:``."""

from __future__ import annotations

__all__ = ["LAYOUTS", "normalise_layout"]

#: Layout name -> the names of its drawn axes, in order.
LAYOUTS: dict[str, tuple[str, ...]] = {
    "tokens": ("token", "feature"),
    "features": ("feature",),
    "channels": ("channel", "height", "width"),
    # Flax and most JAX code keep channels last (N, H, W, C); drawn as channel maps all the same
    "channels-last": ("height", "width", "channel"),
    "heads": ("head", "query token", "key token"),
}


def normalise_layout(text: str) -> str:
    """``"channels x H x W"`` or ``"channels"`` -> ``"channels"``; ValueError names the choices."""
    spelled = " ".join(str(text).strip().lower().replace("×", "x").split())
    if spelled in ("h x w x channels", "h x w x c", "hwc", "nhwc", "channels last", "channels_last"):
        return "channels-last"
    word = spelled.split(" x ")[0].split()[0] if spelled else ""
    aliases = {"token": "tokens", "feature": "features", "channel": "channels", "head": "heads"}
    word = aliases.get(word, word)
    if word not in LAYOUTS:
        raise ValueError(f"unknown layout {text!r}; use one of: tokens x features, features, "
                         "channels x H x W, H x W x channels (channels-last), heads x T x T")
    return word
