"""The baselines `argue-judge eval --with-baselines` runs beside the judge, on the same reports.

EXAM needs only the nugget banks (and the [qa] extra for its reader); ROUGE (and the [rouge] extra), pa-BLEU and
pa-METEOR need gold reports. A baseline that cannot run says why instead of silently disappearing.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from judge.errors import ConfigurationError
from judge.formats.scores import ScoreRow
from judge.types import NuggetBank, Report


@dataclass(frozen=True)
class BaselineResult:
    name: str
    signature: str
    rows: list[ScoreRow]
    headline: str   # the metric shown beside the judge's F1


def run_baselines(reports: Sequence[Report], banks: Mapping[str, NuggetBank], gold: Sequence[Report] | None
                  ) -> tuple[list[BaselineResult], list[str]]:
    """Every baseline the inputs allow, and a note for each left out: EXAM without nugget banks, the reference
    baselines without gold reports, and a baseline whose extra is not installed ([qa] for EXAM's reader, [rouge]
    for ROUGE; pa-BLEU and pa-METEOR need none), so one missing extra never takes the others down."""
    results: list[BaselineResult] = []
    notes: list[str] = []

    def attempt(name: str, run: Callable[[], BaselineResult]) -> None:
        try:
            results.append(run())
        except (ImportError, ConfigurationError) as exc:  # its extra is missing (the message names it)
            notes.append(f"{name} skipped: {exc}")

    if banks:
        attempt("EXAM", lambda: _exam(reports, banks, gold))
    else:
        notes.append("EXAM skipped: no nugget banks")
    if gold:
        from judge.baselines.consensus import (
            pa_bleu_scores,
            pa_bleu_signature,
            pa_meteor_scores,
            pa_meteor_signature,
        )

        with_gold = {g.request_id for g in gold}
        evaluated = [r for r in reports if r.request_id in with_gold]
        attempt("ROUGE", lambda: _rouge(evaluated, gold))
        attempt("pa-BLEU", lambda: BaselineResult("pa-bleu", pa_bleu_signature(), pa_bleu_scores(evaluated, gold),
                                                  "pa-BLEU"))
        attempt("pa-METEOR", lambda: BaselineResult("pa-meteor", pa_meteor_signature(),
                                                    pa_meteor_scores(evaluated, gold), "pa-METEOR"))
    else:
        notes.append("ROUGE, pa-BLEU and pa-METEOR skipped: they need gold reports (--gold)")
    return results, notes


def _exam(reports: Sequence[Report], banks: Mapping[str, NuggetBank], gold: Sequence[Report] | None
          ) -> BaselineResult:
    from judge.baselines.answers import AnswerMatcher
    from judge.baselines.exam import exam_scores, exam_signature
    from judge.baselines.readers import load_qa

    matcher = AnswerMatcher()
    reader = load_qa("embedding", matcher=matcher)
    evaluated = [r for r in reports if r.request_id in banks]
    return BaselineResult("exam", exam_signature(reader, matcher, gold=gold is not None),
                          exam_scores(evaluated, banks, reader, gold=gold, matcher=matcher), "EXAM")


def _rouge(reports: Sequence[Report], gold: Sequence[Report]) -> BaselineResult:
    from judge.baselines.rouge import rouge_scores, rouge_signature

    return BaselineResult("rouge", rouge_signature(), rouge_scores(reports, gold), "ROUGE-1-F")
