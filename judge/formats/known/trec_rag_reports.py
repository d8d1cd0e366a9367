"""Reports in the TREC RAG 2024 format: the sentences in `answer`, citations as indexes into `references`; the reader
is judge.formats.reports."""

from __future__ import annotations

from typing import Any

from judge.formats.registry import Format, register
from judge.formats.reports import _parse_report
from judge.types import Report


def _detect(record: dict[str, Any]) -> bool:
    return isinstance(record.get("metadata"), dict) and "answer" in record


def _parse(record: dict[str, Any], name: str, line: int | None) -> list[Report]:
    return [_parse_report(record, name, line)]


FORMAT = register(Format(
    "trec-rag-report", "reports", "TREC RAG 2024 reports: {\"metadata\": {run_id, narrative_id or topic_id}, "
    "\"answer\": [{text, citations: [index into references]}], \"references\": [doc_id]}, one per line",
    _detect, _parse, use="give it as the reports (eval's first argument)", rank=20))
