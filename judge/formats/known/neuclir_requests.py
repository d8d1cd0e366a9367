"""Report requests in the NeuCLIR / RAGTIME format (a background and a problem statement, a length limit); the
reader is judge.formats.requests."""

from __future__ import annotations

from typing import Any

from judge.formats.registry import Format, refuse_with, register
from judge.formats.requests import _ID_KEYS, one_request
from judge.types import Request


def _detect(record: dict[str, Any]) -> bool:
    return any(k in record for k in _ID_KEYS) and ("problem_statement" in record or "background" in record)



def _write(request: Request) -> dict[str, Any]:
    record: dict[str, Any] = {"request_id": request.request_id, "title": request.title,
                              "background": request.background, "problem_statement": request.problem_statement,
                              "collection_ids": list(request.collection_ids)}
    if request.limit is not None:
        record["word_limit" if request.limit_unit == "words" else "limit"] = request.limit
    return record


FORMAT = register(Format(
    "neuclir-request", "requests", "NeuCLIR / RAGTIME requests: {request_id, title?, background?, "
    "problem_statement, limit? (characters) or word_limit?, collection_ids?}, one per line",
    _detect, one_request, _write, use="give it to --requests", rank=10))
refuse_with("requests", one_request)  # its errors name what a request lacks, in any variant
