"""Judges whole reports: applies the length limit, then walks every sentence through the flowchart with an
LLMOracle that has each question's decision module fill its prompt from the sentence's case (documents, nugget
candidates; DecisionSpec.prepare_for) and asks it through a Decider.
Sentences are independent (the repeated-claim decision sees the whole report text, not other outcomes), so
they are judged concurrently; each returns its own records, and the report gathers what they found missing.

Document-major order: `ReportWalker.ask_supports_document_major` asks, before any report is walked, the first
support question of every judged cited sentence of a batch of reports, sorted by request and then by the
documents they show, so all sentences citing one document are asked back to back. The support prompt shows the
request, then the document, then the sentence, so those calls share a long prefix (and calls of one request
share at least the request): a local llama.cpp model (one call at a time) reuses the KV state of that prefix,
hosted providers serve it from their prompt cache. (Measured on the prompts alone: the characters a call
shares with the previous call's prompt rise from 26% in the older layout, report by report, to 35% on the
NeuCLIR example run, 84 documents for 108 support questions; from 45% to 55% on the bundled example.) The walk
then takes these records instead of asking again; since a
record depends only on its prompt (temperature 0, one answer per cache key), the judgments are the same as in
report-by-report order, and so is their order in the file.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable
from typing import Any

from judge.chart import CHART
from judge.defence.flag_checker import FlagChecker
from judge.defence.injection import uses_script
from judge.defence.quarantine import quarantine_document, quarantine_sentence, quarantine_title
from judge.defence.script import foreign_piece
from judge.errors import InputError
from judge.formats import DocumentStore
from judge.formats.judgments import DecisionRecord, ReportJudgment, SentenceJudgment, nugget_summaries
from judge.judging import decisions
from judge.judging.decisions.asker import AsksModels, Decider
from judge.judging.decisions.spec import SentenceCase
from judge.judging.flowchart import Question, flow, sentence_penalty, walk
from judge.judging.passages import share_of
from judge.settings import DefaultThresholds, InjectionDetector, JudgeSettings
from judge.types import Document, NuggetBank, Report, Request, Sentence

# (run_id, request_id, sentence index, question): one first question of one sentence.
_FirstKey = tuple[str, str, int, Question]


def within_limit(report: Report, limit: Request | int | None, truncate: bool
                 ) -> tuple[list[Sentence], list[Sentence]]:
    """Sentences that fit the request's length limit (TREC NeuCLIR: a sentence counts if it ends within it).

    `limit` is the request, whose `length_of` counts its unit (characters, or words for a `word_limit`), or a
    bare number of characters."""
    if isinstance(limit, Request):
        limit, length_of = limit.limit, limit.length_of
    else:
        length_of = len
    if not truncate or limit is None:
        return list(report.sentences), []
    used = 0
    for position, sentence in enumerate(report.sentences):
        used += length_of(sentence.text)
        if used > limit:
            return list(report.sentences[:position]), list(report.sentences[position:])
    return list(report.sentences), []


class ReportWalker:
    """Judges whole reports with one client: the flowchart per sentence, the length limit, missing documents."""

    def __init__(self, client: AsksModels, documents: DocumentStore, settings: JudgeSettings,
                 on_sentence: Callable[[], None] | None = None, decider: Any = None):
        if isinstance(settings.thresholds, DefaultThresholds):  # decided once, by the run's spec (judge.run.spec)
            raise TypeError("ReportWalker takes resolved thresholds (EvalSpec.resolve(), or "
                            "judge.judging.thresholds.resolve_thresholds), not DEFAULT_THRESHOLDS")
        # `decider`: who answers instead of one Decider over `client` (a judge.judging.panel.PanelDecider).
        self.decider = decider or Decider(client, settings.prompts_dir, settings.thresholds)
        self.documents = documents
        self.settings = settings
        self.on_sentence = on_sentence
        self.flag_checker = FlagChecker(documents)
        # What the model is shown: under quarantine (and penalise) flagged pieces of sentences and documents, and
        # under the default stack pieces in a foreign script, are withheld (judge.defence.quarantine); under `flag`
        # the text as written.
        self.shown_documents = (ShownDocuments(documents, self.flag_checker, settings.injection_detector)
                                if settings.withholds else documents)
        self._asked: dict[_FirstKey, DecisionRecord] = {}
        # The request and nugget bank as the model is shown them, decided once each (the detector is not free).
        self._requests_shown: dict[str, Request] = {}
        self._banks_shown: dict[int, tuple[NuggetBank, NuggetBank]] = {}

    def refuse_unshowable(self, report: Report, request: Request) -> None:
        """Before anything is asked: an InputError naming the report and sentence when a sentence's documents,
        shown together (--citation-policy joint), would each get too small a share of the budget to be judged
        (judge.judging.passages.share_of)."""
        if self.settings.policy != "joint":
            return
        for sentence in within_limit(report, request, self.settings.truncate)[0]:
            for question in self._first_questions(sentence):
                try:
                    share_of(self.settings.passages, sum(d in self.documents for d in set(question.doc_ids)))
                except InputError as exc:
                    raise InputError(f"run '{report.run_id}', request '{report.request_id}', sentence "
                                     f"{sentence.index}: {exc.message}") from None

    def shown(self, sentence: Sentence) -> Sentence:
        """The sentence as the model is shown it."""
        if not self.settings.withholds:
            return sentence
        shown = quarantine_sentence(sentence.text, self.settings.injection_detector).shown
        return sentence if shown == sentence.text else sentence.model_copy(update={"text": shown})

    async def ask_supports_document_major(self, work: Iterable[tuple[Report, Request]]) -> None:
        """Ask the first support questions of these reports' judged sentences in document-major order (see the
        module docstring); `judge_report` then uses the answers. Optional: without it every question is asked
        during the walk."""
        questions: list[tuple[str, tuple[str, ...], str, int, Question, LLMOracle]] = []
        for report, request in work:
            judged, _cut = within_limit(report, request, self.settings.truncate)
            shown = [self.shown(s) for s in judged]
            for sentence, shown_sentence in zip(judged, shown, strict=True):
                if sentence_penalty(*self.flag_checker.flags(sentence), self.settings.on_injection):
                    continue  # penalised without a question (--on-injection penalise)
                oracle = LLMOracle(self.decider, self.case(request, shown_sentence, shown, None))
                questions += [(request.request_id, q.doc_ids, report.run_id, sentence.index, q, oracle)
                              for q in self._first_questions(sentence)]
        questions.sort(key=lambda q: q[:4])
        # Created in this order, the calls reach the client's (FIFO) concurrency slots in this order.
        records = await asyncio.gather(*(oracle.decide(question) for *_, question, oracle in questions))
        for (request_id, _doc_ids, run_id, index, question, _oracle), record in zip(questions, records, strict=True):
            self._asked[(run_id, request_id, index, question)] = record

    async def judge_report(self, report: Report, request: Request, bank: NuggetBank | None,
                           signature: str | None = None) -> ReportJudgment:
        judged, cut = within_limit(report, request, self.settings.truncate)
        shown = [self.shown(s) for s in judged]
        walked = await asyncio.gather(*(self._judge_sentence(report, s, shown_s, shown, request, bank)
                                        for s, shown_s in zip(judged, shown, strict=True)))
        missing = sorted({doc for s in walked for record in s.decisions for doc in record.missing_doc_ids})
        sentences = list(walked) + [
            SentenceJudgment(index=s.index, text=s.text, citations=list(s.citations), status="truncated")
            for s in cut
        ]
        return ReportJudgment(
            run_id=report.run_id, request_id=report.request_id, team_id=report.team_id,
            assessor=self.decider.judge, sentences=sentences, nuggets=nugget_summaries(bank),
            missing_doc_ids=missing, signature=signature,
        )

    async def _judge_sentence(self, report: Report, sentence: Sentence, shown_sentence: Sentence,
                              shown: list[Sentence], request: Request, bank: NuggetBank | None) -> SentenceJudgment:
        """`shown_sentence`, `shown`: the sentence and the report's judged sentences as the model is shown them."""
        asked = {}
        for question in self._first_questions(sentence):
            record = self._asked.pop((report.run_id, request.request_id, sentence.index, question), None)
            if record is not None:
                asked[question] = record
        oracle = LLMOracle(self.decider, self.case(request, shown_sentence, shown, bank), asked)
        flags, rules = self.flag_checker.flags(sentence)
        penalty = sentence_penalty(flags, rules, self.settings.on_injection)
        result = await walk(sentence.citations, oracle, self.settings.policy, penalty)
        if self.on_sentence:
            self.on_sentence()
        return SentenceJudgment(index=sentence.index, text=sentence.text, citations=list(sentence.citations),
                                status=result.status, outcome=result.outcome, earned=result.earned,
                                decisions=result.decisions, flags=flags, flag_rules=rules,
                                flag_scores=self.flag_checker.scores(sentence),
                                withheld=self._withheld(sentence, result.penalty),
                                penalty=result.penalty)

    def _withheld(self, sentence: Sentence, penalty: str | None) -> list[str]:
        """The pieces of the sentence the model was not shown (none when it was penalised without being asked)."""
        if penalty is not None or not self.settings.withholds:
            return []
        return list(quarantine_sentence(sentence.text, self.settings.injection_detector).withheld)

    def case(self, request: Request, shown_sentence: Sentence, shown: list[Sentence], bank: NuggetBank | None
             ) -> SentenceCase:
        """What a decision's prompt may draw on for this sentence, as the model is shown it."""
        return SentenceCase(self._shown_request(request), shown_sentence, shown, self._shown_bank(bank),
                            self.shown_documents, self.settings.passages)

    def _shown_request(self, request: Request) -> Request:
        """The request as the model is shown it: every field rendered into a prompt goes through the defence."""
        if not self.settings.withholds:
            return request
        if request.request_id in self._requests_shown:
            return self._requests_shown[request.request_id]
        detector = self.settings.injection_detector
        shown = {"title": quarantine_title(request.title, detector),
                 "background": quarantine_document(request.background, detector).shown,
                 "problem_statement": quarantine_document(request.problem_statement, detector).shown}
        changed = {k: v for k, v in shown.items() if v != getattr(request, k)}
        self._requests_shown[request.request_id] = request.model_copy(update=changed) if changed else request
        return self._requests_shown[request.request_id]

    def _shown_bank(self, bank: NuggetBank | None) -> NuggetBank | None:
        """The nugget bank as the model is shown it: each question through the defence. (The answers stay as
        written: an earned answer is recorded by its text, which scoring matches against the bank.)"""
        if bank is None or not self.settings.withholds:
            return bank
        if id(bank) in self._banks_shown:
            return self._banks_shown[id(bank)][1]
        detector = self.settings.injection_detector
        nuggets = tuple(n if (q := quarantine_title(n.question, detector)) == n.question
                        else n.model_copy(update={"question": q or "[withheld: the question addresses the judge]"})
                        for n in bank.nuggets)
        shown = bank if nuggets == bank.nuggets else bank.model_copy(update={"nuggets": nuggets})
        self._banks_shown[id(bank)] = (bank, shown)  # the bank is kept, so its id is not reused
        return shown

    def _first_questions(self, sentence: Sentence) -> list[Question]:
        """The questions about documents the flowchart asks first about a cited sentence (for a cited sentence,
        its supports-citation questions; none for an uncited one)."""
        if not sentence.citations:
            return []
        return [q for q in next(flow(sentence.citations, self.settings.policy))
                if CHART.diamond(q.decision).per_document]


class LLMOracle:
    """The flowchart's questions for one sentence, answered by the model: each decision's module fills its prompt
    from the sentence's case (judge.judging.decisions.spec.DecisionSpec.prepare_for). `asked`: records of first
    questions already asked in document-major order."""

    def __init__(self, decider: Decider, case: SentenceCase, asked: dict[Question, DecisionRecord] | None = None):
        self.decider, self.case, self.asked = decider, case, asked or {}

    async def decide(self, question: Question) -> DecisionRecord | None:
        if question in self.asked:
            return self.asked[question]
        prepared = decisions.REGISTRY[question.decision].prepare_for(self.case, question.doc_ids)
        if prepared is None or isinstance(prepared, DecisionRecord):  # nothing to ask, or decided without a model
            return prepared
        return await self.decider.ask(prepared)


class ShownDocuments:
    """The document store as the model sees it: a document the detector flags, or (under the default stack) one with
    a piece in a foreign script, is shown with those pieces withheld (defence.quarantine), every other one as stored.
    Only the (rare) quarantined copies are kept, and the ids of documents seen to need none, so memory does not grow
    with the documents' text."""

    def __init__(self, documents: DocumentStore, flag_checker: FlagChecker, detector: InjectionDetector):
        self.documents, self.flag_checker, self.detector = documents, flag_checker, detector
        self._quarantined: dict[str, Document] = {}
        self._as_stored: set[str] = set()

    def get(self, doc_id: str) -> Document | None:
        if doc_id in self._quarantined:
            return self._quarantined[doc_id]
        document = self.documents.get(doc_id)
        if document is None or doc_id in self._as_stored:
            return document
        detector = self.detector
        if self.flag_checker.document_rule(doc_id) is None and not (uses_script(detector) and any(
                foreign_piece(field) is not None for field in (document.text, document.title or ""))):
            self._as_stored.add(doc_id)
            return document
        # the title is rendered into the prompt beside the text: it goes through the same defence
        shown = document.model_copy(update={"text": quarantine_document(document.text, detector).shown,
                                            "title": quarantine_title(document.title, detector)})
        self._quarantined[doc_id] = shown
        return shown
