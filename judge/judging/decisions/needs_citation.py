"""Does an uncited sentence state a fact that needs a citation? (#4 versus #5/#6)"""

from __future__ import annotations

from pydantic import Field

from judge.chart import NEEDS_CITATION
from judge.judging.decisions.base import DecisionResponse, Prepared, render_request
from judge.judging.decisions.spec import DecisionSpec, SentenceCase
from judge.types import Request


class NeedsCitation(DecisionResponse):
    """Whether the sentence states a fact that needs a citation."""

    needs_citation: bool = Field(
        description="true if the sentence states a verifiable fact (event, number, name, cause, quotation); "
        "false for introductions, transitions, restating the request or the report's own structure.")
    verdict_field = "needs_citation"

    def decided(self) -> bool | None:
        return self.needs_citation


def prepare(request: Request, sentence: str) -> Prepared:
    return Prepared(NEEDS_CITATION, {"request": render_request(request), "sentence": sentence})


def prepare_for(case: SentenceCase, doc_ids: tuple[str, ...] = ()) -> Prepared:
    return prepare(case.request, case.sentence.text)


DECISION = DecisionSpec(
    name=NEEDS_CITATION, abbreviation="nc", response_model=NeedsCitation, prompt="needs_citation",
    labels=("needs_citation", "no_citation_needed"), question="Does it need a citation?", prepare_for=prepare_for)
