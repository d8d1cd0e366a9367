"""The ARGUE flowchart for one sentence, written once.

`walk` asks an oracle only the decisions the sentence's path needs and returns the leaf. The oracle may be an
LLM (judge.walker.LLMOracle), a scripted table (tests) or a human's recorded decisions (ReplayOracle), so human
labels and model judgments reach their outcomes by the same code.

    cited?  ── yes ─► supported (per citation policy)? ── no ─► #1
       │                     └─ yes ─► answers a nugget its supporting documents attest? ── no ─► #2, yes ─► #3
       └─ no ─► claims absence? ── yes ─► an absence nugget confirms it? ── no ─► #7, yes ─► #8
                      └─ no ─► needs a citation? ── no ─► #4
                                     └─ yes ─► repeats an earlier / cited claim? ── yes ─► #6, no ─► #5
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Protocol

from judge.judgments import DecisionRecord, EarnedAnswer, SentenceJudgment
from judge.labels import CitationPolicy, Decision, Outcome, SentenceStatus


class Oracle(Protocol):
    """Answers the diamonds for one sentence. Methods returning None mean "nothing to ask" (no candidates)."""

    async def supports(self, doc_ids: tuple[str, ...]) -> DecisionRecord: ...
    async def answers_nugget(self, supporting_doc_ids: tuple[str, ...]) -> DecisionRecord | None: ...
    async def claims_absence(self) -> DecisionRecord: ...
    async def absence_nugget(self) -> DecisionRecord | None: ...
    async def needs_citation(self) -> DecisionRecord: ...
    async def repeated_claim(self) -> DecisionRecord: ...


@dataclass
class Walk:
    status: SentenceStatus = "judged"
    outcome: Outcome | None = None
    earned: list[EarnedAnswer] = field(default_factory=list)
    decisions: list[DecisionRecord] = field(default_factory=list)


async def walk(citations: tuple[str, ...], oracle: Oracle, policy: CitationPolicy) -> Walk:
    result = Walk()
    if citations:
        await _cited(citations, oracle, policy, result)
    else:
        await _uncited(oracle, result)
    return result


async def _cited(citations: tuple[str, ...], oracle: Oracle, policy: CitationPolicy, result: Walk) -> None:
    if policy == "joint":
        records = [await oracle.supports(citations)]
    else:
        records = list(await asyncio.gather(*(oracle.supports((doc,)) for doc in citations)))
    result.decisions.extend(records)
    verdicts = [r.verdict for r in records]
    if policy == "any":
        supported: bool | None = True if True in verdicts else (None if None in verdicts else False)
    else:  # "all" and "joint": one refusal is decisive even if another decision failed
        supported = False if False in verdicts else (None if None in verdicts else True)
    if supported is None:
        return _undecided(result)
    if not supported:
        result.outcome = Outcome.UNSUPPORTED_CITATION
        return
    supporting = tuple(doc for r in records if r.verdict for doc in r.doc_ids)
    nugget = await oracle.answers_nugget(supporting)
    if nugget is None:
        result.outcome = Outcome.SUPPORTED_NO_NUGGET
        return
    result.decisions.append(nugget)
    if nugget.verdict is None:
        return _undecided(result)
    result.outcome = Outcome.SUPPORTED_NUGGET if nugget.verdict else Outcome.SUPPORTED_NO_NUGGET
    result.earned = list(nugget.matches) if nugget.verdict else []


async def _uncited(oracle: Oracle, result: Walk) -> None:
    absence = await _ask(oracle.claims_absence(), result)
    if absence is None:
        return _undecided(result)
    if absence:
        record = await oracle.absence_nugget()
        if record is None:  # the request has no absence nugget: nothing could confirm the claim
            result.outcome = Outcome.ABSENCE_NOT_NUGGET
            return
        result.decisions.append(record)
        if record.verdict is None:
            return _undecided(result)
        result.outcome = Outcome.ABSENCE_NUGGET if record.verdict else Outcome.ABSENCE_NOT_NUGGET
        result.earned = list(record.matches) if record.verdict else []
        return
    needs = await _ask(oracle.needs_citation(), result)
    if needs is None:
        return _undecided(result)
    if not needs:
        result.outcome = Outcome.NO_CITATION_NEEDED
        return
    repeated = await _ask(oracle.repeated_claim(), result)
    if repeated is None:
        return _undecided(result)
    result.outcome = Outcome.UNCITED_REPEATED_CLAIM if repeated else Outcome.UNCITED_NEW_CLAIM


async def _ask(pending, result: Walk) -> bool | None:
    record: DecisionRecord = await pending
    result.decisions.append(record)
    return record.verdict


def _undecided(result: Walk) -> None:
    result.status = "failed" if any(r.error for r in result.decisions) else "undetermined"
    result.outcome = None


class ReplayOracle:
    """Replays recorded decisions (e.g. a human assessor's) so their outcome follows from the same flowchart."""

    def __init__(self, records: list[DecisionRecord]):
        self._records = records

    def _find(self, decision: Decision, doc_ids: tuple[str, ...] | None = None) -> DecisionRecord | None:
        for record in self._records:
            if record.decision == decision and (doc_ids is None or tuple(record.doc_ids) == doc_ids):
                return record
        return None

    def _need(self, decision: Decision, doc_ids: tuple[str, ...] | None = None) -> DecisionRecord:
        found = self._find(decision, doc_ids)
        if found is None:
            wanted = f" for documents {list(doc_ids)}" if doc_ids else ""
            return DecisionRecord(decision=decision, verdict=None, error=f"no recorded '{decision}' decision{wanted}")
        return found

    async def supports(self, doc_ids: tuple[str, ...]) -> DecisionRecord:
        return self._need("supports_citation", doc_ids)

    async def answers_nugget(self, supporting_doc_ids: tuple[str, ...]) -> DecisionRecord | None:
        return self._find("answers_nugget")

    async def claims_absence(self) -> DecisionRecord:
        return self._need("claims_absence")

    async def absence_nugget(self) -> DecisionRecord | None:
        return self._find("absence_nugget")

    async def needs_citation(self) -> DecisionRecord:
        return self._need("needs_citation")

    async def repeated_claim(self) -> DecisionRecord:
        return self._need("repeated_claim")


def complete_from_decisions(sentence: SentenceJudgment, policy: CitationPolicy = "all") -> SentenceJudgment:
    """A human record with decisions but no outcome gets the outcome (and earned nuggets) the flowchart gives."""
    if sentence.outcome is not None or not sentence.decisions or sentence.status != "judged":
        return sentence
    result = asyncio.run(walk(tuple(sentence.citations), ReplayOracle(sentence.decisions), policy))
    return sentence.model_copy(update={"status": result.status, "outcome": result.outcome,
                                       "earned": sentence.earned or result.earned})
