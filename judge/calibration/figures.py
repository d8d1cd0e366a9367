"""Figures of the calibration report: matplotlib's object-oriented API on the Agg canvas (no pyplot, no global
backend switch), PNGs without a timestamp or version in their metadata, so equal data give equal bytes. matplotlib
comes with the `plots` extra."""

from __future__ import annotations

from pathlib import Path

from judge.errors import missing_extra


def new_figure(width: float, height: float):  # -> matplotlib Figure
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError:
        raise missing_extra("the calibration report's figures", "plots") from None

    fig = Figure(figsize=(width, height), dpi=100)
    FigureCanvasAgg(fig)
    return fig


def save_png(fig, path: Path) -> None:
    fig.tight_layout()
    fig.savefig(path, format="png", metadata={"Software": None})
