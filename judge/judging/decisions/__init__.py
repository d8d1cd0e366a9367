"""One module per decision, declaring everything about itself in a `DECISION` spec (name, signature abbreviation,
response model, prompt file, yes/no labels, whether a threshold may flip it, the view's question, and for a diamond
of the flowchart how the walker fills its prompt). `REGISTRY` holds the flowchart's diamonds, `NUGGET_REGISTRY`
the questions nugget creation and pooling ask; both are built the same way, and `spec_of` finds a decision in
either. `asker.Decider` is the one asker: a prepared decision in, a DecisionRecord (and the response) out, for the
walker, calibration and the nugget commands. May import labels, types (judge.chart: the flowchart's table),
judgments, passages, prompts, settings and llm (to ask); never the walker, metrics or the CLI. Adding a decision:
docs/decisions.md."""

from __future__ import annotations

from judge.chart import DIAMONDS, NUGGET_QUESTIONS
from judge.judging.decisions.base import DecisionResponse, Prepared
from judge.judging.decisions.registry import Registry
from judge.judging.decisions.spec import DecisionSpec, SentenceCase

# The flowchart's table names its diamonds; each is the module of this package named after it, read in the order
# of the table's rows (the signature's). So no list here names the decisions, and a module neither the flowchart
# nor the nugget commands ask is not loaded (tests/test_decision_registry.py finds such a module).
REGISTRY = Registry.of_package(__name__, DIAMONDS)
NUGGET_REGISTRY = Registry.of_package(__name__, NUGGET_QUESTIONS, flowchart=False)
# The yes / no verdict words of each diamond, as calibration tables and thresholds files write them.
DECISION_LABELS: dict[str, tuple[str, str]] = REGISTRY.labels()


def spec_of(name: str) -> DecisionSpec:
    """The declaration of the decision `name`, a diamond or a nugget question: what the asker, the prompt hashes
    and the docs' tables read. A KeyError naming both registries' decisions for another name."""
    for registry in (REGISTRY, NUGGET_REGISTRY):
        if name in registry:
            return registry[name]
    raise KeyError(f"unknown decision {name!r}; known: {', '.join((*REGISTRY.names, *NUGGET_REGISTRY.names))}")


__all__ = ["DECISION_LABELS", "NUGGET_REGISTRY", "REGISTRY", "DecisionResponse", "DecisionSpec", "Prepared",
           "Registry", "SentenceCase", "spec_of"]
