"""Judges whole reports: applies the length limit, then walks every sentence through the flowchart with an
LLMOracle that renders each decision's prompt and asks the model. Sentences are independent (the repeated-claim
decision sees the whole report text, not other outcomes), so they are judged concurrently.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from judge.decisions import (
    RESPONSE_MODELS,
    Prepared,
    absence_nugget,
    answers_nugget,
    claims_absence,
    needs_citation,
    repeated_claim,
    supports_citation,
)
from judge.flowchart import walk
from judge.formats import DocumentStore
from judge.judgments import DecisionRecord, ReportJudgment, SentenceJudgment, nugget_summaries
from judge.labels import CitationPolicy
from judge.llm.client import DecisionClient
from judge.passages import PassagePolicy
from judge.prompts import load_template
from judge.types import NuggetBank, Report, Request, Sentence

MISSING_DOCUMENT = "the cited document is not in the collection"


@dataclass(frozen=True)
class JudgeSettings:
    """Judging choices that change outcomes (all in the signature)."""

    policy: CitationPolicy = "all"
    truncate: bool = True
    passages: PassagePolicy = PassagePolicy()
    prompts_dir: Path | None = None


def within_limit(report: Report, limit: int | None, truncate: bool) -> tuple[list[Sentence], list[Sentence]]:
    """Sentences that fit the request's character limit (TREC NeuCLIR: a sentence counts if it ends within it)."""
    if not truncate or limit is None:
        return list(report.sentences), []
    used = 0
    for position, sentence in enumerate(report.sentences):
        used += len(sentence.text)
        if used > limit:
            return list(report.sentences[:position]), list(report.sentences[position:])
    return list(report.sentences), []


class Judge:
    def __init__(self, client: DecisionClient, documents: DocumentStore, settings: JudgeSettings = JudgeSettings(),
                 on_sentence: Callable[[], None] | None = None):
        self.client = client
        self.documents = documents
        self.settings = settings
        self.on_sentence = on_sentence

    async def judge_report(self, report: Report, request: Request, bank: NuggetBank | None,
                           signature: str | None = None) -> ReportJudgment:
        judged, cut = within_limit(report, request.limit, self.settings.truncate)
        missing: set[str] = set()
        walked = await asyncio.gather(*(self._judge_sentence(s, judged, request, bank, missing) for s in judged))
        sentences = list(walked) + [
            SentenceJudgment(index=s.index, text=s.text, citations=list(s.citations), status="truncated")
            for s in cut
        ]
        return ReportJudgment(
            run_id=report.run_id, request_id=report.request_id, team_id=report.team_id,
            assessor=self.client.settings.model, sentences=sentences, nuggets=nugget_summaries(bank),
            missing_doc_ids=sorted(missing), signature=signature,
        )

    async def _judge_sentence(self, sentence: Sentence, judged: list[Sentence], request: Request,
                              bank: NuggetBank | None, missing: set[str]) -> SentenceJudgment:
        oracle = LLMOracle(self, sentence, judged, request, bank, missing)
        result = await walk(sentence.citations, oracle, self.settings.policy)
        if self.on_sentence:
            self.on_sentence()
        return SentenceJudgment(index=sentence.index, text=sentence.text, citations=list(sentence.citations),
                                status=result.status, outcome=result.outcome, earned=result.earned,
                                decisions=result.decisions)

    async def ask(self, prepared: Prepared) -> DecisionRecord:
        template = load_template(prepared.decision, self.settings.prompts_dir)
        answered = await self.client.ask(template.render(**prepared.values), RESPONSE_MODELS[prepared.decision],
                                         prepared.context)
        response = answered.response
        return DecisionRecord(
            decision=prepared.decision,
            verdict=response.decided() if response else None,
            doc_ids=list(prepared.doc_ids),
            matches=response.earned(prepared.context) if response else [],
            rationale=response.rationale if response else "",
            evidence=response.evidence_text() if response else None,
            judge=self.client.settings.model,
            prompt_hash=template.short_hash,
            cached=answered.cached,
            error=answered.error,
        )


class LLMOracle:
    """The flowchart's questions for one sentence, answered by the model (documents and nuggets filled in)."""

    def __init__(self, judge: Judge, sentence: Sentence, judged: list[Sentence], request: Request,
                 bank: NuggetBank | None, missing: set[str]):
        self.judge, self.sentence, self.judged = judge, sentence, judged
        self.request, self.bank, self.missing = request, bank, missing

    async def supports(self, doc_ids: tuple[str, ...]) -> DecisionRecord:
        found = [doc for doc in (self.judge.documents.get(d) for d in doc_ids) if doc is not None]
        absent = [d for d in doc_ids if d not in {doc.doc_id for doc in found}]
        self.missing.update(absent)
        if not found:  # never shown to a model: an unknown document supports nothing
            return DecisionRecord(decision="supports_citation", verdict=False, doc_ids=list(doc_ids),
                                  rationale=MISSING_DOCUMENT, judge="argue-judge")
        prepared = supports_citation.prepare(self.request, self.sentence.text, found, self.judge.settings.passages)
        return await self.judge.ask(prepared)

    async def answers_nugget(self, supporting_doc_ids: tuple[str, ...]) -> DecisionRecord | None:
        if self.bank is None:
            return None
        found = answers_nugget.candidates(self.bank.nuggets, set(supporting_doc_ids))
        if not found:
            return None
        return await self.judge.ask(
            answers_nugget.prepare(self.request, self.sentence.text, found, supporting_doc_ids))

    async def claims_absence(self) -> DecisionRecord:
        return await self.judge.ask(claims_absence.prepare(self.request, self.sentence.text))

    async def absence_nugget(self) -> DecisionRecord | None:
        absences = [n for n in self.bank.nuggets if n.absence] if self.bank else []
        if not absences:
            return None
        return await self.judge.ask(absence_nugget.prepare(self.request, self.sentence.text, absences))

    async def needs_citation(self) -> DecisionRecord:
        return await self.judge.ask(needs_citation.prepare(self.request, self.sentence.text))

    async def repeated_claim(self) -> DecisionRecord:
        return await self.judge.ask(repeated_claim.prepare(self.judged, self.sentence))
