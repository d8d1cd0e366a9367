"""Asking a creation decision, and eval's own decisions, for nugget creation and pooling.

A creation decision (judge.nuggets.decisions) is asked as the flowchart's are: its prompt rendered from its
template, its response model tailored to the prompt's rationale option, its contract hash in the cache key,
through the one decision client. supports_citation and answers_nugget go through eval's `Decider` with eval's
decision thresholds (the shipped ones for the embedded judge by default), so a binding confirmed here is the
verdict eval would give the same statement and document (and shares eval's cache).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from judge.formats.judgments import DecisionRecord
from judge.judging.decisions.asker import AsksModels, Decider
from judge.judging.decisions.base import DecisionResponse, Prepared, contract_hash, tailored
from judge.nuggets.decisions import CREATION
from judge.settings import Thresholds


@dataclass
class Calls:
    """Decisions asked and how many of them the model answered (the rest came from the cache), per request."""

    asked: int = 0
    answered: int = 0
    failed: int = 0
    by_decision: dict[str, int] = field(default_factory=dict)

    def count(self, decision: str, cached: bool, failed: bool) -> None:
        self.asked += 1
        self.answered += 0 if cached else 1
        self.failed += int(failed)
        self.by_decision[decision] = self.by_decision.get(decision, 0) + 1


class Asker:
    """One client, one prompt set: creation decisions and eval's decisions, each counted in a `Calls`."""

    def __init__(self, client: AsksModels, prompts_dir: Path | None = None, thresholds: Thresholds | None = None):
        self.client = client
        self.prompts_dir = prompts_dir
        self.decider = Decider(client, prompts_dir, thresholds)

    async def creation(self, prepared: Prepared, calls: Calls) -> tuple[DecisionResponse | None, str | None]:
        """The response of a creation decision (None and the error when the judge failed)."""
        spec = CREATION[prepared.decision]
        template = spec.template(self.prompts_dir)
        model = tailored(spec.response_model, template.rationale, prepared.choices)
        answered = await self.client.ask(template.render(**prepared.values), model, prepared.context,
                                         contract=contract_hash(spec.response_model))
        calls.count(prepared.decision, answered.cached, answered.response is None)
        response = answered.response
        return (response if isinstance(response, DecisionResponse) else None), answered.error

    async def decision(self, prepared: Prepared, calls: Calls) -> DecisionRecord:
        """eval's decision (supports_citation, answers_nugget), asked as the walker asks it."""
        record = await self.decider.ask(prepared)
        calls.count(prepared.decision, record.cached, record.verdict is None and record.error is not None)
        return record


def prompt_hashes(names: tuple[str, ...], prompts_dir: Path | None = None) -> str:
    """`dn=1a2b3c4d+...`: the short hashes of the prompts a command asks, for its signature."""
    from judge.judging.decisions import REGISTRY

    parts = []
    for name in names:
        spec = CREATION[name] if name in CREATION else REGISTRY[name]
        parts.append(f"{spec.abbreviation}={spec.template(prompts_dir).short_hash}")
    return "+".join(parts)
