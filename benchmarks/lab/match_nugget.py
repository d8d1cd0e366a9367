"""Which nugget of another bank asks for the same fact as this one? Comparing a created bank with a person's
(benchmarks/nugget_creation.py compare --match-model). Labels H1..Hn, narrowed per call, or "none".

The decision is asked like the package's own: its prompt (prompts/match_nugget.md beside this module) rendered from
its template, its response model tailored to the call, its contract hash in the cache key, through the package's
decision client."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import ClassVar

from pydantic import Field

from judge.judging.decisions.asker import AsksModels
from judge.judging.decisions.base import DecisionResponse, Prepared, contract_hash, render_request, tailored
from judge.judging.prompts import PromptTemplate, inline, load_template
from judge.types import Nugget, NuggetBank, Request

PROMPTS = Path(__file__).with_name("prompts")


class MatchNugget(DecisionResponse):
    """The listed question that asks for the same fact as the given one, or none."""

    verdict_field: ClassVar[str | None] = "label"
    label: str = Field(description='The matching question\'s label (H1, H2, ...), or "none".')

    def decided(self) -> bool | None:
        return self.label != "none"


def template() -> PromptTemplate:
    return load_template("match_nugget", PROMPTS)


def prepare(request: Request, nugget: Nugget, others: list[Nugget]) -> Prepared:
    labels = tuple(f"H{n}" for n in range(1, len(others) + 1))
    lines = [f"{label}. {inline(other.question)}" for label, other in zip(labels, others, strict=True)]
    answer = nugget.answers[0].text if nugget.answers else ""
    return Prepared(decision="match_nugget",
                    values={"request": render_request(request), "questions": "\n".join(lines),
                            "sentence": f"{nugget.question} (answer: {answer})"},
                    choices=(("label", (*labels, "none")),))


async def match_banks(request: Request, bank: NuggetBank, other: NuggetBank, client: AsksModels
                      ) -> dict[str, str | None]:
    """Each nugget id of `bank` -> the id of the `other` nugget the judge says asks the same (None: none, or the
    decision failed). One decision per nugget of `bank`, listing every question of `other`."""
    others = [n for n in other.nuggets if not n.absence]
    if not others:
        return {n.nugget_id: None for n in bank.nuggets}
    prompt = template()

    async def ask(nugget: Nugget) -> str:
        prepared = prepare(request, nugget, others)
        model = tailored(MatchNugget, prompt.rationale, prepared.choices)
        answered = await client.ask(prompt.render(**prepared.values), model, prepared.context,
                                    contract=contract_hash(MatchNugget))
        return getattr(answered.response, "label", "none") if answered.response is not None else "none"

    labels = await asyncio.gather(*(ask(nugget) for nugget in bank.nuggets))
    return {nugget.nugget_id: others[int(label[1:]) - 1].nugget_id if label != "none" else None
            for nugget, label in zip(bank.nuggets, labels, strict=True)}
