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
    # a 1-D convolution's, pooling's or channel norm's output: one row per channel along the sequence
    "channels-length": ("channel", "position"),
    "length-channels": ("position", "channel"),  # Flax's 1-D convolutions keep channels last
}


def normalise_layout(text: str) -> str:
    """``"channels x H x W"`` or ``"channels"`` -> ``"channels"``; ValueError names the choices."""
    spelled = " ".join(str(text).strip().lower().replace("×", "x").split())
    if spelled in ("h x w x channels", "h x w x c", "hwc", "nhwc", "channels last", "channels_last"):
        return "channels-last"
    if spelled in ("channels x length", "channels x l", "c x l", "ncl", "channels-length"):
        return "channels-length"
    if spelled in ("length x channels", "l x channels", "l x c", "nlc", "length-channels"):
        return "length-channels"
    word = spelled.split(" x ")[0].split()[0] if spelled else ""
    aliases = {"token": "tokens", "feature": "features", "channel": "channels", "head": "heads"}
    word = aliases.get(word, word)
    if word not in LAYOUTS:
        raise ValueError(f"unknown layout {text!r}; use one of: tokens x features, features, "
                         "channels x H x W, H x W x channels (channels-last), channels x length, "
                         "length x channels, heads x T x T")
    return word
