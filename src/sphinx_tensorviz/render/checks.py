"""Verified numerical claims, shown with the figure whose execution ran them."""

from __future__ import annotations

from typing import Any

from docutils import nodes

from ..core.i18n import _


def checks_list(checks: list[dict[str, Any]], heading: str | None = None) -> nodes.Element:
    """Verified claims with a visible pass/fail word (never colour or a symbol alone)."""
    box = nodes.container(classes=["tv-checks"])
    box += nodes.paragraph("", "", nodes.strong("", heading or _("Verified claims (run with this execution)")))
    bullets = nodes.bullet_list()
    for check in checks:
        mark = _("passed") if check["passed"] else _("FAILED")
        para = nodes.paragraph(classes=["tv-check", "tv-check-passed" if check["passed"] else "tv-check-failed"])
        para += nodes.strong("", ("✓ " if check["passed"] else "✗ ") + _("{label}: ").format(label=mark))
        para += nodes.Text(check["description"])
        if check.get("detail"):
            para += nodes.Text(f" ({check['detail']})")
        bullets += nodes.list_item("", para)
    box += bullets
    return box
