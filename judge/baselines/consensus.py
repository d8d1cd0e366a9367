"""pa-BLEU and pa-METEOR: consensus-weighted multi-reference metrics (Mitra et al.), with plain BLEU / METEOR.

With references r_1..r_n of a request and a pairwise metric M(hypothesis, reference):

    Imp(r_i) = sum_{j != i} M(r_i, r_j)          (how much the other references agree with r_i)
    pa-M(res) = sum_i M(res, r_i) * Imp(r_i) / sum_i Imp(r_i)

pa-M is undefined with one reference (Imp needs a second one) and when every Imp is 0: NaN and a
BaselineWarning, once per request. No reference at all is an InputError naming the request. The plain metric
beside it is the maximum of M(res, r_i) over the references.

M = BLEU: sacrebleu's sentence-level BLEU (`BLEU.sentence_score`, the same as `sacrebleu.sentence_bleu`) with
13a tokenisation, case-sensitive, effective n-gram order, and smoothing `exp` (sacrebleu's default: the NIST
geometric sequence, a zero n-gram precision counts as 1/2^k for the k-th zero), divided by 100 so all baseline
scores lie in [0, 1]. M = METEOR: judge.baselines.meteor.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence

from judge.baselines._common import (
    group_gold,
    index_reports,
    report_text,
    require_topics,
    warn,
    with_aggregates,
)
from judge.baselines.meteor import METEOR_SIGNATURE, meteor
from judge.errors import InputError
from judge.formats.scores import ScoreRow
from judge.types import Report

Metric = Callable[[str, str], float]
BLEU_SMOOTHING = ("exp", "floor", "add-k", "none")


def importance(references: Sequence[str], metric: Metric) -> list[float]:
    """Imp(r_i) = sum over j != i of M(r_i, r_j)."""
    return [sum(metric(ri, rj) for j, rj in enumerate(references) if j != i)
            for i, ri in enumerate(references)]


def pa_score(scores: Sequence[float], weights: Sequence[float]) -> float:
    """sum_i M(res, r_i) Imp(r_i) / sum_i Imp(r_i); NaN with < 2 references or when the weights sum to 0."""
    total = sum(weights)
    if len(weights) < 2 or total <= 0:
        return math.nan
    return sum(s * w for s, w in zip(scores, weights, strict=True)) / total


def pa_undefined_reason(request_id: str, weights: Sequence[float], name: str) -> str | None:
    if len(weights) < 2:
        return (f"request {request_id!r} has {len(weights)} reference report; pa-{name} needs at least 2 "
                f"(consensus weights compare references with each other): pa-{name} is NaN there, "
                f"plain {name} is still reported")
    if sum(weights) <= 0:
        return (f"request {request_id!r}: every reference scores {name} 0 against the other references, "
                f"so the consensus weights are all 0 and pa-{name} is NaN there")
    return None


class SentenceBleu:
    """M(hyp, ref) = sacrebleu sentence BLEU / 100 with one reference."""

    def __init__(self, smooth_method: str = "exp", smooth_value: float | None = None, tokenize: str = "13a",
                 lowercase: bool = False):
        from sacrebleu.metrics import BLEU

        if smooth_method not in BLEU_SMOOTHING:
            raise ValueError(f"smoothing must be one of {', '.join(BLEU_SMOOTHING)}, not {smooth_method!r}")
        self._bleu = BLEU(smooth_method=smooth_method, smooth_value=smooth_value, tokenize=tokenize,
                          lowercase=lowercase, effective_order=True)

    def __call__(self, hypothesis: str, reference: str) -> float:
        return self._bleu.sentence_score(hypothesis, [reference]).score / 100.0

    def signature(self) -> str:
        self._bleu.sentence_score("a", ["a"])  # sacrebleu only knows nrefs once it has scored something
        return f"BLEU(sacrebleu sentence BLEU /100, {self._bleu.get_signature().format()})"


def consensus_scores(reports: Iterable[Report], gold: Iterable[Report], metric: Metric, name: str
                     ) -> list[ScoreRow]:
    """`name` (max over references) and `pa-name` per report, per request and (`all`) per run.

    Evaluated requests = those with gold reports; a report for any other request is an InputError (zero
    references); a run without a report for an evaluated request scores 0 there (NaN where pa-M is undefined).
    """
    runs = index_reports(reports)
    refs = group_gold(gold)
    if not refs:
        raise InputError(f"no gold (reference) reports given; {name} and pa-{name} need references")
    require_topics(runs, refs, f"gold (reference) report, so {name} / pa-{name} have nothing to compare with")
    values: dict[tuple[str, str, str], float] = {}
    for request_id in sorted(refs):
        ref_texts = [report_text(r) for r in refs[request_id]]
        weights = importance(ref_texts, metric)
        reason = pa_undefined_reason(request_id, weights, name)
        if reason:
            warn(reason)
        for run_id in sorted(runs):
            report = runs[run_id].get(request_id)
            if report is None:
                values[(run_id, request_id, name)] = 0.0
                values[(run_id, request_id, f"pa-{name}")] = math.nan if reason else 0.0
                continue
            text = report_text(report)
            scores = [metric(text, r) for r in ref_texts]
            values[(run_id, request_id, name)] = max(scores)
            values[(run_id, request_id, f"pa-{name}")] = pa_score(scores, weights)
    return with_aggregates(values)


def pa_bleu_scores(reports: Iterable[Report], gold: Iterable[Report], smooth_method: str = "exp",
                   smooth_value: float | None = None) -> list[ScoreRow]:
    return consensus_scores(reports, gold, SentenceBleu(smooth_method, smooth_value), "BLEU")


def pa_meteor_scores(reports: Iterable[Report], gold: Iterable[Report]) -> list[ScoreRow]:
    return consensus_scores(reports, gold, meteor, "METEOR")


_COMMON = "pa=sum_i M(res,r_i)Imp(r_i)/sum_i Imp(r_i), Imp(r_i)=sum_{j!=i} M(r_i,r_j) plain=max over refs " \
          "report_text=sentences joined by spaces missing_report=0 " \
          "aggregate=macro-mean(NaN requests left out)"


def pa_bleu_signature(smooth_method: str = "exp", smooth_value: float | None = None) -> str:
    from judge.judging.signature import BaselineSignature

    metric = SentenceBleu(smooth_method, smooth_value).signature()
    return BaselineSignature.of("pa-BLEU", ("metric", metric), _COMMON).short()


def pa_meteor_signature() -> str:
    from judge.judging.signature import BaselineSignature

    return BaselineSignature.of("pa-METEOR", ("metric", METEOR_SIGNATURE), _COMMON).short()
