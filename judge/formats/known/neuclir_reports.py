"""Reports in the TREC NeuCLIR 2024 and RAGTIME 2025 format: the sentences in `responses`, citations as document ids
(or {doc_id: score}); the reader is judge.formats.reports."""

from __future__ import annotations

from typing import Any

from judge.formats.registry import Format, refuse_with, register
from judge.formats.reports import _parse_report
from judge.types import Report


def _detect(record: dict[str, Any]) -> bool:
    return isinstance(record.get("metadata"), dict) and "responses" in record


def _parse(record: dict[str, Any], name: str, line: int | None) -> list[Report]:
    return [_parse_report(record, name, line)]


def _write(report: Report) -> dict[str, Any]:
    metadata = {"run_id": report.run_id, "topic_id": report.request_id}
    if report.team_id is not None:
        metadata["team_id"] = report.team_id
    return {"metadata": metadata, "responses": [{"text": s.text, "citations": list(s.citations)}
                                                for s in report.sentences]}


FORMAT = register(Format(
    "neuclir-report", "reports", "NeuCLIR 2024 / RAGTIME 2025 reports: {\"metadata\": {run_id, topic_id or "
    "request_id, team_id?}, \"responses\": [{text, citations: [doc_id] or {doc_id: score}}]}, one per line",
    _detect, _parse, _write, use="give it as the reports (eval's first argument)", rank=10))
refuse_with("reports", _parse)  # its errors name what a report lacks, in either variant
