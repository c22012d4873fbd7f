"""A training artifact as :class:`FigureParts`: the chart, alt text, description, tables, claims,
the snapshot list, and a located warning when the run diverged."""

from __future__ import annotations

from functools import partial
from typing import Any

from docutils import nodes

from ...core.i18n import _, counted
from ...render.cache import artifact_key
from ...render.checks import checks_list
from ...render.numbers import fmt
from ...render.parts import FigureParts
from ...render.svg_writer import write
from ...render.tables import data_table
from ...warnings_ import Subtype
from .chart import chart_drawing
from .describe import long_description, train_alt
from .pdf import train_pdf


def train_parts(artifact: dict[str, Any], render: dict[str, Any], renderer_hash: str, ctx: Any) -> FigureParts:
    data = artifact["data"]
    title = render.get("title") or _("Training over {steps}").format(steps=counted(data["steps"], "step", "steps"))
    alt = render.get("alt") or train_alt(data)
    svg = ctx.cache.svg(artifact_key(artifact), renderer_hash,
                        partial(_chart_svg, data, title, alt))
    details: list[nodes.Node] = []
    if render.get("description"):
        details.append(nodes.paragraph("", render["description"], classes=["tv-longdesc"]))
    details.append(nodes.paragraph("", long_description(data), classes=["tv-longdesc"]))
    warnings = []
    if data.get("diverged"):
        d = data["diverged"]
        said = (f"the run diverged: {d['metric']} became {d['value']} at step {d['step']}; recording stopped "
                "there, and the curves end at the step before")
        shown = _("Diverged: the run diverged: {metric} became {value} at step {step}; recording stopped there, "
                  "and the curves end at the step before.").format(metric=d["metric"], value=d["value"], step=d["step"])
        details.append(nodes.paragraph("", shown, classes=["tv-longdesc", "tv-diverged"]))
        warnings.append((f"{said} (lower the learning rate, or clip the gradients)", Subtype.bad_result))
    for curve in data["curves"]:
        rows = [str(step) for step, _ in curve["points"]]
        details.append(data_table(_("Data: {what}").format(what=curve["metric"]), _("step"), rows, [curve["metric"]],
                                  [[fmt(value)] for _, value in curve["points"]]))
    if artifact.get("checks"):
        details.append(checks_list(artifact["checks"]))
    details.append(snapshot_list(data["snapshots"]))
    return FigureParts(title=title, alt=alt, svg=svg, details=details,
                       draw_pdf=lambda path: train_pdf(data, path, title), warnings=warnings)


def _chart_svg(data: dict[str, Any], title: str, alt: str) -> str:
    return write(chart_drawing(data, title=title, alt=alt))


def snapshot_list(snapshots: list[dict[str, Any]]) -> nodes.Element:
    """The kept weights: step, size and sha256 (the file's name in the store's ``weights/``)."""
    box = nodes.container(classes=["tv-snapshots"])
    if not snapshots:
        box += nodes.paragraph("", _("No weights were kept (the directive lists no :snapshots:)."))
        return box
    box += nodes.paragraph("", "", nodes.strong("", _("Snapshots (weights kept, safetensors, by sha256)")))
    bullets = nodes.bullet_list()
    for snapshot in snapshots:
        para = nodes.paragraph("", _("step {step}: {tensors}, {size}, sha256 ").format(
            step=snapshot["step"], tensors=counted(snapshot["tensors"], "tensor", "tensors"),
            size=counted(snapshot["size"], "byte", "bytes")))
        para += nodes.literal("", snapshot["sha256"], classes=["tv-sha"])  # folds on a phone, as the downloads' do
        bullets += nodes.list_item("", para)
    box += bullets
    return box
