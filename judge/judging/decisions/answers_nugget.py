"""Which candidate nugget answers does a supported, cited sentence state?

Only answers attested by a supporting cited document are candidates (chosen deterministically, no model call
when there are none); see `candidates` for answers without references. All candidate questions go into one call.
Answers get short labels (A1, A2, ...) because copying long question ids is where small models go wrong, and
each call's schema allows only the labels it lists.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field, ValidationInfo, field_validator

from judge.chart import ANSWERS_NUGGET
from judge.formats.judgments import EarnedAnswer
from judge.judging.decisions.base import DecisionResponse, Prepared, render_request
from judge.judging.decisions.spec import DecisionSpec, SentenceCase
from judge.judging.prompts import inline
from judge.types import Nugget, Request


class AnswersNugget(DecisionResponse):
    """Which of the listed answers the report sentence states."""

    answer_labels: list[str] = Field(
        description="Labels (A1, A2, ...) of every listed answer the sentence states; empty if it states none.")

    @field_validator("answer_labels", mode="before")
    @classmethod
    def _labels_exist(cls, labels: Any, info: ValidationInfo) -> Any:
        """Runs before the per-call schema check: case and repeats do not matter, unknown labels are re-asked."""
        if not isinstance(labels, list) or not all(isinstance(label, str) for label in labels):
            return labels
        known: dict[str, Any] = (info.context or {}).get("answers", {})
        cleaned = list(dict.fromkeys(label.strip().upper() for label in labels))
        unknown = [label for label in cleaned if known and label not in known]
        if unknown:
            raise ValueError(f"Unknown labels {unknown}. Use only these labels: {', '.join(known)}.")
        return cleaned

    def decided(self) -> bool | None:
        return bool(self.answer_labels)

    def earned(self, context: dict[str, Any]) -> list[EarnedAnswer]:
        answers: dict[str, tuple[str, str]] = context["answers"]
        return [EarnedAnswer(nugget_id=answers[label][0], answer=answers[label][1]) for label in self.answer_labels]


def candidates(nuggets: tuple[Nugget, ...], supporting_doc_ids: set[str]) -> list[tuple[Nugget, list[str]]]:
    """Non-absence nuggets with at least one candidate answer, and those answers.

    An answer is a candidate when a supporting cited document attests it (one of its references), or when it has
    no references at all (e.g. a castorini nuggetizer text nugget, whose text is its only answer): nothing then
    ties it to particular documents, and the sentence stating it is supported by its own citation, so it is
    offered against every supported cited sentence. An answer whose references are all other documents is not
    offered: the sentence's documents do not attest it.
    """
    found = []
    for nugget in nuggets:
        if nugget.absence:
            continue
        attested = [a.text for a in nugget.answers if not a.doc_ids or supporting_doc_ids.intersection(a.doc_ids)]
        if attested:
            found.append((nugget, attested))
    return found


def prepare(request: Request, sentence: str, candidate_nuggets: list[tuple[Nugget, list[str]]],
            doc_ids: tuple[str, ...]) -> Prepared:
    lines: list[str] = []
    answers: dict[str, tuple[str, str]] = {}
    for q, (nugget, attested) in enumerate(candidate_nuggets, start=1):
        lines.append(f"Q{q}. {inline(nugget.question)}")
        for text in attested:
            label = f"A{len(answers) + 1}"
            answers[label] = (nugget.nugget_id, text)
            lines.append(f"  {label}: {inline(text)}")
    return Prepared(
        decision=ANSWERS_NUGGET,
        values={"request": render_request(request), "questions": "\n".join(lines), "sentence": sentence},
        context={"answers": answers},
        doc_ids=doc_ids,
        choices=(("answer_labels", tuple(answers)),),
    )


def prepare_for(case: SentenceCase, supporting_doc_ids: tuple[str, ...]) -> Prepared | None:
    """None without a nugget bank or without a candidate answer the supporting documents attest."""
    if case.bank is None:
        return None
    found = candidates(case.bank.nuggets, set(supporting_doc_ids))
    return prepare(case.request, case.sentence.text, found, supporting_doc_ids) if found else None


DECISION = DecisionSpec(
    name=ANSWERS_NUGGET, abbreviation="an", response_model=AnswersNugget, prompt="answers_nugget",
    labels=("answers", "does_not_answer"), question="Does it answer a nugget that its documents attest?",
    prepare_for=prepare_for)
