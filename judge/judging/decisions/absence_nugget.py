"""Is a claimed absence one the assessors recorded as an absence nugget? (outcome #8 versus #7)"""

from __future__ import annotations

from typing import Any

from pydantic import Field, ValidationInfo, field_validator

from judge.chart import ABSENCE_NUGGET
from judge.formats.judgments import EarnedAnswer
from judge.judging.decisions.base import DecisionResponse, Prepared, render_request
from judge.judging.decisions.spec import DecisionSpec, SentenceCase
from judge.judging.prompts import inline
from judge.types import Nugget, Request

NONE = "none"


class AbsenceNugget(DecisionResponse):
    """Which recorded absence (if any) the sentence states."""

    label: str = Field(description='Label (N1, N2, ...) of the recorded absence the sentence states, or "none".')

    @field_validator("label", mode="before")
    @classmethod
    def _label_exists(cls, label: Any, info: ValidationInfo) -> Any:
        """Runs before the per-call schema check: case does not matter, an unknown label is re-asked."""
        if not isinstance(label, str):
            return label
        known: dict[str, str] = (info.context or {}).get("absences", {})
        cleaned = label.strip()
        cleaned = NONE if cleaned.lower() == NONE else cleaned.upper()
        if known and cleaned != NONE and cleaned not in known:
            raise ValueError(f"Unknown label {label!r}. Answer one of: {', '.join(known)} or \"none\".")
        return cleaned

    def decided(self) -> bool | None:
        return self.label != NONE

    def earned(self, context: dict[str, Any]) -> list[EarnedAnswer]:
        return [] if self.label == NONE else [EarnedAnswer(nugget_id=context["absences"][self.label])]


def prepare(request: Request, sentence: str, absence_nuggets: list[Nugget]) -> Prepared:
    labels = {f"N{i}": n.nugget_id for i, n in enumerate(absence_nuggets, start=1)}
    lines = []
    for label, nugget in zip(labels, absence_nuggets, strict=True):
        stated = "; ".join(inline(a.text) for a in nugget.answers)
        lines.append(f"{label}. {inline(nugget.question)}" + (f" (recorded: {stated})" if stated else ""))
    return Prepared(
        decision=ABSENCE_NUGGET,
        values={"request": render_request(request), "absences": "\n".join(lines), "sentence": sentence},
        context={"absences": labels},
        choices=(("label", (*labels, NONE)),),
    )


def prepare_for(case: SentenceCase, doc_ids: tuple[str, ...] = ()) -> Prepared | None:
    """None when the request has no absence nugget: nothing could confirm the claim."""
    absences = [n for n in case.bank.nuggets if n.absence] if case.bank else []
    return prepare(case.request, case.sentence.text, absences) if absences else None


DECISION = DecisionSpec(
    name=ABSENCE_NUGGET, abbreviation="ab", response_model=AbsenceNugget, prompt="absence_nugget",
    labels=("confirmed", "not_confirmed"), question="Does an absence nugget confirm that claim?",
    prepare_for=prepare_for)
