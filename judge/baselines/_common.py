"""Plumbing shared by the baselines: report text, grouping, topic sets, warnings and the macro average."""

from __future__ import annotations

import math
import warnings
from collections.abc import Iterable, Mapping, Sequence

from judge.errors import InputError
from judge.formats.scores import ALL, ScoreRow
from judge.types import Report


class BaselineWarning(UserWarning):
    """A score is undefined (NaN) or a setting silently changes what is measured; the CLI prints these."""


def warn(message: str) -> None:
    warnings.warn(message, BaselineWarning, stacklevel=3)


def report_text(report: Report) -> str:
    """A report as one text: its sentences joined with single spaces (citations are not part of the text)."""
    return " ".join(s.text.strip() for s in report.sentences if s.text.strip())


def index_reports(reports: Iterable[Report]) -> dict[str, dict[str, Report]]:
    """{run_id: {request_id: report}}; a second report for the same run and request is an InputError."""
    table: dict[str, dict[str, Report]] = {}
    for report in reports:
        by_request = table.setdefault(report.run_id, {})
        if report.request_id in by_request:
            first = by_request[report.request_id].source or "an earlier report"
            raise InputError(f"duplicate report for run {report.run_id!r} and request {report.request_id!r} "
                             f"(first at {first}); keep one", report.source)
        by_request[report.request_id] = report
    return table


def group_gold(gold: Iterable[Report]) -> dict[str, list[Report]]:
    """Gold (reference) reports by request id, each list ordered by run id so results are reproducible."""
    out: dict[str, list[Report]] = {}
    for report in gold:
        out.setdefault(report.request_id, []).append(report)
    return {rid: sorted(refs, key=lambda r: (r.run_id, r.source or "")) for rid, refs in out.items()}


def require_topics(runs: Mapping[str, Mapping[str, Report]], topics: Iterable[str], what: str) -> None:
    """Every report must belong to an evaluated topic; otherwise name the request and what is missing."""
    known = set(topics)
    for run_id in sorted(runs):
        for request_id, report in sorted(runs[run_id].items()):
            if request_id not in known:
                raise InputError(f"request {request_id!r} (run {run_id!r}) has no {what}; add it or drop the "
                                 "request's reports", report.source)


def nanmean(values: Sequence[float]) -> float:
    defined = [v for v in values if not math.isnan(v)]
    return sum(defined) / len(defined) if defined else math.nan


def with_aggregates(per_request: dict[tuple[str, str, str], float]) -> list[ScoreRow]:
    """Per-request rows plus, per run and metric, the `all` row: the mean over requests, NaN values left out.

    A value is NaN only where the metric is undefined for the request itself (e.g. pa-BLEU with one
    reference), so the same requests drop out for every run and the runs stay comparable.
    """
    rows = [ScoreRow(run, req, metric, value) for (run, req, metric), value in per_request.items()]
    grouped: dict[tuple[str, str], list[float]] = {}
    for (run, _req, metric), value in per_request.items():
        grouped.setdefault((run, metric), []).append(value)
    rows += [ScoreRow(run, ALL, metric, nanmean(values)) for (run, metric), values in grouped.items()]
    return sorted(rows)
