"""Judgments files read as the judge reads them: a decision record must name a decision the flowchart asks
(judge.judging.decisions.REGISTRY), so a misspelt decision in an assessor's file is refused with its file and line.

The readers of judge.formats.judgments take those names as an argument because the formats floor stands below the
judging floor and may not import the registry; every reader above this floor reads through these two instead of
passing the names each time."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from judge.formats import judgments
from judge.formats.judgments import ReportJudgment
from judge.judging.decisions import REGISTRY


def iter_judgments(source: str | Path) -> Iterator[ReportJudgment]:
    """judge.formats.judgments.iter_judgments with the decisions of this judge's flowchart."""
    return judgments.iter_judgments(source, decisions=REGISTRY.names)


def iter_judgments_located(source: str | Path) -> Iterator[tuple[int, int, bytes, ReportJudgment]]:
    """judge.formats.judgments.iter_judgments_located with the decisions of this judge's flowchart."""
    return judgments.iter_judgments_located(source, decisions=REGISTRY.names)
