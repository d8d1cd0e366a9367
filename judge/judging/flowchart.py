"""The walk of the ARGUE flowchart for one sentence: the table judge.chart.CHART, followed.

`flow` is a plain generator: it yields the next questions (several at once only where they are independent:
one supports-citation question per cited document) and receives their records, so it knows nothing of how
they are answered. `walk` drives it with an async oracle (the LLM: judge.judging.walker.LLMOracle, with `await`);
`walk_sync` drives it with a synchronous one (a human's recorded decisions, judge.judging.replay; Auto-ARGUE's
judgments, judge.adapters.autoargue; scripted tables), so scoring human labels needs no event loop and works
inside a running one (Jupyter). Human labels and model judgments reach their outcomes by the same code.

The walk knows no decision by name: a sentence starts at the chart's cited or uncited diamond and follows the
edge of each answer (yes, no, or "nothing to ask" where the decision's module found nothing to ask) to a leaf.
A diamond asked of the cited documents is asked once per document (policy `joint`: once for all) and its verdict
is the citation policy's; a diamond asked of the supporting documents gets those its yes went to. An answer
without a verdict (cannot judge, failed) stops the walk: the sentence is undetermined or failed, never scored.
docs/judging.md draws the chart (generated from the table).

A sentence the injection detector flags as addressing the judge, under `--on-injection penalise`, asks nothing:
it lands on the chart's penalised leaf, #1 if cited (with a "no" of the cited diamond taken by argue-judge,
saying why) and #5 if not, whichever oracle drives the walk.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Generator, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from judge.chart import CHART, DIAMONDS, Diamond
from judge.formats.judgments import ADDRESSES_JUDGE, ARGUE_JUDGE, DecisionRecord, EarnedAnswer
from judge.labels import CitationPolicy, Outcome, SentenceStatus
from judge.settings import InjectionPolicy

__all__ = ["DIAMONDS", "Flow", "Oracle", "Question", "Walk", "flow", "injection_penalty", "sentence_penalty",
           "walk", "walk_sync"]


@dataclass(frozen=True)
class Question:
    """One diamond to decide. `doc_ids`: the cited documents (supports) or the supporting ones (answers_nugget)."""

    decision: str
    doc_ids: tuple[str, ...] = ()


# Yields questions, receives one record per question (None: "nothing to ask", no candidates), returns the leaf.
Flow = Generator[tuple[Question, ...], list[DecisionRecord | None], "Walk"]


class Oracle(Protocol):
    """Answers the diamonds for one sentence: a record, or None for "nothing to ask" (no candidates; only for a
    diamond the chart lets have nothing to ask). An async oracle (driven by `walk`) answers with a coroutine."""

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
    target: str | int = CHART.start(bool(citations))
    supporting: tuple[str, ...] = ()
    while isinstance(target, str):
        diamond = CHART.diamond(target)
        if diamond.about == "cited":
            verdict, supporting = yield from _per_document(diamond, citations, policy, result)
            record = None
        else:
            question = Question(diamond.decision, supporting if diamond.about == "supporting" else ())
            answers = yield (question,)
            record = answers[0]
            if record is None:
                if diamond.none is None:
                    _required(record, question)
                target = diamond.none  # type: ignore[assignment]  (an optional diamond: checked above)
                continue
            result.decisions.append(record)
            verdict = record.verdict
        if verdict is None:
            _undecided(result)
            return result
        target = diamond.yes if verdict else diamond.no
        if diamond.earns and record is not None:
            result.earned = list(record.matches) if verdict else []
    result.outcome = Outcome(target)
    return result


def _penalise(citations: tuple[str, ...], penalty: str, result: Walk) -> None:
    result.penalty = penalty
    cited, uncited = CHART.penalised
    if not citations:
        result.outcome = Outcome(uncited)
        return
    # Recorded as a refused citation so that citation-level measures count it as unsupported too.
    result.decisions.append(DecisionRecord(decision=CHART.cited, verdict=False,
                                           doc_ids=list(dict.fromkeys(citations)), rationale=penalty,
                                           judge=ARGUE_JUDGE))
    result.outcome = Outcome(cited)


# The policy's verdict over the documents, and the documents it said yes to.
_Verdicts = tuple[bool | None, tuple[str, ...]]


def _per_document(diamond: Diamond, citations: tuple[str, ...], policy: CitationPolicy, result: Walk
                  ) -> Generator[tuple[Question, ...], list[DecisionRecord | None], _Verdicts]:
    """Ask `diamond` of each cited document (policy `joint`: of all at once); the verdict is the policy's, and the
    documents it said yes to are the supporting ones."""
    if policy == "joint":
        asked = (Question(diamond.decision, citations),)
    else:
        asked = tuple(Question(diamond.decision, (doc,)) for doc in citations)
    records = [_required(r, q) for r, q in zip((yield asked), asked, strict=True)]
    result.decisions.extend(records)
    verdicts = [r.verdict for r in records]
    if policy == "any":
        verdict: bool | None = True if True in verdicts else (None if None in verdicts else False)
    else:  # "all" and "joint": one refusal is decisive even if another decision failed
        verdict = False if False in verdicts else (None if None in verdicts else True)
    return verdict, tuple(doc for r in records if r.verdict for doc in r.doc_ids)


def _required(record: DecisionRecord | None, question: Question) -> DecisionRecord:
    if record is None:  # only a diamond the chart lets have nothing to ask may have nothing to ask
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
