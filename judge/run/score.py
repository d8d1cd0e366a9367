"""Scores from judgments alone: the path `eval`, `score`, `merge` and the calibration suite share.

Never calls a model and never imports the client: everything a metric needs is in the judgments (and the nugget
banks' answer references, which Auto-ARGUE's relevance and coverage need), so LLM judgments and human labels are
scored the same way.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping

from judge.formats.judgments import ReportJudgment
from judge.judging.replay import complete_from_decisions
from judge.judging.signature import ScoreSignature
from judge.labels import CitationPolicy
from judge.metrics import Scores, score_judgments
from judge.types import NuggetBank


def judge_label_of(records: Iterable[ReportJudgment]) -> str:
    """Who made these judgments, for the score signature: the first judge signature the records carry, else the
    assessors' names (`human:...`, sorted), else "unknown"."""
    records = list(records)
    return next((j.signature for j in records if j.signature), None) or \
        ",".join(sorted({j.assessor for j in records})) or "unknown"


def score(judgments: Iterable[ReportJudgment], judge_label: str, policy: CitationPolicy = "all",
          banks: Mapping[str, NuggetBank] | None = None) -> tuple[Scores, ScoreSignature, list[str]]:
    """Every measure of every report, its signature, and the scoring warnings. Reads `judgments` once, one at a
    time (a run's StoredJudgments stream from disk): what is kept is each report's statistics."""
    requests: set[str] = set()
    tally = {"reports": 0, "failed": 0, "undetermined": 0}

    def completed() -> Iterator[ReportJudgment]:
        for judgment in judgments:
            sentences = [complete_from_decisions(s, policy) for s in judgment.sentences]
            requests.add(judgment.request_id)
            tally["reports"] += 1
            tally["failed"] += sum(s.status == "failed" for s in sentences)
            tally["undetermined"] += sum(s.status == "undetermined" or (s.status == "judged" and s.outcome is None)
                                         for s in sentences)
            yield judgment.model_copy(update={"sentences": sentences})

    scores = score_judgments(completed(), banks)
    signature = ScoreSignature(judge=judge_label, requests=len(requests), reports=tally["reports"],
                               failed=tally["failed"], undetermined=tally["undetermined"], citation_policy=policy)
    return scores, signature, list(scores.warnings)
