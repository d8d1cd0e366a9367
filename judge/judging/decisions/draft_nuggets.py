"""Which nugget questions does one document answer for the request, with what short answers? (nuggets create)

The draft is only a proposal: every answer is then checked by eval's supports_citation decision against the
documents it is bound to (judge.nuggets.create), so a drafted answer no document supports never reaches a bank.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator

from judge.chart import DRAFT_NUGGETS
from judge.judging.decisions.base import DecisionResponse, Prepared, render_request, shown_document
from judge.judging.decisions.spec import DecisionSpec
from judge.labels import Importance
from judge.types import Document, Request

MAX_DRAFTED = 8   # nuggets one drafting call may propose (nuggets create --per-document is at most this)
QUESTION_CHARS = 200
ANSWER_CHARS = 120
STATEMENT_CHARS = 300


class DraftedNugget(BaseModel):
    """One nugget the document answers."""

    model_config = ConfigDict(extra="forbid")
    question: str = Field(max_length=QUESTION_CHARS, description="A question asking for one fact the report needs.")
    answer: str = Field(max_length=ANSWER_CHARS, description="The short answer the document gives (a few words).")
    statement: str = Field(max_length=STATEMENT_CHARS,
                           description="One self-contained sentence giving the answer to the question.")
    importance: Importance = Field(description="vital: a report would be poor without it; okay: useful.")


class DraftNuggets(DecisionResponse):
    """The nuggets the document answers for the request."""

    nuggets: list[DraftedNugget] = Field(max_length=MAX_DRAFTED,
                                         description="Nuggets the document answers; empty if it answers none.")
    contract_helpers = (DraftedNugget,)

    @field_validator("nuggets")
    @classmethod
    def _complete(cls, nuggets: list[DraftedNugget], info: ValidationInfo) -> list[DraftedNugget]:
        limit = (info.context or {}).get("limit")
        if limit is not None and len(nuggets) > limit:
            raise ValueError(f"{len(nuggets)} nuggets; list at most {limit}, the most important first.")
        for n, nugget in enumerate(nuggets, start=1):
            if not (nugget.question.strip() and nugget.answer.strip() and nugget.statement.strip()):
                raise ValueError(f"nugget {n} has an empty question, answer or statement; fill all three or "
                                 "leave the nugget out.")
        return nuggets

    def decided(self) -> bool | None:
        return bool(self.nuggets)


def prepare(request: Request, document: Document, limit: int) -> Prepared:
    context: dict[str, Any] = {"limit": limit}
    return Prepared(decision=DRAFT_NUGGETS,
                    values={"request": render_request(request), "document": shown_document(document),
                            "limit": str(limit)},
                    context=context, doc_ids=(document.doc_id,))


DECISION = DecisionSpec(
    name=DRAFT_NUGGETS, abbreviation="dn", response_model=DraftNuggets, prompt="draft_nuggets",
    labels=("drafted", "none_drafted"), question="Which nuggets does the document answer for the request?")
