"""What a page shows, built from judgments records alone (plus, when given, requests, nugget banks, documents).

No HTML here: the templates only lay out these plain objects. Outcomes, earned nuggets and scores are never
recomputed by the view: records with decisions but no outcome walk the same flowchart as `argue-judge score`
(`judge.judging.replay.complete_from_decisions`) and every number comes from `judge.metrics.score_judgments`.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from judge.chart import OUTCOME_LABEL, SUPPORTS_CITATION
from judge.formats.judgments import DecisionRecord, EarnedAnswer, ReportJudgment, SentenceJudgment, nugget_summaries
from judge.formats.paths import link_name
from judge.judging import decisions
from judge.judging.replay import complete_from_decisions
from judge.labels import OUTCOME_VALUE, CitationPolicy, Outcome, Value
from judge.metrics import F1, ReportScores, RunScores, score_judgments
from judge.types import Document, DocumentLookup, NuggetBank, Request
from judge.view.evidence import Segment, evidence_spans, highlighted

OUTCOME_TEXT: dict[int, str] = OUTCOME_LABEL  # the flowchart table's short label of each leaf (judge.chart)
# Colour is never the only signal: every class comes with a symbol and a text label.
VALUE_STYLE: dict[Value, tuple[str, str, str]] = {   # value -> (css class, symbol, word)
    Value.POSITIVE: ("pos", "+", "positive"),
    Value.NEGATIVE: ("neg", "\u2212", "negative"),
    Value.NEUTRAL: ("neu", "0", "neutral"),
}
STATUS_STYLE: dict[str, tuple[str, str, str]] = {     # status without outcome -> (css class, symbol, label)
    "truncated": ("cut", "\u2702", "past the length limit: not judged"),
    "failed": ("fail", "!", "judging failed: not scored"),
    "undetermined": ("undet", "?", "undetermined: not scored"),
    "judged": ("undet", "?", "no outcome: not scored"),
}
FLAG_TEXT: dict[str, str] = {
    "addresses_judge": "the sentence addresses the assessor, judge or model",
    "cited_document_addresses_judge": "a cited document addresses the assessor, judge or model",
}


@dataclass(frozen=True)
class CitedDocument:
    doc_id: str
    title: str | None
    found: bool                          # False: not in --docs (or no --docs given)
    segments: tuple[Segment, ...] = ()   # the text with the evidence marked; empty without the document
    evidence_found: bool = False         # the quoted evidence was located in the text


@dataclass(frozen=True)
class MatchView:
    """A nugget answer a decision matched or a sentence earned, with the nugget's question when it is known."""

    nugget_id: str
    question: str | None
    answer: str | None


@dataclass(frozen=True)
class JudgeVote:
    """One judge's own answer to a decision a panel of judges voted on."""

    judge: str
    verdict: str                         # "yes" | "no" | "undecided" | "failed"
    rationale: str
    matches: tuple[MatchView, ...]
    error: str | None
    confidence: float | None = None


@dataclass(frozen=True)
class DecisionView:
    decision: str
    question: str
    verdict: str                         # "yes" | "no" | "undecided" | "failed"
    rationale: str
    evidence: str | None
    judge: str
    prompt_hash: str | None
    error: str | None
    matches: tuple[MatchView, ...]
    documents: tuple[CitedDocument, ...]
    confidence: float | None = None      # the model's probability for its verdict, where it was recorded
    threshold: float | None = None       # the threshold the verdict was held to (eval --thresholds)
    model_verdict: str | None = None     # the model's own verdict where the threshold flipped it
    panel: tuple[JudgeVote, ...] = ()    # each judge's answer where a panel of judges voted

    @property
    def split(self) -> bool:
        """Whether the panel's judges disagree: their verdicts, or the answers they matched, are not all the same."""
        given = [(v.verdict, v.matches) for v in self.panel if v.verdict in ("yes", "no")]
        return len(set(given)) > 1

    @property
    def key(self) -> tuple[str, ...]:
        """What the decision was about: the same key in two judgments files means the same question."""
        return (self.decision, *sorted(d.doc_id for d in self.documents))


@dataclass(frozen=True)
class SentenceView:
    index: int
    text: str
    citations: tuple[str, ...]
    status: str
    outcome: int | None
    css: str                             # pos | neg | neu | cut | fail | undet
    symbol: str
    label: str
    decisions: tuple[DecisionView, ...]
    earned: tuple[MatchView, ...]
    cited_titles: tuple[tuple[str, str | None], ...]
    flags: tuple[str, ...] = ()          # the injection detector's flags (judge.formats.judgments.Flag)
    flag_rules: tuple[str, ...] = ()
    withheld: tuple[str, ...] = ()       # pieces of the sentence the model was not shown (judge.defence.quarantine)
    penalty: str | None = None           # why the outcome was set without the model (--on-injection penalise)

    @property
    def number(self) -> int:
        return self.index + 1

    @property
    def split(self) -> bool:
        """Whether the judges of a panel disagree on one of its decisions."""
        return any(d.split for d in self.decisions)

    @property
    def scored(self) -> bool:
        return self.status == "judged" and self.outcome is not None


@dataclass(frozen=True)
class AnswerView:
    text: str | None                     # None: an absence nugget, earned as a whole
    earned_by: tuple[int, ...]           # sentence numbers
    doc_ids: tuple[str, ...]             # attesting documents, from the nugget bank when one was given


@dataclass(frozen=True)
class NuggetView:
    nugget_id: str
    question: str
    importance: str
    aggregator: str
    absence: bool
    earned: bool
    answers: tuple[AnswerView, ...]


@dataclass(frozen=True)
class ReportView:
    run_id: str
    request_id: str
    team_id: str | None
    assessor: str
    signature: str | None
    request: Request | None
    sentences: tuple[SentenceView, ...]
    nuggets: tuple[NuggetView, ...] | None   # None: no nugget bank, recall undefined
    scores: ReportScores
    missing_doc_ids: tuple[str, ...]
    file: str                                # path of the page, relative to the view's root

    def value(self, measure: object) -> float:
        return self.scores[measure]  # type: ignore[index]

    @property
    def outcome_counts(self) -> dict[int, int]:
        return {int(o): sum(s.outcome == o for s in self.sentences if s.scored) for o in Outcome}

    @property
    def status_counts(self) -> dict[str, int]:
        return {css: sum(s.css == css for s in self.sentences) for css in ("pos", "neg", "neu", "cut", "fail",
                                                                             "undet")}


@dataclass(frozen=True)
class RunView:
    run_id: str
    scores: RunScores
    reports: tuple[ReportView, ...]

    @property
    def outcome_counts(self) -> dict[int, int]:
        return {int(o): sum(r.outcome_counts[int(o)] for r in self.reports) for o in Outcome}

    def value(self, measure: object) -> float:
        return self.scores[measure]  # type: ignore[index]


@dataclass
class Site:
    runs: list[RunView]
    warnings: list[str] = field(default_factory=list)

    @property
    def reports(self) -> list[ReportView]:
        return [r for run in self.runs for r in run.reports]

    @property
    def assessors(self) -> list[str]:
        return sorted({r.assessor for r in self.reports})


def page_name(folder: str, run_id: str, request_id: str) -> str:
    """A file name safe on every file system, unique per (run, request) even when ids differ only in symbols."""
    return f"{folder}/{link_name(run_id, request_id)}.html"


def complete(judgment: ReportJudgment, banks: Mapping[str, NuggetBank] | None, policy: CitationPolicy
             ) -> ReportJudgment:
    """Fill what `argue-judge score` would: outcomes from recorded decisions, the bank when the record has none."""
    update: dict[str, object] = {"sentences": [complete_from_decisions(s, policy) for s in judgment.sentences]}
    if judgment.nuggets is None and banks and judgment.request_id in banks:
        update["nuggets"] = nugget_summaries(banks[judgment.request_id])
    return judgment.model_copy(update=update)


def build_site(judgments: Iterable[ReportJudgment], *, requests: Mapping[str, Request] | None = None,
               banks: Mapping[str, NuggetBank] | None = None, documents: DocumentLookup | None = None,
               policy: CitationPolicy = "all", folder: str = "reports") -> Site:
    """Scores every record (InputError on a duplicate run/request) and builds one ReportView per record."""
    completed = [complete(j, banks, policy) for j in judgments]
    scores = score_judgments(completed)
    by_run: dict[str, list[ReportView]] = {}
    for judgment in sorted(completed, key=lambda j: (j.run_id, j.request_id)):
        report_scores = scores.runs[judgment.run_id].reports[judgment.request_id]
        view = report_view(judgment, report_scores, requests, banks, documents, folder)
        by_run.setdefault(judgment.run_id, []).append(view)
    runs = [RunView(run_id, scores.runs[run_id], tuple(views)) for run_id, views in by_run.items()]
    runs.sort(key=lambda r: (-_sortable(r.value(F1)), r.run_id))
    return Site(runs=runs, warnings=list(scores.warnings))


def _sortable(value: float) -> float:
    return -math.inf if math.isnan(value) else value


def report_view(judgment: ReportJudgment, scores: ReportScores, requests: Mapping[str, Request] | None,
                banks: Mapping[str, NuggetBank] | None, documents: DocumentLookup | None, folder: str
                ) -> ReportView:
    docs = _DocumentCache(documents)
    questions = {n.nugget_id: n.question for n in judgment.nuggets or []}
    sentences = tuple(_sentence_view(s, docs, questions) for s in judgment.sentences)
    bank = (banks or {}).get(judgment.request_id)
    return ReportView(
        run_id=judgment.run_id, request_id=judgment.request_id, team_id=judgment.team_id,
        assessor=judgment.assessor, signature=judgment.signature,
        request=(requests or {}).get(judgment.request_id), sentences=sentences,
        nuggets=None if judgment.nuggets is None else _nugget_views(judgment, sentences, bank, scores.earned),
        scores=scores, missing_doc_ids=tuple(judgment.missing_doc_ids),
        file=page_name(folder, judgment.run_id, judgment.request_id),
    )


class _DocumentCache:
    """One lookup per document per page: a report cites the same document from several sentences."""

    def __init__(self, documents: DocumentLookup | None):
        self._documents = documents
        self._seen: dict[str, Document | None] = {}

    def get(self, doc_id: str) -> Document | None:
        if self._documents is None:
            return None
        if doc_id not in self._seen:
            self._seen[doc_id] = self._documents.get(doc_id)
        return self._seen[doc_id]


def _matches(answers: Iterable[EarnedAnswer], questions: Mapping[str, str]) -> tuple[MatchView, ...]:
    return tuple(MatchView(a.nugget_id, questions.get(a.nugget_id), a.answer) for a in answers)


def _sentence_view(sentence: SentenceJudgment, docs: _DocumentCache, questions: Mapping[str, str]
                   ) -> SentenceView:
    if sentence.status == "judged" and sentence.outcome is not None:
        outcome = Outcome(sentence.outcome)
        css, symbol, word = VALUE_STYLE[OUTCOME_VALUE[outcome]]
        label = f"#{int(outcome)} {OUTCOME_TEXT[int(outcome)]} ({word})"
    else:
        css, symbol, label = STATUS_STYLE[sentence.status]
    cited_titles = tuple((d, doc.title if (doc := docs.get(d)) else None) for d in sentence.citations)
    return SentenceView(
        index=sentence.index, text=sentence.text, citations=tuple(sentence.citations), status=sentence.status,
        outcome=None if sentence.outcome is None else int(sentence.outcome), css=css, symbol=symbol, label=label,
        decisions=tuple(_decision_view(d, docs, questions) for d in sentence.decisions),
        earned=_matches(sentence.earned, questions),
        cited_titles=cited_titles, flags=tuple(sentence.flags), flag_rules=tuple(sentence.flag_rules),
        withheld=tuple(sentence.withheld), penalty=sentence.penalty,
    )


def _verdict(record: DecisionRecord) -> str:
    if record.verdict is None:
        return "failed" if record.error else "undecided"
    return "yes" if record.verdict else "no"


def _decision_view(record: DecisionRecord, docs: _DocumentCache, questions: Mapping[str, str]) -> DecisionView:
    verdict = _verdict(record)
    # Only the support decision quotes a document; the nugget decisions list the documents they were shown.
    quoting = record.decision == SUPPORTS_CITATION
    cited = []
    for doc_id in record.doc_ids:
        document = docs.get(doc_id)
        if document is None:
            cited.append(CitedDocument(doc_id, None, found=False))
            continue
        spans = evidence_spans(document.text, record.evidence) if quoting else []
        segments = tuple(highlighted(document.text, spans)) if quoting else ()
        cited.append(CitedDocument(doc_id, document.title, found=True, segments=segments,
                                   evidence_found=bool(spans)))
    return DecisionView(
        decision=record.decision, question=decisions.REGISTRY[record.decision].question, verdict=verdict,
        rationale=record.rationale, evidence=record.evidence, judge=record.judge, prompt_hash=record.prompt_hash,
        error=record.error, matches=_matches(record.matches, questions), documents=tuple(cited),
        confidence=record.confidence, threshold=record.threshold,
        model_verdict=None if record.model_verdict is None else ("yes" if record.model_verdict else "no"),
        panel=tuple(JudgeVote(r.judge, _verdict(r), r.rationale, _matches(r.matches, questions), r.error,
                              r.confidence) for r in record.panel or ()),
    )


def _nugget_views(judgment: ReportJudgment, sentences: Sequence[SentenceView], bank: NuggetBank | None,
                  earned_ids: frozenset[str]) -> tuple[NuggetView, ...]:
    """The request's nuggets; whether each is earned comes from judge.metrics (AND needs every answer)."""
    # Only scored sentences earn (as in judge.metrics): a truncated sentence's matches are not counted.
    earned_by: dict[tuple[str, str | None], list[int]] = {}
    for s in sentences:
        if s.scored:
            for e in s.earned:  # MatchView
                earned_by.setdefault((e.nugget_id, e.answer), []).append(s.number)
    bank_nuggets = bank.by_id() if bank else {}
    views = []
    seen: set[str] = set()
    for nugget in judgment.nuggets or []:
        if nugget.nugget_id in seen:
            continue
        seen.add(nugget.nugget_id)
        attested = {a.text: a.doc_ids for a in bank_nuggets[nugget.nugget_id].answers} \
            if nugget.nugget_id in bank_nuggets else {}
        if nugget.absence:
            by = sorted({n for (nid, _), numbers in earned_by.items() if nid == nugget.nugget_id for n in numbers})
            answers = (AnswerView(None, tuple(by), ()),)
        else:
            answers = tuple(AnswerView(a, tuple(earned_by.get((nugget.nugget_id, a), [])), attested.get(a, ()))
                            for a in nugget.answers)
        views.append(NuggetView(
            nugget_id=nugget.nugget_id, question=nugget.question, importance=nugget.importance,
            aggregator=nugget.aggregator, absence=nugget.absence, earned=nugget.nugget_id in earned_ids,
            answers=answers))
    return tuple(views)

