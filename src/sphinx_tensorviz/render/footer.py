"""The provenance footer: where a figure's numbers came from, in one line."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

from ..core.i18n import _, counted

FRAMEWORK_NAMES = {"jax": "JAX", "torch": "PyTorch", "numpy": "NumPy"}

#: the footer's classes: shown on every figure, but not searched (a run's device, versions and a
#: hash prefix, the same words under every figure, made every figure match "cpu" or "pytorch")
PROVENANCE_CLASSES = ("tv-provenance", "no-search")


def provenance_line(artifact: dict[str, Any]) -> str:
    env = artifact["environment"]
    device = "GPU" if env["backend"] == "gpu" else "CPU"
    count = env.get("deviceCount", 1)
    parts = [_("Recorded computation on {device} ({devices})").format(
        device=device, devices=counted(count, "device", "devices"))]
    framework = env.get("framework", "numpy")
    for package in dict.fromkeys((framework, "numpy")):
        if package in env:
            parts.append(f"{FRAMEWORK_NAMES.get(package, package)} {env[package]}")
    parts.append(f"Python {env['python']}")
    stamp = datetime.fromisoformat(artifact["generatedAt"]).astimezone(timezone.utc)
    parts.append(stamp.strftime("%Y-%m-%d %H:%M UTC"))
    parts.append(_("content hash {hash}").format(hash=artifact["contentHash"][:12]))
    checks = artifact.get("checks")
    if checks:
        passed = sum(1 for c in checks if c["passed"])
        parts.append(_("checks {passed}/{total} passed").format(passed=passed, total=len(checks)))
    return " · ".join(parts)
