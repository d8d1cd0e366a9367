"""Confidence: is the judge as sure as it is right, and does a threshold on its confidence improve agreement?

- `reliability`: the reliability table (equal-width bins over [0, 1]: count, mean confidence, accuracy per bin)
  and the expected calibration error, ECE = sum over bins of (n_b / n) * |accuracy_b - mean confidence_b|
  (Naeini et al., AAAI 2015; Guo et al., ICML 2017), with the maximum calibration error and the Brier score;
- `fit_threshold`: the threshold on one verdict's confidence that maximises Cohen's kappa (or balanced accuracy)
  on the items given: a verdict held with confidence below it flips to the other verdict;
- `cross_validated_threshold`: the same fit, judged honestly: every item's thresholded label comes from a
  threshold fitted on the other folds (seeded k-fold), so the agreement after thresholding is measured on items
  the threshold was not fitted on. The threshold to use is then fitted on all items.

Items the judge failed on (label None) never flip and stay out of every agreement number, as in
`judge.calibration.stats.agreement`; items without a confidence keep their label (nothing to compare).
May import numpy, pydantic and the rest of `judge.calibration.stats`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Literal

import numpy as np
from pydantic import BaseModel, Field

from judge.calibration.stats.agreement import AgreementResult, cohen_kappa, confusion_matrix, decision_agreement
from judge.calibration.stats.mcnemar import McNemarResult, mcnemar_exact
from judge.calibration.stats.undefined import Statistics

FitMetric = Literal["kappa", "balanced_accuracy"]
FIT_METRICS: tuple[FitMetric, ...] = ("kappa", "balanced_accuracy")
DEFAULT_BINS = 10
DEFAULT_FOLDS = 5
MIN_FIT_ITEMS = 10  # fewer labelled items with a confidence than this: no threshold is fitted


class ReliabilityBin(Statistics):
    lower: float
    upper: float
    count: int
    mean_confidence: float | None = Field(description="undefined for an empty bin")
    accuracy: float | None = Field(description="share of the bin's items whose judge label is the human label")


class ConfidenceResult(Statistics):
    """How well one decision's confidence is calibrated, over the items with a judge label and a confidence."""

    n: int = Field(description="items with a judge label and a confidence")
    without_confidence: int = Field(description="items with a judge label but no confidence (left out)")
    mean_confidence: float | None
    accuracy: float | None
    ece: float | None = Field(description="expected calibration error; undefined when n = 0")
    mce: float | None = Field(description="maximum calibration error over non-empty bins")
    brier: float | None = Field(description="mean squared difference of confidence and correctness")
    bins: list[ReliabilityBin]


def reliability(confidences: Sequence[float], correct: Sequence[bool], n_bins: int = DEFAULT_BINS,
                without_confidence: int = 0) -> ConfidenceResult:
    """Reliability table and calibration errors. Bin b holds confidences in [b/n_bins, (b+1)/n_bins), the last
    bin also 1.0."""
    if len(confidences) != len(correct):
        raise ValueError("confidences and correctness differ in length")
    if n_bins < 1:
        raise ValueError("n_bins must be at least 1")
    conf = np.asarray(confidences, dtype=float)
    right = np.asarray(correct, dtype=float)
    if conf.size and (np.any(conf < 0) | np.any(conf > 1) | np.any(~np.isfinite(conf))):
        raise ValueError("confidences must lie in [0, 1]")
    index = np.minimum((conf * n_bins).astype(int), n_bins - 1)
    bins, gaps = [], []
    n = int(conf.size)
    for b in range(n_bins):
        members = index == b
        count = int(members.sum())
        mean_conf = float(conf[members].mean()) if count else None
        acc = float(right[members].mean()) if count else None
        if count:
            gaps.append((count, abs(acc - mean_conf)))  # type: ignore[operator]
        bins.append(ReliabilityBin(lower=b / n_bins, upper=(b + 1) / n_bins, count=count, mean_confidence=mean_conf,
                                   accuracy=acc, undefined={} if count else dict.fromkeys(
                                       ("mean_confidence", "accuracy"), "no item in this bin")))
    return ConfidenceResult(
        n=n, without_confidence=without_confidence,
        mean_confidence=float(conf.mean()) if n else None, accuracy=float(right.mean()) if n else None,
        ece=sum(c / n * g for c, g in gaps) if n else None, mce=max(g for _, g in gaps) if n else None,
        brier=float(np.mean((conf - right) ** 2)) if n else None, bins=bins,
        undefined={} if n else dict.fromkeys(("mean_confidence", "accuracy", "ece", "mce", "brier"),
                                             "no judged item with a confidence"))


def confidence_result(human: Sequence[str], judge: Sequence[str | None], confidences: Sequence[float | None],
                      n_bins: int = DEFAULT_BINS) -> ConfidenceResult:
    """`reliability` over the items with a judge label and a confidence (correct: judge label = human label)."""
    kept = [(c, h == j) for h, j, c in zip(human, judge, confidences, strict=True) if j is not None and c is not None]
    missing = sum(j is not None and c is None for j, c in zip(judge, confidences))
    return reliability([c for c, _ in kept], [r for _, r in kept], n_bins, without_confidence=missing)


# ---------------------------------------------------------------------------------------------------------------
# Thresholds
# ---------------------------------------------------------------------------------------------------------------

class Rule(BaseModel):
    """Keep `verdict` only at confidence >= `threshold`; below, it becomes `other`. threshold 0: never flips."""

    verdict: str
    other: str
    threshold: float


def apply_rule(judge: Sequence[str | None], confidences: Sequence[float | None], rule: Rule) -> list[str | None]:
    return [rule.other if j == rule.verdict and c is not None and c < rule.threshold else j
            for j, c in zip(judge, confidences, strict=True)]


def agreement_metric(human: Sequence[str], judge: Sequence[str | None], labels: Sequence[str],
                     metric: FitMetric) -> float | None:
    """Cohen's kappa or balanced accuracy over the items the judge labelled (None when undefined)."""
    pairs = [(h, j) for h, j in zip(human, judge) if j is not None]
    if not pairs:
        return None
    return _metric(confusion_matrix([h for h, _ in pairs], [j for _, j in pairs], labels), metric)


def _metric(matrix: np.ndarray, metric: FitMetric) -> float | None:
    if metric == "kappa":
        return cohen_kappa(matrix)
    support = matrix.sum(axis=1)
    recalls = [matrix[i, i] / support[i] for i in range(len(matrix)) if support[i]]
    return float(np.mean(recalls)) if recalls else None


def fit_threshold(human: Sequence[str], judge: Sequence[str | None], confidences: Sequence[float | None],
                  yes_no: tuple[str, str], labels: Sequence[str], metric: FitMetric = "kappa") -> Rule:
    """The rule that maximises `metric` on these items. Candidates, for each of the two verdicts: no flip
    (threshold 0), and every midpoint between consecutive distinct confidences of the judged items (either
    verdict), flipping the verdict's items below it. Ties go to fewer flips, so a threshold that does not help
    is 0."""
    index = {lab: i for i, lab in enumerate(labels)}
    compared = [(h, j) for h, j in zip(human, judge) if j is not None]
    base = confusion_matrix([h for h, _ in compared], [j for _, j in compared], labels) if compared \
        else np.zeros((len(labels), len(labels)), dtype=np.int64)
    seen = sorted({c for j, c in zip(judge, confidences) if j is not None and c is not None})
    cuts = [(a + b) / 2 for a, b in zip(seen, seen[1:])]
    chosen = Rule(verdict=yes_no[0], other=yes_no[1], threshold=0.0)
    value = _metric(base, metric)
    best = (-math.inf if value is None else value, 0)
    for verdict, other in (yes_no, yes_no[::-1]):
        # Raising the threshold moves the verdict's items, lowest confidence first, from the verdict's column of
        # the confusion matrix to the other's: each candidate costs one small matrix, not a pass over the items.
        side = sorted((c, index[h]) for h, j, c in zip(human, judge, confidences) if j == verdict and c is not None)
        matrix = base.copy()
        flipped = 0
        for cut in cuts:
            moved = False
            while flipped < len(side) and side[flipped][0] < cut:
                row = side[flipped][1]
                matrix[row, index[verdict]] -= 1
                matrix[row, index[other]] += 1
                flipped += 1
                moved = True
            if not moved:
                continue  # the same flips as the previous cut
            value = _metric(matrix, metric)
            score = (-math.inf if value is None else value, -flipped)
            if score > best:
                best = score
                # 7 decimals: a midpoint of two 6-decimal confidences, exactly, not 0.7250000000000001
                chosen = Rule(verdict=verdict, other=other, threshold=round(cut, 7))
    return chosen


class ThresholdFit(BaseModel):
    """One decision's fitted threshold and its honest (cross-validated) effect on agreement."""

    decision: str
    metric: FitMetric
    rule: Rule = Field(description="fitted on all items: the rule the thresholds file holds")
    n_fit: int = Field(description="items the final rule was fitted on (judge label known)")
    with_confidence: int
    folds: int
    seed: int
    fold_rules: list[Rule] = Field(description="the rule fitted without each fold, in fold order")
    before: AgreementResult = Field(description="the model's own labels")
    after: AgreementResult = Field(description="each item thresholded by the rule fitted without its fold")
    flipped_ids: list[str] = Field(description="items whose held-out thresholded label differs from the model's")
    mcnemar: McNemarResult = Field(description="correctness before against after, on the items compared")


def cross_validated_threshold(decision: str, item_ids: Sequence[str], human: Sequence[str],
                              judge: Sequence[str | None], confidences: Sequence[float | None],
                              yes_no: tuple[str, str], labels: Sequence[str], *, metric: FitMetric = "kappa",
                              folds: int = DEFAULT_FOLDS, seed: int = 0, n_boot: int = 1000) -> ThresholdFit | None:
    """Seeded k-fold cross-validation of `fit_threshold`; None when fewer than MIN_FIT_ITEMS items have both a
    judge label and a confidence (too few to fit anything)."""
    usable = [i for i, (j, c) in enumerate(zip(judge, confidences)) if j is not None and c is not None]
    if len(usable) < max(MIN_FIT_ITEMS, folds):
        return None
    n = len(human)
    fold_of = np.empty(n, dtype=int)
    fold_of[np.random.default_rng(seed).permutation(n)] = np.arange(n) % folds
    after: list[str | None] = list(judge)
    fold_rules = []
    for k in range(folds):
        train = [i for i in range(n) if fold_of[i] != k]
        rule = fit_threshold([human[i] for i in train], [judge[i] for i in train],
                             [confidences[i] for i in train], yes_no, labels, metric)
        fold_rules.append(rule)
        for i in range(n):
            if fold_of[i] == k:
                after[i] = apply_rule([judge[i]], [confidences[i]], rule)[0]
    final = fit_threshold(human, judge, confidences, yes_no, labels, metric)
    ids = list(item_ids)
    compared = [i for i in range(n) if judge[i] is not None]
    return ThresholdFit(
        decision=decision, metric=metric, rule=final, n_fit=len(compared), with_confidence=len(usable),
        folds=folds, seed=seed, fold_rules=fold_rules,
        before=decision_agreement(human, judge, labels=labels, item_ids=ids, n_boot=n_boot, seed=seed),
        after=decision_agreement(human, after, labels=labels, item_ids=ids, n_boot=n_boot, seed=seed),
        flipped_ids=[ids[i] for i in range(n) if after[i] != judge[i]],
        mcnemar=mcnemar_exact([judge[i] == human[i] for i in compared], [after[i] == human[i] for i in compared]))
