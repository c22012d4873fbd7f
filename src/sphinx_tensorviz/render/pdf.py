"""Figures as PDF pages for the LaTeX builder, drawn with matplotlib (imported only when drawing).

No time stamps go into the files, so the same figure gives the same PDF.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any


def heatmap_pdf(data: dict[str, Any], path: Path, title: str, colormap: str,
                limits: tuple[float, float] | None = None) -> None:
    """Draw the heatmap with a labelled colour bar; no timestamp, so the PDF is reproducible.
    ``limits``: the ends of a colour scale shared with other figures (a sweep)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.colors import Normalize

    values = data["values"]
    flat = [v for row in values for v in row]
    if limits is not None:
        norm = Normalize(*limits)
    elif data["diverging"]:
        limit = max(abs(v) for v in flat) or 1.0
        norm = Normalize(-limit, limit)
    else:
        norm = Normalize(min(flat), max(flat))
    fig, ax = plt.subplots(figsize=(1 + 0.7 * len(data["columns"]), 1 + 0.5 * len(data["rows"])))
    image = ax.imshow(values, cmap=colormap, norm=norm, aspect="auto")
    ax.set_xticks(range(len(data["columns"])), data["columns"])
    ax.set_yticks(range(len(data["rows"])), data["rows"])
    ax.set_title(title)
    fig.colorbar(image, ax=ax, label=data.get("unit", ""))
    fig.tight_layout()
    fig.savefig(path, format="pdf", metadata={"CreationDate": None, "ModDate": None})
    plt.close(fig)


def graph_pdf(layout: Any, path: Path, markers: dict[str, list[tuple[int, str]]] | None = None) -> None:
    """The default (collapsed) view of a graph layout, drawn with matplotlib for LaTeX, with the
    guided tour's step numbers on the boxes it visits."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.patches import Rectangle

    scale = 1 / 96
    fig = plt.figure(figsize=(max(2.0, layout.width * scale), max(2.0, layout.height * scale)))
    ax = fig.add_axes((0, 0, 1, 1))
    ax.set_xlim(0, layout.width)
    ax.set_ylim(layout.height, 0)
    ax.axis("off")
    for box in layout.boxes:
        style = {"linestyle": "--"} if box.collapsed or box.is_cluster else {}
        ax.add_patch(Rectangle((box.x, box.y), box.w, box.h, fill=False, linewidth=0.8, **style))
        if box.is_cluster:
            ax.text(box.x + 4, box.y + 12, box.label, fontsize=6, va="center")
        else:
            ax.text(box.x + box.w / 2, box.y + box.h / 2, box.label, fontsize=6, ha="center", va="center")
    for edge in layout.edges:
        xs, ys = zip(*edge.points)
        ax.plot(xs, ys, linewidth=0.6, color="black")
    for box in layout.boxes:
        for k, (number, _title) in enumerate((markers or {}).get(box.id, ())):
            ax.text(box.x + box.w - 4 - 22 * k, box.y, str(number), fontsize=6, ha="center", va="center",
                    color="white", fontweight="bold", bbox={"boxstyle": "circle,pad=0.25", "fc": "#1f4e79"})
    fig.savefig(path, format="pdf", metadata={"CreationDate": None, "ModDate": None})
    plt.close(fig)


def diagram_pdf(diagram: dict[str, Any], path: Path) -> None:
    """An authored diagram for LaTeX, from the same edge geometry as its SVG (quadratic curves)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.patches import FancyArrowPatch, FancyBboxPatch
    from matplotlib.path import Path as CurvePath

    from .diagram_svg import edge_geometry

    panel = diagram["panel"]
    by_id = {str(n["id"]): n for n in panel["nodes"]}
    width, height = float(panel.get("width", 10)), float(panel.get("height", 10))
    fig = plt.figure(figsize=(width * 0.6, height * 0.6))
    ax = fig.add_axes((0, 0, 1, 1))
    ax.set_xlim(-1, width + 1)
    ax.set_ylim(height + 0.5, -0.5)
    ax.axis("off")
    for node in panel["nodes"]:
        w, h = float(node.get("w", 1.0)), float(node.get("h", 0.6))
        x, y = float(node["x"]) - w / 2, float(node["y"]) - h / 2
        style = "--" if node.get("tone") == "result" else "-"
        ax.add_patch(FancyBboxPatch((x, y), w, h, boxstyle="round,pad=0.02", fill=False, linestyle=style))
        ax.text(float(node["x"]), float(node["y"]), str(node["label"]), ha="center", va="center", fontsize=9)
    for edge in panel.get("edges", []):
        start, control, end = edge_geometry(edge, by_id)
        if control is None:
            curve = CurvePath([start, end], [CurvePath.MOVETO, CurvePath.LINETO])
        else:
            curve = CurvePath([start, control, end], [CurvePath.MOVETO, CurvePath.CURVE3, CurvePath.CURVE3])
        ax.add_patch(FancyArrowPatch(path=curve, arrowstyle="-|>", mutation_scale=10, linewidth=0.8))
        if edge.get("label") and edge.get("labelAt"):
            lx, ly = edge["labelAt"]
            ax.text(float(lx), float(ly), str(edge["label"]), fontsize=9, fontweight="bold")
    fig.savefig(path, format="pdf", metadata={"CreationDate": None, "ModDate": None})
    plt.close(fig)
