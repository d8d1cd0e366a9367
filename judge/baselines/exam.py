"""EXAM (Sander & Dietz, DESIRES 2021): how many of a request's nugget questions a QA system can answer
from the report text alone.

- The exam of a request: its nugget questions. Absence nuggets are skipped (a reader cannot answer "is X
  missing from the collection?"), and so are nuggets without any answer (nothing to grade against).
- The reader sees only the report's sentences (no citations, no documents).
- A question is answered correctly when the reader's answer matches one of the nugget's answers
  (judge.baselines.answers.AnswerMatcher: normalised exact match, or token F1 >= 0.5 by default). Each nugget
  is one question, so an AND nugget counts as correct when any one of its answers is matched.
- EXAM(report) = correct / questions. A run's EXAM = the mean over the evaluated requests (those with a nugget
  bank), where a request the run has no report for scores 0. A request whose bank has no gradable question
  has EXAM NaN for every run (with a warning) and is left out of the mean.
- n-EXAM (with gold reports) = sum over requests of EXAM(run) / sum over requests of EXAM(gold); with several
  gold reports for a request EXAM(gold) there is their mean; a request without gold report counts 0 for gold.
  It can exceed 1. A gold sum of 0 gives NaN with a warning. Reported only in the run's `all` row.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence

from judge.baselines._common import index_reports, require_topics, warn, with_aggregates
from judge.baselines.answers import AnswerMatcher
from judge.baselines.readers.base import QASystem, qa_signature
from judge.errors import InputError
from judge.formats.scores import ALL, ScoreRow
from judge.types import Nugget, NuggetBank, Report

EXAM = "EXAM"
N_EXAM = "n-EXAM"


def exam_questions(bank: NuggetBank) -> list[Nugget]:
    """The nuggets that can be asked: not absence nuggets, and with at least one answer."""
    return [n for n in bank.nuggets if not n.absence and any(a.text.strip() for a in n.answers)]


def _answer_texts(nugget: Nugget) -> list[str]:
    return [a.text for a in nugget.answers if a.text.strip()]


def sentences_of(report: Report) -> list[str]:
    return [s.text for s in report.sentences if s.text.strip()]


def answered_correctly(qa: QASystem, sentences: Sequence[str], nugget: Nugget, matcher: AnswerMatcher
                       ) -> bool:
    answers = _answer_texts(nugget)
    result = qa.answer(nugget.question, sentences, answers)
    return matcher.matches(result.text, answers)


def sentence_answers_nugget(qa: QASystem, sentence_text: str, nugget: Nugget,
                            matcher: AnswerMatcher | None = None) -> bool:
    """The same reader's per-sentence "does this sentence answer the nugget?" decision, for calibration
    against the LLM judge's answers_nugget. Absence nuggets and nuggets without answers cannot be asked:
    ValueError (filter with exam_questions)."""
    if nugget.absence:
        raise ValueError(f"nugget {nugget.nugget_id!r} is an absence nugget; a QA reader cannot decide it")
    if not _answer_texts(nugget):
        raise ValueError(f"nugget {nugget.nugget_id!r} has no answer to grade against")
    if not sentence_text.strip():
        return False
    return answered_correctly(qa, [sentence_text], nugget, matcher or AnswerMatcher())


def exam_report(qa: QASystem, report: Report, bank: NuggetBank, matcher: AnswerMatcher | None = None
                ) -> tuple[int, int]:
    """(correct, questions) for one report."""
    matcher = matcher or AnswerMatcher()
    questions = exam_questions(bank)
    sentences = sentences_of(report)
    if not sentences:
        return 0, len(questions)
    return sum(answered_correctly(qa, sentences, n, matcher) for n in questions), len(questions)


def _exam_table(runs: Mapping[str, Mapping[str, Report]], banks: Mapping[str, NuggetBank], qa: QASystem,
                matcher: AnswerMatcher) -> dict[tuple[str, str], float]:
    table: dict[tuple[str, str], float] = {}
    prime = getattr(qa, "prime", None)  # optional: a reader that can batch its work ahead of answer() calls
    for request_id in sorted(banks):
        n_questions = len(exam_questions(banks[request_id]))
        if callable(prime) and n_questions:
            prime([n.question for n in exam_questions(banks[request_id])]
                  + [s for run in runs.values() if request_id in run for s in sentences_of(run[request_id])])
        for run_id in sorted(runs):
            report = runs[run_id].get(request_id)
            if n_questions == 0:
                table[(run_id, request_id)] = math.nan
            elif report is None:
                table[(run_id, request_id)] = 0.0
            else:
                correct, total = exam_report(qa, report, banks[request_id], matcher)
                table[(run_id, request_id)] = correct / total
    return table


def exam_scores(reports: Iterable[Report], banks: Mapping[str, NuggetBank], qa: QASystem,
                gold: Iterable[Report] | None = None, matcher: AnswerMatcher | None = None) -> list[ScoreRow]:
    """EXAM per (run, request) and per run (`all`), plus n-EXAM per run when gold reports are given."""
    matcher = matcher or AnswerMatcher()
    if not banks:
        raise InputError("no nugget banks given; EXAM needs the nugget questions of every request")
    runs = index_reports(reports)
    require_topics(runs, banks, "nugget bank (EXAM's questions)")
    for request_id in sorted(banks):
        if not exam_questions(banks[request_id]):
            warn(f"request {request_id!r}: its nugget bank has no gradable question (absence nuggets and "
                 "nuggets without answers are skipped), so EXAM is NaN there and left out of the mean")
    table = _exam_table(runs, banks, qa, matcher)
    rows = with_aggregates({(run, req, EXAM): v for (run, req), v in table.items()})
    if gold is not None:
        gold_runs = _gold_as_one_run(gold, banks)
        gold_sum = 0.0
        for request_id in sorted(banks):
            if not exam_questions(banks[request_id]):
                continue
            values = [_exam_table({"_": {request_id: r}}, {request_id: banks[request_id]}, qa, matcher)
                      [("_", request_id)] for r in gold_runs.get(request_id, [])]
            gold_sum += sum(values) / len(values) if values else 0.0
        if gold_sum == 0:
            warn("the gold reports answer no exam question (EXAM sum 0), so n-EXAM is NaN")
        for run_id in sorted(runs):
            run_sum = sum(v for (r, _), v in table.items() if r == run_id and not math.isnan(v))
            rows.append(ScoreRow(run_id, ALL, N_EXAM, run_sum / gold_sum if gold_sum else math.nan))
    return sorted(rows)


def _gold_as_one_run(gold: Iterable[Report], banks: Mapping[str, NuggetBank]) -> dict[str, list[Report]]:
    out: dict[str, list[Report]] = {}
    for report in gold:
        if report.request_id not in banks:
            raise InputError(f"gold report for request {report.request_id!r} has no nugget bank; add the "
                             "bank or drop the gold report", report.source)
        out.setdefault(report.request_id, []).append(report)
    return out


def exam_signature(qa: QASystem, matcher: AnswerMatcher | None = None, gold: bool = False) -> str:
    from judge.judging.signature import BaselineSignature

    matcher = matcher or AnswerMatcher()
    return BaselineSignature.of(
        "EXAM", qa_signature(qa), matcher.signature(), ("normalisation", "squad(lower,punct,articles)"),
        ("questions", "nuggets(absence+answerless skipped; AND graded as any answer)"),
        ("reader_input", "report sentences only"), ("missing_report", "0"), ("aggregate", "macro-mean"),
        *([("n-EXAM", "sum EXAM(run)/sum EXAM(gold), gold multi=mean")] if gold else [])).short()
