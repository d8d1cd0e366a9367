"""Judgments files read as the judge reads them: a decision record must name a decision the flowchart asks
(judge.judging.decisions.REGISTRY), so a misspelt decision in an assessor's file is refused with its file and line.

The parser, judge.formats.judgments.iter_judgment_lines, takes those names as an argument because the formats floor
stands below the judging floor and may not import the registry; every reader above this floor reads through these
two instead of passing the names each time."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from judge.formats.judgments import ReportJudgment, iter_judgment_lines
from judge.judging.decisions import REGISTRY


def iter_judgments(source: str | Path) -> Iterator[ReportJudgment]:
    """The judgments of a file (path, .gz too) or of literal JSONL text, one at a time."""
    for _number, _offset, _raw, judgment in iter_judgments_located(source):
        yield judgment


def iter_judgments_located(source: str | Path) -> Iterator[tuple[int, int, bytes, ReportJudgment]]:
    """(line number, byte offset of its line, the line's raw bytes, judgment) for each record."""
    return iter_judgment_lines(source, decisions=REGISTRY.names)
