"""Is an uncited claim stated before, or with a citation elsewhere in the report? (#6 versus #5)

The judge sees the whole judged report, so an uncited claim is penalised once, where it first appears without
support, and a lead-in or summary of cited sentences is not penalised.
"""

from __future__ import annotations

from pydantic import Field, ValidationInfo, field_validator

from judge.decisions.base import DecisionResponse, Prepared
from judge.types import Sentence


class RepeatedClaim(DecisionResponse):
    """Whether the sentence's claim is already stated earlier, or in a cited sentence anywhere in the report."""

    related_sentences: list[int] = Field(
        description="Numbers of the earlier sentences, or cited sentences anywhere, that state the same claim.")
    repeated: bool = Field(description="true if the claim is stated there; false if it is made here first.")

    @field_validator("related_sentences")
    @classmethod
    def _numbers_exist(cls, numbers: list[int], info: ValidationInfo) -> list[int]:
        context = info.context or {}
        count, own = context.get("count"), context.get("number")
        if count is None:
            return numbers
        bad = [n for n in numbers if not 1 <= n <= count or n == own]
        if bad:
            raise ValueError(f"Sentences {bad} are not other sentences of the report; use numbers from 1 to "
                             f"{count}, excluding {own}.")
        return sorted(set(numbers))

    def decided(self) -> bool | None:
        return self.repeated


def render_report(sentences: list[Sentence]) -> str:
    lines = []
    for number, sentence in enumerate(sentences, start=1):
        cites = f"cites {', '.join(sentence.citations)}" if sentence.citations else "no citation"
        lines.append(f"[{number}] ({cites}) {sentence.text}")
    return "\n".join(lines)


def prepare(judged_sentences: list[Sentence], sentence: Sentence) -> Prepared:
    number = next(i for i, s in enumerate(judged_sentences, start=1) if s.index == sentence.index)
    return Prepared(
        decision="repeated_claim",
        values={"report": render_report(judged_sentences), "number": str(number), "sentence": sentence.text},
        context={"count": len(judged_sentences), "number": number},
    )
