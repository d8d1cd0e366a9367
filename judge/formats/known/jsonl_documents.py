"""Documents as JSONL, {doc_id, title?, text} per line; the reader is judge.formats.documents."""

from __future__ import annotations

from typing import Any

from judge.formats.documents import _parse_document
from judge.formats.registry import Format, refuse_with, register
from judge.types import Document


def _detect(record: dict[str, Any]) -> bool:
    return "doc_id" in record and "text" in record


def _parse(record: dict[str, Any], name: str, line: int | None) -> list[Document]:
    doc_id, title, text = _parse_document(record, name, line)
    return [Document(doc_id=doc_id, title=title, text=text)]


def _write(document: Document) -> dict[str, Any]:
    return {"doc_id": document.doc_id, "title": document.title, "text": document.text}


FORMAT = register(Format(
    "jsonl-documents", "documents", "JSONL documents: {doc_id, title?, text}, one per line", _detect, _parse, _write,
    use="give it to --docs", rank=10))
refuse_with("documents", _parse)  # its errors name what a document lacks, under any of its field names
