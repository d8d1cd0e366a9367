"""Does an uncited sentence claim that some information is absent? (first diamond on the uncited branch)"""

from __future__ import annotations

from pydantic import Field

from judge.chart import CLAIMS_ABSENCE
from judge.judging.decisions.base import DecisionResponse, Prepared, render_request
from judge.judging.decisions.spec import DecisionSpec, SentenceCase
from judge.types import Request


class ClaimsAbsence(DecisionResponse):
    """Whether the sentence claims that some information is absent, unreported or unavailable."""

    claims_absence: bool = Field(
        description="true if the sentence says some information is not reported, not published, not found, "
        "unknown or unavailable; false otherwise.")
    verdict_field = "claims_absence"

    def decided(self) -> bool | None:
        return self.claims_absence


def prepare(request: Request, sentence: str) -> Prepared:
    return Prepared(CLAIMS_ABSENCE, {"request": render_request(request), "sentence": sentence})


def prepare_for(case: SentenceCase, doc_ids: tuple[str, ...] = ()) -> Prepared:
    return prepare(case.request, case.sentence.text)


DECISION = DecisionSpec(
    name=CLAIMS_ABSENCE, abbreviation="ca", response_model=ClaimsAbsence, prompt="claims_absence",
    labels=("claims_absence", "no_absence_claim"), question="Does it claim that some information is absent?",
    prepare_for=prepare_for)
