"""Documents as MS MARCO, Pyserini and ir_datasets export them: the id as `docid`, `id` or `docno`, the text as
`contents` (Pyserini) or `segment` (MS MARCO v2.1 segmented, TREC RAG); the reader is judge.formats.documents."""

from __future__ import annotations

from typing import Any

from judge.formats.documents import _parse_document
from judge.formats.registry import Format, register
from judge.types import Document


def _detect(record: dict[str, Any]) -> bool:
    return (any(k in record for k in ("docid", "id", "docno", "doc_id"))
            and any(k in record for k in ("contents", "segment", "text")))


def _parse(record: dict[str, Any], name: str, line: int | None) -> list[Document]:
    doc_id, title, text = _parse_document(record, name, line)
    return [Document(doc_id=doc_id, title=title, text=text)]


FORMAT = register(Format(
    "pyserini-documents", "documents", "MS MARCO / Pyserini / ir_datasets documents: {docid or id or docno, "
    "title?, contents or segment}, one per line", _detect, _parse, use="give it to --docs", rank=20))
