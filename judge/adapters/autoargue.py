"""Auto-ARGUE's judgments files, read into our judgments records and written back from them.

One JSON object per line, one line per report, as the public Auto-ARGUE evaluator writes them (and argue-viz reads
them):

    {"report": {"metadata": {"run_id", "topic_id", "team_id"?}, "responses": [...], "references": [...]},
     "judgments": [{"segment_type": "sentence", "text": ..., "citations": [{"doc_id", "text"}],
                    "judgments": [{"judgment_type_id": ..., "response": {...}, "evaluator": ...,
                                   "provenance": {"doc_id": ...}}]}]}

Per cited document of a sentence: SENTENCE_ATTESTED (`is_attested`) becomes a `supports_citation` decision;
SENTENCE_ANSWERS_QUESTION (`matched_nuggets`: question text and matched answers) an `answers_nugget` decision
whose matches name the nugget of that question in the request's bank; CITED_DOCUMENT_RELEVANCE (`is_relevant`)
is not kept, because Auto-ARGUE derives it from the bank's answer references without a model call and so do we
(`citation_relevance`); writing regenerates it. The outcome is the flowchart's (judge.chart, walked by
judge.judging.flowchart under policy `all`), with Auto-ARGUE's judgments as the answers (`AutoArgueOracle`): a
cited document is supporting when it is attested, and the supported sentence answers a nugget (#3) when an
attesting document is a reference of a matched answer; a decision Auto-ARGUE does not judge takes the answer the
table declares for a judge that does not ask it. Judgment types of uncited sentences are not documented in the
files seen so far, so an unknown type is an input error naming it, and an uncited sentence without judgments stays
undetermined.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from judge.chart import ANSWERS_NUGGET, CHART, SUPPORTS_CITATION
from judge.errors import InputError
from judge.formats._jsonl import Sources, check_plain_id, expand_paths, iter_jsonl, source_name, type_name
from judge.formats.atomic import write_text_atomic
from judge.formats.judgments import (
    DecisionRecord,
    EarnedAnswer,
    ReportJudgment,
    SentenceJudgment,
    nugget_summaries,
)
from judge.judging.flowchart import Question, walk_sync
from judge.judging.judgments_reader import iter_judgments
from judge.metrics.facts import citation_support, cited_docs
from judge.types import NuggetBank

ATTESTED = "SENTENCE_ATTESTED"
ANSWERS = "SENTENCE_ANSWERS_QUESTION"
RELEVANCE = "CITED_DOCUMENT_RELEVANCE"
KNOWN_TYPES = (ATTESTED, ANSWERS, RELEVANCE)
ASSESSOR = "auto-argue"


def is_auto_argue_record(data: Any) -> bool:
    return isinstance(data, dict) and "report" in data and "judgments" in data


def is_auto_argue_file(source: Path | str) -> bool:
    """Whether the first record of a JSONL file is an Auto-ARGUE judgments record."""
    for _, data in iter_jsonl(source):
        return is_auto_argue_record(data)
    return False


# ---------------------------------------------------------------------------------------------------------
# Reading
# ---------------------------------------------------------------------------------------------------------

def read_auto_argue(source: Path | str, banks: Mapping[str, NuggetBank]) -> list[ReportJudgment]:
    """Our judgments records from an Auto-ARGUE judgments file; `banks` map request ids to nugget banks (the
    matched nuggets are named by question text)."""
    name = source_name(source)
    judgments = []
    for number, data in iter_jsonl(source):
        judgments.append(_report(data, banks, name, number))
    return judgments


def _field(obj: Any, key: str, kind: type | tuple[type, ...], what: str, name: str, line: int) -> Any:
    if not isinstance(obj, dict) or key not in obj:
        raise InputError(f"{what}: missing field {key!r} (is this an Auto-ARGUE judgments file?)", name, line)
    value = obj[key]
    if not isinstance(value, kind):
        raise InputError(f"{what}: field {key!r} must be {getattr(kind, '__name__', 'of another type')}, found "
                         f"{type_name(value)}", name, line)
    return value


def _report(data: dict[str, Any], banks: Mapping[str, NuggetBank], name: str, line: int) -> ReportJudgment:
    if not is_auto_argue_record(data):
        raise InputError("not an Auto-ARGUE judgments record: expected the fields 'report' and 'judgments'",
                         name, line)
    metadata = _field(_field(data, "report", dict, "record", name, line), "metadata", dict, "report", name, line)
    run_id = str(_field(metadata, "run_id", (str, int), "report metadata", name, line))
    request_id = str(_field(metadata, "topic_id", (str, int), "report metadata", name, line))
    check_plain_id(run_id, "report metadata: run_id", name, line)
    check_plain_id(request_id, "report metadata: topic_id", name, line)
    bank = banks.get(request_id)
    if bank is None:
        raise InputError(f"no nugget bank for request {request_id!r}: Auto-ARGUE names matched nuggets by question "
                         "text, so pass the banks Auto-ARGUE used (--nuggets)", name, line)
    segments = _field(data, "judgments", list, "record", name, line)
    sentences = [_sentence(i, seg, bank, name, line) for i, seg in enumerate(segments)]
    team = metadata.get("team_id")
    return ReportJudgment(run_id=run_id, request_id=request_id, team_id=None if team is None else str(team),
                          assessor=ASSESSOR, sentences=sentences, nuggets=nugget_summaries(bank))


def _sentence(index: int, seg: Any, bank: NuggetBank, name: str, line: int) -> SentenceJudgment:
    where = f"segment {index}"
    text = _field(seg, "text", str, where, name, line)
    citations = [str(_field(c, "doc_id", (str, int), f"{where} citation", name, line))
                 for c in _field(seg, "citations", list, where, name, line)]
    by_question = {n.question: n for n in bank.nuggets}
    decisions: list[DecisionRecord] = []
    for judgment in _field(seg, "judgments", list, where, name, line):
        kind = _field(judgment, "judgment_type_id", str, where, name, line)
        response = _field(judgment, "response", dict, f"{where} {kind}", name, line)
        doc = (judgment.get("provenance") or {}).get("doc_id") or response.get("doc_id")
        judge = f"{ASSESSOR}:{judgment.get('evaluator')}"
        if kind == ATTESTED:
            verdict = _field(response, "is_attested", bool, f"{where} {kind}", name, line)
            decisions.append(DecisionRecord(decision=SUPPORTS_CITATION, verdict=verdict,
                                            doc_ids=[str(doc)] if doc else [], judge=judge))
        elif kind == ANSWERS:
            matches = []
            for matched in _field(response, "matched_nuggets", list, f"{where} {kind}", name, line):
                question = _field(matched, "question_text", str, f"{where} {kind}", name, line)
                nugget = by_question.get(question)
                if nugget is None:
                    raise InputError(f"{where}: matched question {question!r} is not in the nugget bank of request "
                                     f"{bank.request_id}; pass the banks Auto-ARGUE used", name, line)
                answers = _field(matched, "matched_answer", list, f"{where} {kind}", name, line)
                matches += [EarnedAnswer(nugget_id=nugget.nugget_id, answer=str(a)) for a in answers]
            decisions.append(DecisionRecord(decision=ANSWERS_NUGGET, verdict=bool(matches),
                                            doc_ids=[str(doc)] if doc else [], matches=matches, judge=judge))
        elif kind != RELEVANCE:
            raise InputError(f"{where}: judgment type {kind!r} is not read by argue-judge (known: "
                             f"{', '.join(KNOWN_TYPES)})", name, line)
    sentence = SentenceJudgment(index=index, text=text, citations=citations, decisions=decisions)
    return _with_outcome(sentence, bank)


class AutoArgueOracle:
    """Answers the flowchart's diamonds for one cited sentence from Auto-ARGUE's judgments of it:
    SENTENCE_ATTESTED is the support of each cited document (`citation_support`), SENTENCE_ANSWERS_QUESTION the
    nugget answers, those a matched answer's reference among the judged document attests (nothing to ask without
    one). Any other diamond takes the answer the table declares for a judge that does not ask it
    (`Diamond.unasked`), or fails the sentence when the table declares none."""

    def __init__(self, sentence: SentenceJudgment, bank: NuggetBank):
        self.sentence = sentence
        self.support = citation_support(sentence)
        self.references = {(n.nugget_id, a.text): set(a.doc_ids) for n in bank.nuggets for a in n.answers}

    def decide(self, question: Question) -> DecisionRecord | None:
        if question.decision == SUPPORTS_CITATION:
            return DecisionRecord(decision=SUPPORTS_CITATION, verdict=all(self.support[d] for d in question.doc_ids),
                                  doc_ids=list(question.doc_ids))
        if question.decision == ANSWERS_NUGGET:
            return self._answers()
        unasked = CHART.diamond(question.decision).unasked
        if unasked is None:
            return DecisionRecord(decision=question.decision, verdict=None,
                                  error=f"Auto-ARGUE judges no '{question.decision}' decision")
        return DecisionRecord(decision=question.decision, verdict=unasked == "yes", judge=ASSESSOR)

    def _answers(self) -> DecisionRecord | None:
        earned: list[EarnedAnswer] = []
        for d in self.sentence.decisions:
            if d.decision == ANSWERS_NUGGET and d.verdict:
                for match in d.matches:
                    attested = self.references.get((match.nugget_id, match.answer), set()) & set(d.doc_ids)
                    if attested and match not in earned:
                        earned.append(match)
        return DecisionRecord(decision=ANSWERS_NUGGET, verdict=True, matches=earned) if earned else None


def _with_outcome(sentence: SentenceJudgment, bank: NuggetBank) -> SentenceJudgment:
    """ARGUE's outcome of a cited sentence: the flowchart walked with Auto-ARGUE's per-document judgments."""
    if not sentence.citations or not any(d.decision == SUPPORTS_CITATION for d in sentence.decisions):
        return sentence.model_copy(update={"status": "undetermined"})
    walked = walk_sync(tuple(sentence.citations), AutoArgueOracle(sentence, bank), "all")
    if walked.outcome is None:
        return sentence.model_copy(update={"status": walked.status})
    return sentence.model_copy(update={"outcome": walked.outcome, "earned": walked.earned})


def read_any_judgments(sources: Sources, banks: Mapping[str, NuggetBank] | None) -> list[ReportJudgment]:
    """Judgments records from our format or Auto-ARGUE's, detected per file by its first record."""
    records: list[ReportJudgment] = []
    for source in expand_paths(sources):
        if is_auto_argue_file(source):
            if not banks:
                raise InputError("this is an Auto-ARGUE judgments file: pass the nugget banks with --nuggets "
                                 "(matched nuggets are given by question text)", source_name(source))
            records += read_auto_argue(source, banks)
        else:
            records += iter_judgments(source)
    return records


# ---------------------------------------------------------------------------------------------------------
# Writing
# ---------------------------------------------------------------------------------------------------------

def to_auto_argue(judgment: ReportJudgment, bank: NuggetBank,
                  doc_text: Callable[[str], str] | None = None) -> dict[str, Any]:
    """One Auto-ARGUE judgments record from ours (the sentences within the length limit)."""
    relevant = {doc for n in bank.nuggets for a in n.answers for doc in a.doc_ids}
    question = {n.nugget_id: n.question for n in bank.nuggets}
    sentences = [s for s in judgment.sentences if s.status != "truncated"]
    segments = [_segment(s, relevant, question, doc_text) for s in sentences]
    metadata = {"team_id": judgment.team_id, "topic_id": judgment.request_id, "run_id": judgment.run_id}
    responses = [{"text": s.text, "citations": cited_docs(s)} for s in sentences]
    references = sorted({doc for s in sentences for doc in s.citations})
    return {"report": {"metadata": metadata, "responses": responses, "references": references},
            "judgments": segments}


def _segment(sentence: SentenceJudgment, relevant: set[str], question: Mapping[str, str],
             doc_text: Callable[[str], str] | None) -> dict[str, Any]:
    support = citation_support(sentence) if sentence.citations else {}
    judgments = []
    for doc in cited_docs(sentence):
        provenance = {"doc_id": doc, "sentence": None, "run_id": None, "sent_id": None}
        judgments.append(_judgment(RELEVANCE, {"doc_id": doc, "is_relevant": doc in relevant}, "null", provenance))
        matched, judge = _matches_for(sentence, doc)
        grouped: dict[str, list[str]] = {}
        for match in matched:
            if match.nugget_id in question and match.answer is not None:
                answers = grouped.setdefault(question[match.nugget_id], [])
                if match.answer not in answers:
                    answers.append(match.answer)
        nuggets = [{"question_text": q, "matched_answer": a, "importance": None} for q, a in grouped.items()]
        judgments.append(_judgment(ANSWERS, {"matched_nuggets": nuggets}, judge, provenance))
        judgments.append(_judgment(ATTESTED, {"is_attested": support[doc]}, _judge_of(sentence, doc), provenance))
    citations = [{"doc_id": doc, "text": doc_text(doc) if doc_text else ""} for doc in cited_docs(sentence)]
    return {"segment_type": "sentence", "text": sentence.text, "citations": citations, "judgments": judgments}


def _judgment(kind: str, response: dict[str, Any], evaluator: str, provenance: dict[str, Any]) -> dict[str, Any]:
    return {"judgment_type_id": kind, "response": {"judgment_type_id": kind, **response}, "evaluator": evaluator,
            "provenance": provenance}


def _covers(record: DecisionRecord, doc: str) -> bool:
    return not record.doc_ids or doc in record.doc_ids


def _evaluator(judge: str) -> str:
    return judge[len(ASSESSOR) + 1:] if judge.startswith(f"{ASSESSOR}:") else judge


def _matches_for(sentence: SentenceJudgment, doc: str) -> tuple[list[EarnedAnswer], str]:
    """The answers the sentence states, as judged against `doc`; outcome-only labels give their earned."""
    records = [d for d in sentence.decisions if d.decision == ANSWERS_NUGGET and _covers(d, doc)]
    if not records:
        return list(sentence.earned), "argue-judge"
    return [m for d in records if d.verdict for m in d.matches], _evaluator(records[0].judge)


def _judge_of(sentence: SentenceJudgment, doc: str) -> str:
    records = [d for d in sentence.decisions if d.decision == SUPPORTS_CITATION and _covers(d, doc)]
    return _evaluator(records[0].judge) if records else "argue-judge"


def write_auto_argue(path: Path, judgments: Iterable[ReportJudgment], banks: Mapping[str, NuggetBank],
                     doc_text: Callable[[str], str] | None = None) -> int:
    """Write Auto-ARGUE judgments records; returns how many. Every request needs its nugget bank."""
    lines = []
    for judgment in judgments:
        bank = banks.get(judgment.request_id)
        if bank is None:
            raise InputError(f"no nugget bank for request {judgment.request_id!r} (run {judgment.run_id}): "
                             "Auto-ARGUE names nuggets by question text and derives relevance from the bank")
        lines.append(json.dumps(to_auto_argue(judgment, bank, doc_text), ensure_ascii=False))
    write_text_atomic(path, "".join(line + "\n" for line in lines))
    return len(lines)
