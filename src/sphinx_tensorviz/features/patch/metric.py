"""``:metric:``: the number a patching figure compares, a function of one input's logits.

Either the built-in ``logit-diff A B`` (token ``A``'s logit minus token ``B``'s at the last position:
how much the model prefers the clean answer to the corrupted one), or ``file.py:function`` in the
course, called as ``function(logits)`` with a ``[positions, vocabulary]`` tensor of the model's
framework and returning one number (a float or a 0-d tensor). Read here while the page is read (no
framework imported); :func:`logit_diff` is also copied into ``run.py``.
"""

from __future__ import annotations

from typing import Any

BUILT_IN = "logit-diff"


def metric_option(argument: str | None) -> str:
    """``logit-diff A B`` (token ids), written back in one spacing; or ``file.py:function``."""
    words = (argument or "").split()
    if words and words[0] == BUILT_IN:
        if len(words) != 3 or not all(word.isdigit() for word in words[1:]):
            raise ValueError(f"give {BUILT_IN} and two token ids, like {BUILT_IN} 3 5")
        return " ".join(words)
    text = (argument or "").strip()
    where, sep, name = text.rpartition(":")
    if not (sep and where.endswith(".py") and name.isidentifier()):
        raise ValueError(f"give {BUILT_IN} A B (two token ids) or file.py:function (a function of the logits)")
    return text


def built_in_tokens(spec: str) -> tuple[int, int] | None:
    """(A, B) of ``logit-diff A B``; ``None`` for a course function."""
    words = spec.split()
    return (int(words[1]), int(words[2])) if words[0] == BUILT_IN else None


def logit_diff(logits: Any, better: int, worse: int) -> Any:
    """Token ``better``'s logit minus token ``worse``'s, at the last position."""
    return logits[-1, better] - logits[-1, worse]
