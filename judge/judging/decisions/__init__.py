"""One module per decision diamond: its response model (the output contract the model must meet) and how its
prompt is filled; `asker.Decider` turns a prepared decision into a DecisionRecord. May import labels, types,
judgments, passages, prompts, settings and llm (to ask); never the walker, metrics or the CLI."""

from __future__ import annotations

from judge.judging.decisions import (
    absence_nugget,
    answers_nugget,
    claims_absence,
    needs_citation,
    repeated_claim,
    supports_citation,
)
from judge.judging.decisions.base import DecisionResponse, Prepared
from judge.labels import Decision

RESPONSE_MODELS: dict[Decision, type[DecisionResponse]] = {
    "supports_citation": supports_citation.SupportsCitation,
    "answers_nugget": answers_nugget.AnswersNugget,
    "claims_absence": claims_absence.ClaimsAbsence,
    "absence_nugget": absence_nugget.AbsenceNugget,
    "needs_citation": needs_citation.NeedsCitation,
    "repeated_claim": repeated_claim.RepeatedClaim,
}

__all__ = ["RESPONSE_MODELS", "DecisionResponse", "Prepared"]
