"""Report requests in the TREC RAG 2025 format (the information need as a `narrative`); the reader is
judge.formats.requests."""

from __future__ import annotations

from typing import Any

from judge.formats.registry import Format, register
from judge.formats.requests import _ID_KEYS, one_request


def _detect(record: dict[str, Any]) -> bool:
    return any(k in record for k in _ID_KEYS) and "narrative" in record



FORMAT = register(Format(
    "trec-rag-request", "requests", "TREC RAG 2025 requests: {request_id or topic_id or narrative_id, title?, "
    "narrative}, one per line", _detect, one_request, use="give it to --requests", rank=20))
