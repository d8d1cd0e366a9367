"""Figures of the calibration report: matplotlib's object-oriented API on the Agg canvas (no pyplot, no global
backend switch), PNGs without a timestamp or version in their metadata, so equal data give equal bytes."""

from __future__ import annotations

from pathlib import Path


def new_figure(width: float, height: float):  # -> matplotlib Figure
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height), dpi=100)
    FigureCanvasAgg(fig)
    return fig


def save_png(fig, path: Path) -> None:
    fig.tight_layout()
    fig.savefig(path, format="png", metadata={"Software": None})
