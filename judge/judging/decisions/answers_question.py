"""Which of a bank's questions does a report sentence answer, and with what answer? (nuggets pool)

answers_nugget (eval's decision) picks among the answers a bank holds; this one lets the judge write the answer
the sentence gives, so an answer the bank lacks can be found. Whether it is new is then asked of answers_nugget,
and whether a cited document attests it of supports_citation (judge.nuggets.pool).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator

from judge.chart import ANSWERS_QUESTION
from judge.judging.decisions.base import DecisionResponse, Prepared, render_request
from judge.judging.decisions.draft_nuggets import ANSWER_CHARS, STATEMENT_CHARS
from judge.judging.decisions.spec import DecisionSpec
from judge.judging.prompts import inline
from judge.types import Nugget, Request


class GivenAnswer(BaseModel):
    """One question the sentence answers, and the answer it gives."""

    model_config = ConfigDict(extra="forbid")
    label: str = Field(description="The question's label (Q1, Q2, ...).")
    answer: str = Field(max_length=ANSWER_CHARS, description="The answer the sentence gives (a few words).")
    statement: str = Field(max_length=STATEMENT_CHARS,
                           description="One self-contained sentence giving that answer to that question.")


class AnswersQuestion(DecisionResponse):
    """The listed questions the report sentence answers, with its answers."""

    answers: list[GivenAnswer] = Field(description="One entry per question the sentence answers; empty if none.")
    contract_helpers = (GivenAnswer,)

    @field_validator("answers")
    @classmethod
    def _labels_exist(cls, answers: list[GivenAnswer], info: ValidationInfo) -> list[GivenAnswer]:
        known: dict[str, Any] = (info.context or {}).get("questions", {})
        for given in answers:
            given.label = given.label.strip(" .[]").upper()
            if known and given.label not in known:
                raise ValueError(f"Unknown label {given.label!r}. Use only these labels: {', '.join(known)}.")
            if not given.answer.strip() or not given.statement.strip():
                raise ValueError(f"{given.label}: give both the answer and the statement, or leave the question out.")
        return answers

    def decided(self) -> bool | None:
        return bool(self.answers)


def prepare(request: Request, sentence: str, nuggets: list[Nugget], doc_ids: tuple[str, ...]) -> Prepared:
    questions = {f"Q{n}": nugget.nugget_id for n, nugget in enumerate(nuggets, start=1)}
    lines = [f"{label}. {inline(nugget.question)}" for label, nugget in zip(questions, nuggets, strict=True)]
    return Prepared(decision=ANSWERS_QUESTION,
                    values={"request": render_request(request), "questions": "\n".join(lines), "sentence": sentence},
                    context={"questions": questions}, doc_ids=doc_ids)


DECISION = DecisionSpec(
    name=ANSWERS_QUESTION, abbreviation="aq", response_model=AnswersQuestion, prompt="answers_question",
    labels=("answers", "does_not_answer"), question="Which bank questions does the sentence answer, and how?")
