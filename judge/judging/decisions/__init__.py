"""One module per decision diamond, declaring everything about itself in a `DECISION` spec (name, signature
abbreviation, response model, prompt file, yes/no labels, whether a threshold may flip it, the view's question,
how the walker fills its prompt); `REGISTRY` is built from those modules, in the signature's order, and is where
every other part of the judge looks a decision up. `asker.Decider` turns a prepared decision into a
DecisionRecord. May import labels, types, judgments, passages, prompts, settings and llm (to ask); never the
walker, metrics or the CLI. Adding a decision: docs/decisions.md."""

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
from judge.judging.decisions.registry import Registry
from judge.judging.decisions.spec import DecisionSpec, SentenceCase

REGISTRY = Registry.of_modules([supports_citation, answers_nugget, claims_absence, absence_nugget, needs_citation,
                                repeated_claim])
# The yes / no verdict words of each decision, as calibration tables and thresholds files write them.
DECISION_LABELS: dict[str, tuple[str, str]] = REGISTRY.labels()

__all__ = ["DECISION_LABELS", "REGISTRY", "DecisionResponse", "DecisionSpec", "Prepared", "Registry", "SentenceCase"]
