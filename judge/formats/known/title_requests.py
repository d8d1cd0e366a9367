"""Report requests that are a title alone (TREC AutoJudge, TREC RAG 2024): the title is the whole information need;
the reader is judge.formats.requests."""

from __future__ import annotations

from typing import Any

from judge.formats.registry import Format, register
from judge.formats.requests import _ID_KEYS, one_request


def _detect(record: dict[str, Any]) -> bool:
    return any(k in record for k in _ID_KEYS) and "title" in record



FORMAT = register(Format(
    "title-request", "requests", "AutoJudge / TREC RAG 2024 requests: {request_id, title}, the title stating the "
    "information need, one per line", _detect, one_request, use="give it to --requests", rank=30))
