"""The environment a failure happened in, as one hash, and when a recorded failure deserves a retry.

A recorded failure keeps identical failing code from running on every build. But a failure
caused by the environment (a framework that does not import, a missing package, a crash of a
broken install) says nothing about the code: once the environment is fixed it must run again,
although the code, and so its content hash, did not change. Every failure record therefore
carries the fingerprint of the worker's Python (its version and every installed distribution
with its version); a failure recorded under another fingerprint is retried.

Run as ``python -m sphinx_tensorviz.execute.fingerprint`` to print the fingerprint of that
interpreter (used when ``tensorviz_python`` names another one than Sphinx's).
"""

from __future__ import annotations

import hashlib
import platform
import subprocess
import sys
from functools import cached_property
from importlib import metadata
from typing import Any


def current_fingerprint() -> str:
    """sha256 of this interpreter's Python version and installed distributions (name==version)."""
    packages = sorted({f"{(d.metadata['Name'] or '').lower()}=={d.version}" for d in metadata.distributions()})
    text = "\n".join([f"python=={platform.python_version()}", sys.implementation.name, *packages])
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def fingerprint_of(python: str) -> str:
    """The fingerprint of the interpreter that runs the workers ("" when it cannot be asked:
    every failure then looks recorded elsewhere, and is retried)."""
    if python == sys.executable:
        return current_fingerprint()
    try:
        done = subprocess.run([python, "-m", "sphinx_tensorviz.execute.fingerprint"], capture_output=True,
                              text=True, timeout=60, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError):
        return ""
    return done.stdout.strip() if done.returncode == 0 else ""


class EnvironmentCheck:
    """Decides which recorded failures to retry, asking the worker's interpreter for its
    fingerprint at most once, and only when a failure needs it. Made anew for every build (an
    environment changed under a long-lived ``sphinx-autobuild`` is noticed)."""

    def __init__(self, python: str, timeout: float) -> None:
        self.python = python
        self.timeout = timeout

    @cached_property
    def fingerprint(self) -> str:
        return fingerprint_of(self.python)

    def retry_reason(self, failure: dict[str, Any]) -> str | None:
        """Why a recorded failure should run again today, or ``None`` when it stands."""
        recorded = failure.get("environment")
        if not recorded or recorded != self.fingerprint:
            return "the Python environment changed since it failed"
        if failure.get("subtype") == "timeout" and float(failure.get("timeout") or 0) < self.timeout:
            return f"tensorviz_timeout is longer now than the {float(failure.get('timeout') or 0):g} s it ran out of"
        return None


if __name__ == "__main__":
    print(current_fingerprint())
