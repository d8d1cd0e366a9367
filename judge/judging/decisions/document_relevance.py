"""How useful is a document for a report on the request? (nuggets create --max-docs: the top documents by this
grade are the ones nuggets are drafted from.)"""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field

from judge.chart import DOCUMENT_RELEVANCE
from judge.judging.decisions.base import DecisionResponse, Prepared, render_request, shown_document
from judge.judging.decisions.spec import DecisionSpec
from judge.types import Document, Request

Relevance = Literal["highly_relevant", "relevant", "not_relevant"]
GRADE: dict[str, int] = {"highly_relevant": 2, "relevant": 1, "not_relevant": 0}


class DocumentRelevance(DecisionResponse):
    """How many of the facts a report on the request needs the document states."""

    verdict_field: ClassVar[str | None] = "relevance"
    relevance: Relevance = Field(
        description="highly_relevant: several facts the report needs; relevant: at least one; not_relevant: none.")

    def decided(self) -> bool | None:
        return self.relevance != "not_relevant"


def prepare(request: Request, document: Document) -> Prepared:
    return Prepared(decision=DOCUMENT_RELEVANCE,
                    values={"request": render_request(request), "document": shown_document(document)},
                    doc_ids=(document.doc_id,))


DECISION = DecisionSpec(
    name=DOCUMENT_RELEVANCE, abbreviation="dr", response_model=DocumentRelevance, prompt="document_relevance",
    labels=("relevant", "not_relevant"), question="Is the document useful for a report on the request?")
