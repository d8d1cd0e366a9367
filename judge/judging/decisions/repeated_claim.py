"""Is an uncited claim stated before, or with a citation elsewhere in the report? (#6 versus #5)

The judge sees the whole judged report, so an uncited claim is penalised once, where it first appears without
support, and a lead-in or summary of cited sentences is not penalised.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field, ValidationInfo, field_validator

from judge.chart import REPEATED_CLAIM
from judge.judging.decisions.base import DecisionResponse, Prepared, as_number
from judge.judging.decisions.spec import DecisionSpec, SentenceCase
from judge.judging.prompts import render_report
from judge.types import Sentence


class RepeatedClaim(DecisionResponse):
    """Whether the sentence's claim is already stated earlier, or in a cited sentence anywhere in the report."""

    related_sentences: list[int] = Field(
        description="Numbers of the earlier sentences, or cited sentences anywhere, that state the same claim.")
    repeated: bool = Field(description="true if the claim is stated there; false if it is made here first.")
    contract_helpers = (as_number,)
    verdict_field = "repeated"

    @field_validator("related_sentences", mode="before")
    @classmethod
    def _numbers_exist(cls, numbers: Any, info: ValidationInfo) -> Any:
        """Runs before the per-call schema check, so a hosted model's slip gets a message it can act on."""
        context = info.context or {}
        count, own = context.get("count"), context.get("number")
        if count is None or not isinstance(numbers, list):
            return numbers
        numbers = [as_number(n) for n in numbers]
        bad = [n for n in numbers if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= count
               or n == own]
        if bad:
            raise ValueError(f"Sentences {bad} are not other sentences of the report; use numbers from 1 to "
                             f"{count}, excluding {own}.")
        return sorted(set(numbers))

    def decided(self) -> bool | None:
        return self.repeated


def prepare(judged_sentences: list[Sentence], sentence: Sentence) -> Prepared:
    number = next(i for i, s in enumerate(judged_sentences, start=1) if s.index == sentence.index)
    return Prepared(
        decision=REPEATED_CLAIM,
        values={"report": render_report(judged_sentences), "number": str(number), "sentence": sentence.text},
        context={"count": len(judged_sentences), "number": number},
        # The numbers of the other sentences: the schema admits only what the validator accepts (a grammar that
        # allowed the sentence's own number let the embedded judge answer it three times and fail the decision).
        choices=(("related_sentences", tuple(n for n in range(1, len(judged_sentences) + 1) if n != number)),),
    )


def prepare_for(case: SentenceCase, doc_ids: tuple[str, ...] = ()) -> Prepared:
    return prepare(case.judged, case.sentence)


DECISION = DecisionSpec(
    name=REPEATED_CLAIM, abbreviation="rc", response_model=RepeatedClaim, prompt="repeated_claim",
    labels=("repeated", "new_claim"), question="Does it repeat an earlier claim or sum up cited ones?",
    prepare_for=prepare_for)
