"""Recorded decisions (a human assessor's, or a judgments file's) replayed through the flowchart, so that their
outcome follows from the same code as the model's: `ReplayOracle` answers each diamond from the records, and
`complete_from_decisions` gives a record that has decisions but no outcome the outcome the flowchart reaches.
Model-free: scoring (judge.run.score) and the HTML view use it."""

from __future__ import annotations

from judge.chart import CHART
from judge.formats.judgments import DecisionRecord, SentenceJudgment
from judge.judging.flowchart import Question, sentence_penalty, walk_sync
from judge.labels import CitationPolicy
from judge.settings import InjectionPolicy


class ReplayOracle:
    """Replays recorded decisions (e.g. a human assessor's) so their outcome follows from the same flowchart."""

    def __init__(self, records: list[DecisionRecord]):
        self._records = records

    def _find(self, decision: str, doc_ids: tuple[str, ...] | None = None) -> DecisionRecord | None:
        for record in self._records:
            if record.decision == decision and (doc_ids is None or tuple(record.doc_ids) == doc_ids):
                return record
        return None

    def decide(self, question: Question) -> DecisionRecord | None:
        """The recorded decision (one asked per document: the one about these documents); when none is recorded,
        None for an optional decision (nothing was asked), otherwise a failed record saying what is missing."""
        diamond = CHART.diamond(question.decision)
        doc_ids = question.doc_ids if diamond.per_document else None
        found = self._find(question.decision, doc_ids)
        if found is not None or diamond.optional:
            return found
        wanted = f" for documents {list(doc_ids)}" if doc_ids else ""
        return DecisionRecord(decision=question.decision, verdict=None,
                              error=f"no recorded '{question.decision}' decision{wanted}")


def complete_from_decisions(sentence: SentenceJudgment, policy: CitationPolicy = "all",
                            on_injection: InjectionPolicy = "quarantine") -> SentenceJudgment:
    """A human record with decisions but no outcome gets the outcome (and earned nuggets) the flowchart gives;
    under `penalise`, a flagged record without an outcome gets the penalised one (with or without decisions)."""
    if sentence.outcome is not None or sentence.status != "judged":
        return sentence
    penalty = sentence_penalty(sentence.flags, sentence.flag_rules, on_injection)
    if not sentence.decisions and penalty is None:
        return sentence
    result = walk_sync(tuple(sentence.citations), ReplayOracle(sentence.decisions), policy, penalty)
    update = {"status": result.status, "outcome": result.outcome, "earned": sentence.earned or result.earned}
    return sentence.model_copy(update={**update, "penalty": result.penalty} if penalty else update)
