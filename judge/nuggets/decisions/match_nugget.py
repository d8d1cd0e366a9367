"""Which nugget of another bank asks for the same fact as this one? (comparing a created bank with a person's:
benchmarks/nugget_creation.py.) Labels H1..Hn, narrowed per call, or "none"."""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field

from judge.judging.decisions.base import DecisionResponse, Prepared, render_request
from judge.judging.decisions.spec import DecisionSpec
from judge.judging.prompts import inline
from judge.nuggets.decisions.common import not_in_flowchart
from judge.types import Nugget, Request


class MatchNugget(DecisionResponse):
    """The listed question that asks for the same fact as the given one, or none."""

    verdict_field: ClassVar[str | None] = "label"
    label: str = Field(description='The matching question\'s label (H1, H2, ...), or "none".')

    def decided(self) -> bool | None:
        return self.label != "none"


def prepare(request: Request, nugget: Nugget, others: list[Nugget]) -> Prepared:
    labels = tuple(f"H{n}" for n in range(1, len(others) + 1))
    lines = [f"{label}. {inline(other.question)}" for label, other in zip(labels, others, strict=True)]
    answer = nugget.answers[0].text if nugget.answers else ""
    return Prepared(decision="match_nugget",
                    values={"request": render_request(request), "questions": "\n".join(lines),
                            "sentence": f"{nugget.question} (answer: {answer})"},
                    choices=(("label", (*labels, "none")),))


DECISION = DecisionSpec(
    name="match_nugget", abbreviation="mn", response_model=MatchNugget, prompt="match_nugget",
    labels=("matches", "matches_none"), question="Which question of the other bank asks for the same fact?",
    prepare_for=not_in_flowchart)
