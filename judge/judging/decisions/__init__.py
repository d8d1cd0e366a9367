"""One module per decision diamond, declaring everything about itself in a `DECISION` spec (name, signature
abbreviation, response model, prompt file, yes/no labels, whether a threshold may flip it, the view's question,
how the walker fills its prompt); `REGISTRY` is built from those modules and is where every other part of the
judge looks a decision up. `asker.Decider` turns a prepared decision into a DecisionRecord. May import labels,
types (judge.chart: the flowchart's table), judgments, passages, prompts, settings and llm (to ask); never the
walker, metrics or the CLI. Adding a decision: docs/decisions.md."""

from __future__ import annotations

from judge.chart import DIAMONDS
from judge.judging.decisions.base import DecisionResponse, Prepared
from judge.judging.decisions.registry import Registry
from judge.judging.decisions.spec import DecisionSpec, SentenceCase

# The flowchart's table names its diamonds; each is the module of this package named after it, read in the order
# of the table's rows (the signature's). So no list here names the decisions, and a module the flowchart does not
# ask is not loaded (tests/test_decision_registry.py finds such a module).
REGISTRY = Registry.of_package(__name__, DIAMONDS)
# The yes / no verdict words of each decision, as calibration tables and thresholds files write them.
DECISION_LABELS: dict[str, tuple[str, str]] = REGISTRY.labels()

__all__ = ["DECISION_LABELS", "REGISTRY", "DecisionResponse", "DecisionSpec", "Prepared", "Registry", "SentenceCase"]
