"""The training chart as a PDF page for the LaTeX builder: the same shapes as its SVG, through
matplotlib (imported only when a PDF is drawn)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ...render.mpl_writer import save_pdf
from .chart import chart_drawing


def train_pdf(data: dict[str, Any], path: Path, title: str) -> None:
    save_pdf(chart_drawing(data, title=title, alt=""), path, heading=True)
