"""A swept heatmap as :class:`FigureParts`: small multiples on one colour scale, plus controls.

The HTML is the no-JavaScript form: every point drawn side by side (small multiples) with
its label, and the slider (or select, for categorical values) present but ``hidden``;
``tensorviz-explore.js`` reveals the controls and shows one point at a time. Every point is
drawn with the same vmin/vmax (and centre, for diverging data), so colours compare honestly
across the sweep. LaTeX gets a grid of the points; text and man pages each point's alt text.
"""

from __future__ import annotations

from typing import Any

from docutils import nodes

from ...core.hashing import digest
from ...core.i18n import _
from ...core.sweep import Sweep
from ...render import svg
from ...render.checks import checks_list
from ...render.colors import DIVERGING_DEFAULT, SEQUENTIAL_DEFAULT, make_scale
from ...render.footer import PROVENANCE_CLASSES
from ...render.parts import FigureParts
from ...render.registry import SweepRendering
from ...render.sweep_controls import controls_markup, point_coords, sweep_sizes
from ...warnings_ import Subtype
from .render import COMPLEX_NOTE, heatmap_parts, shown_data
from .sweep_describe import sweep_alt, sweep_table


def shared_limits(datas: list[dict[str, Any]]) -> tuple[float, float]:
    """One colour scale for every point: the sweep's overall range (symmetric about 0 if diverging)."""
    first = datas[0]
    scale = make_scale([row for d in datas for row in d["values"]], first["diverging"], None)
    return scale.low, scale.high


def sweep_parts(sweep: Sweep, artifacts: list[dict[str, Any]], check: dict[str, Any] | None,
                check_problem: str | None, ctx: Any) -> SweepRendering:
    """Draw every point on the shared scale and describe the sweep as a whole."""
    datas = [shown_data(a["data"], ctx) for a in artifacts]
    limits = shared_limits(datas)
    render = sweep.points[0].request.render
    labels = [p.label for p in sweep.points]
    unit = datas[0].get("unit")
    title = render.get("title") or _("{heatmap} across {names}").format(
        heatmap=_("Heatmap of {unit}").format(unit=unit) if unit else _("Heatmap"),
        names=_(" and ").join(sweep.parameters))
    alt = render.get("alt") or sweep_alt(labels, sweep.parameters, datas, limits)
    colormap = render.get("colormap") or (DIVERGING_DEFAULT if datas[0]["diverging"] else SEQUENTIAL_DEFAULT)
    out = SweepRendering(FigureParts(title=title, alt=alt, svg=""))
    point_parts = []
    for point, artifact, label in zip(sweep.points, artifacts, labels):
        point_render = {"colormap": colormap, "scale": list(limits), "title": f"{title}: {label}"}
        key = digest({"renderer": point.request.renderer_hash, **point_render})
        parts = heatmap_parts(artifact, point_render, key, ctx)
        point_parts.append(parts)
        out.warnings.extend((f"tv-heatmap: at {label}: {message}", subtype) for message, subtype in parts.warnings)
        for failed in (c for c in artifact.get("checks", []) if not c["passed"]):
            out.warnings.append((f"tv-heatmap: claim failed at {label}: {failed['description']}"
                                 + (f" ({failed['detail']})" if failed.get("detail") else ""), Subtype.claim))
    details: list[nodes.Node] = []
    if render.get("description"):
        details.append(nodes.paragraph("", render["description"], classes=["tv-longdesc"]))
    details.append(nodes.paragraph("", alt, classes=["tv-longdesc"]))
    if any(d.get("complexPart") == "real" for d in datas):
        details.append(nodes.paragraph("", _(COMPLEX_NOTE), classes=["tv-longdesc", "tv-complex"]))
    details.append(sweep_table(labels, datas))
    if check is not None:
        details.append(checks_list(check["checks"], _(
            "Verified claims across the sweep (run over the stored points; content hash {hash})").format(
            hash=check["contentHash"][:12])))
        for failed in (c for c in check["checks"] if not c["passed"]):
            out.warnings.append((f"tv-heatmap: claim across the sweep failed: {failed['description']}"
                                 + (f" ({failed['detail']})" if failed.get("detail") else ""), Subtype.claim))
    elif check_problem:
        details.append(nodes.paragraph("", check_problem, classes=["tv-check", "tv-check-failed"]))
    details.append(_points_list(labels, point_parts, artifacts))
    out.parts.details = details
    out.parts.svg = small_multiples(sweep, labels, point_parts)
    out.parts.pdf_grid = [(label, p.draw_pdf) for label, p in zip(labels, point_parts) if p.draw_pdf]
    return out


def _points_list(labels: list[str], parts: list[FigureParts], artifacts: list[dict[str, Any]]) -> nodes.Element:
    """Each point's alt text and its own claims: the whole sweep in words, for every builder."""
    box = nodes.container(classes=["tv-sweep-words"])
    box += nodes.paragraph("", "", nodes.strong("", _("At each value")))
    bullets = nodes.bullet_list()
    for label, part, artifact in zip(labels, parts, artifacts):
        item = nodes.list_item()
        hashed = " " + _("(content hash {hash})").format(hash=artifact["contentHash"][:12])
        item += nodes.paragraph("", "", nodes.strong("", _("{label}: ").format(label=label)), nodes.Text(part.alt),
                                nodes.inline("", hashed, classes=list(PROVENANCE_CLASSES)))
        for table in (n for n in part.details if isinstance(n, nodes.table)):  # the point's data, if small
            table.children[0].replace_self(nodes.title("", _("Data at {label}").format(label=label)))
            item += table
        if artifact.get("checks"):
            item += checks_list(artifact["checks"], _("Verified claims at {label}").format(label=label))
        bullets += item
    box += bullets
    return box


def small_multiples(sweep: Sweep, labels: list[str], parts: list[FigureParts]) -> str:
    """Every point, labelled, in a grid; the controls ride along ``hidden`` until script shows them."""
    tid = svg.ID_TOKEN
    sizes = sweep_sizes(sweep)
    out = [f'<div class="tv-sweep" data-tv-sizes="{" ".join(map(str, sizes))}">', controls_markup(sweep),
           '<div class="tv-sweep-points">']
    for number, (label, part) in enumerate(zip(labels, parts)):
        picture = part.svg.replace(tid, f"{tid}-p{number}")
        out.append(f'<div class="tv-sweep-point" data-tv-coords="{point_coords(number, sizes)}">'
                   f'<p class="tv-sweep-label">{svg.text(label)}</p><div class="tv-svg">{picture}</div></div>')
    out.append("</div></div>")
    return "\n".join(out)
