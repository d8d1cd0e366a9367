"""How many decisions a nugget command asked: each goes through eval's one asker (judge.judging.decisions.asker
.Decider), its own questions (judge.chart.NUGGET_QUESTIONS) as the flowchart's, with eval's decision thresholds
(the shipped ones for the embedded judge by default), so a binding confirmed here is the verdict eval would give
the same statement and document (and shares eval's cache)."""

from __future__ import annotations

from dataclasses import dataclass, field

from judge.judging.decisions.asker import Asked, Decider
from judge.judging.decisions.base import Prepared


@dataclass
class Calls:
    """Decisions asked and how many of them the model answered (the rest came from the cache), per request."""

    asked: int = 0
    answered: int = 0
    failed: int = 0
    by_decision: dict[str, int] = field(default_factory=dict)

    def count(self, asked: Asked) -> None:
        record = asked.record
        self.asked += 1
        self.answered += 0 if record.cached else 1
        self.failed += int(asked.response is None)  # the judge failed (a "cannot judge" is an answer)
        self.by_decision[record.decision] = self.by_decision.get(record.decision, 0) + 1


async def ask(decider: Decider, prepared: Prepared, calls: Calls) -> Asked:
    """The decision asked through `decider`, counted in `calls`."""
    asked = await decider.answer(prepared)
    calls.count(asked)
    return asked
