"""A toy decision, not shipped: does the sentence hedge its claim? Written as a new decision would be, to show
that its module alone (plus its prompt file, and its rows in the flowchart's table) is all the judge needs to know
(tests/test_decision_registry.py, tests/test_toy_decision.py)."""

from __future__ import annotations

from pydantic import Field

from judge.judging.decisions.base import DecisionResponse, Prepared, render_request
from judge.judging.decisions.spec import DecisionSpec, SentenceCase


class HedgedClaim(DecisionResponse):
    """Whether the sentence hedges its claim."""

    hedged: bool = Field(description="true if the sentence hedges (may, reportedly, is said to); false otherwise.")
    verdict_field = "hedged"

    def decided(self) -> bool | None:
        return self.hedged


def prepare_for(case: SentenceCase, doc_ids: tuple[str, ...] = ()) -> Prepared:
    values = {"request": render_request(case.request), "sentence": case.sentence.text}
    return Prepared("hedged_claim", values)


DECISION = DecisionSpec(
    name="hedged_claim", abbreviation="hc", response_model=HedgedClaim, prompt="hedged_claim",
    labels=("hedged", "not_hedged"), question="Does it hedge its claim?", prepare_for=prepare_for)
