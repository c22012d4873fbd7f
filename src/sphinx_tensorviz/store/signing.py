"""Optional signatures for a shared store: which artifacts were written by a holder of the key.

A content hash names a request; it does not say who computed the result (see the trust model in
the shared-store how-to). When the writers' environment has ``TENSORVIZ_SIGNING_KEY``, each
artifact written to a remote store gets a sidecar object ``signatures/<hash>.sig`` holding the
HMAC-SHA256 of the artifact's bytes under that key. A reader with
``tensorviz_require_signature = True`` and the same key refuses artifacts whose signature is
missing or wrong, so a build can check that its figures came from CI and not from anyone else who
can write the bucket. The key is a shared secret: whoever can check can also sign. Lesson code
never sees it (workers do not inherit ``TENSORVIZ_*`` variables).
"""

from __future__ import annotations

import hashlib
import hmac
import os

KEY_VARIABLE = "TENSORVIZ_SIGNING_KEY"


def signing_key() -> bytes | None:
    """The key from the environment, or ``None`` when this process does not sign."""
    value = os.environ.get(KEY_VARIABLE, "")
    return value.encode("utf-8") if value else None


def sign(key: bytes, data: bytes) -> str:
    """The signature object's text for ``data``."""
    return hmac.new(key, data, hashlib.sha256).hexdigest() + "\n"


def signature_problem(key: bytes | None, data: bytes, signature: bytes | None) -> str | None:
    """Why ``data`` is not signed with ``key`` (``None`` when it is)."""
    if key is None:
        return f"cannot be checked: tensorviz_require_signature is on but {KEY_VARIABLE} is not set"
    if signature is None:
        return "is not signed (tensorviz_require_signature): it was not written by a holder of the signing key"
    if not hmac.compare_digest(signature.decode("ascii", "replace").strip(), sign(key, data).strip()):
        return "has a signature that does not match (tensorviz_require_signature): written or changed " \
               "without the signing key"
    return None
