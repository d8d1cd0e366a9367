"""The judgments file argue-judge writes and reads (judge.formats.judgments): one record per report, its sentences'
outcomes and decisions; what LLM judges and human assessors both write. Read by judge.judging.judgments_reader,
which knows the decision names a record may have."""

from __future__ import annotations

from typing import Any

from judge.formats.judgments import ReportJudgment
from judge.formats.registry import Format, register


def _detect(record: dict[str, Any]) -> bool:
    return "sentences" in record and "run_id" in record and "request_id" in record


def _write(judgment: ReportJudgment) -> dict[str, Any]:
    return judgment.model_dump(mode="json")


FORMAT = register(Format(
    "argue-judgments", "judgments", "argue-judge judgments: {format, run_id, request_id, assessor, sentences: "
    "[{index, text, citations, outcome, earned, decisions}], nuggets}, one report per line",
    _detect, None, _write, what="an argue-judge judgments file",
    use="give it to `argue-judge score`, or to --human / --judged", rank=20))
