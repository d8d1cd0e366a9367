"""The ARGUE flowchart for one sentence, written once.

`flow` is a plain generator: it yields the next questions (several at once only where they are independent:
one supports-citation question per cited document) and receives their records, so it knows nothing of how
they are answered. `walk` drives it with an async oracle (the LLM: judge.judging.walker.LLMOracle, with `await`);
`walk_sync` drives it with a synchronous one (a human's recorded decisions, judge.judging.replay; scripted
tables), so scoring human labels needs no event loop and works inside a running one (Jupyter). Human labels and
model judgments reach their outcomes by the same code.

    cited?  ── yes ─► supported (per citation policy)? ── no ─► #1
       │                     └─ yes ─► answers a nugget its supporting documents attest? ── no ─► #2, yes ─► #3
       └─ no ─► claims absence? ── yes ─► an absence nugget confirms it? ── no ─► #7, yes ─► #8
                      └─ no ─► needs a citation? ── no ─► #4
                                     └─ yes ─► repeats an earlier / cited claim? ── yes ─► #6, no ─► #5

A sentence the injection detector flags as addressing the judge, under `--on-injection penalise`, asks nothing:
it lands on #1 if cited (with one supports-citation record of verdict "no" taken by argue-judge, saying why) and
on #5 if not, whichever oracle drives the walk.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Generator, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from judge.formats.judgments import ADDRESSES_JUDGE, ARGUE_JUDGE, DecisionRecord, EarnedAnswer
from judge.labels import CitationPolicy, Outcome, SentenceStatus
from judge.settings import InjectionPolicy

_DIAMONDS: list[str] = []


def diamond(name: str) -> str:
    """Register a diamond of the chart above: `name` is the decision it asks (the module of
    judge.judging.decisions named after it declares everything else about it). The order of registration is the
    registry's and the judge signature's `prompts:` field's, so a new decision is registered after the shipped
    ones; `flow` below says when it is asked."""
    _DIAMONDS.append(name)
    return name


# A new decision is one line here and its `Question` in `flow`; nothing else in the judge names it.
SUPPORTS_CITATION = diamond("supports_citation")  # does a cited document support the sentence?
ANSWERS_NUGGET = diamond("answers_nugget")        # which candidate nugget questions does it answer (and how)?
CLAIMS_ABSENCE = diamond("claims_absence")        # does an uncited sentence claim some information is absent?
ABSENCE_NUGGET = diamond("absence_nugget")        # which absence nugget (if any) confirms that claim?
NEEDS_CITATION = diamond("needs_citation")        # does an uncited sentence state something that needs a citation?
REPEATED_CLAIM = diamond("repeated_claim")        # is it stated earlier, or a lead-in/summary of cited sentences?

# The decisions the flowchart asks, in registration order: the registry is built from their modules.
DIAMONDS: tuple[str, ...] = tuple(_DIAMONDS)


@dataclass(frozen=True)
class Question:
    """One diamond to decide. `doc_ids`: the cited documents (supports) or the supporting ones (answers_nugget)."""

    decision: str
    doc_ids: tuple[str, ...] = ()


# Yields questions, receives one record per question (None: "nothing to ask", no candidates), returns the leaf.
Flow = Generator[tuple[Question, ...], list[DecisionRecord | None], "Walk"]


class Oracle(Protocol):
    """Answers the diamonds for one sentence: a record, or None for "nothing to ask" (no candidates; only a
    decision its module declares optional). An async oracle (driven by `walk`) answers with a coroutine."""

    def decide(self, question: Question) -> Any: ...


@dataclass
class Walk:
    status: SentenceStatus = "judged"
    outcome: Outcome | None = None
    earned: list[EarnedAnswer] = field(default_factory=list)
    decisions: list[DecisionRecord] = field(default_factory=list)
    penalty: str | None = None


def injection_penalty(rule: str | None) -> str:
    """Why a flagged sentence was judged unsupported without a question (written into its judgments record)."""
    because = f" (detector rule {rule})" if rule else ""
    return (f"--on-injection penalise: the sentence addresses the judge{because}; judged unsupported without "
            "asking the model")


def flow(citations: tuple[str, ...], policy: CitationPolicy, penalty: str | None = None) -> Flow:
    """The flowchart for one sentence, as a generator of questions; with `penalty`, the penalised leaf at once."""
    result = Walk()
    if penalty is not None:
        _penalise(citations, penalty, result)
        return result
    if citations:
        yield from _cited(citations, policy, result)
    else:
        yield from _uncited(result)
    return result


def _penalise(citations: tuple[str, ...], penalty: str, result: Walk) -> None:
    result.penalty = penalty
    if not citations:
        result.outcome = Outcome.UNCITED_NEW_CLAIM
        return
    # Recorded as a refused citation so that citation-level measures count it as unsupported too.
    result.decisions.append(DecisionRecord(decision=SUPPORTS_CITATION, verdict=False,
                                           doc_ids=list(dict.fromkeys(citations)), rationale=penalty,
                                           judge=ARGUE_JUDGE))
    result.outcome = Outcome.UNSUPPORTED_CITATION


def _one(question: Question) -> Generator[tuple[Question, ...], list[DecisionRecord | None], DecisionRecord | None]:
    answers = yield (question,)
    return answers[0]


def _cited(citations: tuple[str, ...], policy: CitationPolicy, result: Walk
           ) -> Generator[tuple[Question, ...], list[DecisionRecord | None], None]:
    if policy == "joint":
        asked = (Question(SUPPORTS_CITATION, citations),)
    else:
        asked = tuple(Question(SUPPORTS_CITATION, (doc,)) for doc in citations)
    records = [_required(r, q) for r, q in zip((yield asked), asked, strict=True)]
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
    nugget = yield from _one(Question(ANSWERS_NUGGET, supporting))
    if nugget is None:
        result.outcome = Outcome.SUPPORTED_NO_NUGGET
        return
    result.decisions.append(nugget)
    if nugget.verdict is None:
        return _undecided(result)
    result.outcome = Outcome.SUPPORTED_NUGGET if nugget.verdict else Outcome.SUPPORTED_NO_NUGGET
    result.earned = list(nugget.matches) if nugget.verdict else []


def _uncited(result: Walk) -> Generator[tuple[Question, ...], list[DecisionRecord | None], None]:
    absence = yield from _verdict(Question(CLAIMS_ABSENCE), result)
    if absence is None:
        return _undecided(result)
    if absence:
        record = yield from _one(Question(ABSENCE_NUGGET))
        if record is None:  # the request has no absence nugget: nothing could confirm the claim
            result.outcome = Outcome.ABSENCE_NOT_NUGGET
            return
        result.decisions.append(record)
        if record.verdict is None:
            return _undecided(result)
        result.outcome = Outcome.ABSENCE_NUGGET if record.verdict else Outcome.ABSENCE_NOT_NUGGET
        result.earned = list(record.matches) if record.verdict else []
        return
    needs = yield from _verdict(Question(NEEDS_CITATION), result)
    if needs is None:
        return _undecided(result)
    if not needs:
        result.outcome = Outcome.NO_CITATION_NEEDED
        return
    repeated = yield from _verdict(Question(REPEATED_CLAIM), result)
    if repeated is None:
        return _undecided(result)
    result.outcome = Outcome.UNCITED_REPEATED_CLAIM if repeated else Outcome.UNCITED_NEW_CLAIM


def _verdict(question: Question, result: Walk
             ) -> Generator[tuple[Question, ...], list[DecisionRecord | None], bool | None]:
    record = _required((yield from _one(question)), question)
    result.decisions.append(record)
    return record.verdict


def _required(record: DecisionRecord | None, question: Question) -> DecisionRecord:
    if record is None:  # only a decision its module declares optional may have nothing to ask
        raise TypeError(f"the oracle returned None for '{question.decision}', which must always be decided")
    return record


def _undecided(result: Walk) -> None:
    result.status = "failed" if any(r.error for r in result.decisions) else "undetermined"
    result.outcome = None


def walk_sync(citations: tuple[str, ...], oracle: Oracle, policy: CitationPolicy, penalty: str | None = None
              ) -> Walk:
    """Drive the flowchart with a synchronous oracle (no event loop)."""
    steps = flow(citations, policy, penalty)
    answers: list[DecisionRecord | None] | None = None
    while True:
        try:
            questions = steps.send(answers)  # type: ignore[arg-type]  (the first send must be None)
        except StopIteration as done:
            return done.value
        answers = [oracle.decide(q) for q in questions]


async def walk(citations: tuple[str, ...], oracle: Oracle, policy: CitationPolicy, penalty: str | None = None
               ) -> Walk:
    """Drive the flowchart with an async oracle; independent questions are asked concurrently."""
    steps = flow(citations, policy, penalty)
    answers: list[DecisionRecord | None] | None = None
    while True:
        try:
            questions = steps.send(answers)  # type: ignore[arg-type]
        except StopIteration as done:
            return done.value
        pending: list[Awaitable[DecisionRecord | None]] = [oracle.decide(q) for q in questions]
        answers = list(await asyncio.gather(*pending))


def sentence_penalty(flags: Sequence[str], flag_rules: Sequence[str], on_injection: InjectionPolicy) -> str | None:
    """The penalty a sentence with these flags gets under `on_injection` (None: it walks the flowchart as usual).
    The walker and the replay of recorded judgments both ask this, so they penalise alike."""
    if on_injection != "penalise" or ADDRESSES_JUDGE not in flags:
        return None
    rule = next((r.split(":", 1)[1].strip() for r in flag_rules if r.startswith("sentence:")), None)
    return injection_penalty(rule)
