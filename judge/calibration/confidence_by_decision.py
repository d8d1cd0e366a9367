"""Confidence in calibration: per decision, how well the judge's confidence is calibrated against the human
labels (reliability table, ECE) and, on request, a decision threshold fitted on the items with k-fold
cross-validation, and the thresholds file that carries it to `argue-judge eval --thresholds`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from judge.calibration.items import CalibrationItem, label_for, label_order
from judge.calibration.stats import (
    ConfidenceResult,
    FitMetric,
    ThresholdFit,
    confidence_result,
    cross_validated_threshold,
)
from judge.calibration.stats.confidence_calibration import DEFAULT_FOLDS, MIN_FIT_ITEMS
from judge.formats.judgments import DecisionRecord
from judge.judging.decisions import DECISION_LABELS
from judge.judging.fingerprints import decision_schema_hash, prompt_hashes_in
from judge.judging.thresholds import FORMAT, THRESHOLD_DECISIONS, ThresholdRule, ThresholdsFile


def _by_decision(items: Sequence[CalibrationItem]) -> dict[str, list[CalibrationItem]]:
    grouped: dict[str, list[CalibrationItem]] = {}
    for item in items:
        grouped.setdefault(item.decision, []).append(item)
    return dict(sorted(grouped.items()))


def confidence_by_decision(items: Sequence[CalibrationItem], records: Mapping[str, DecisionRecord]
                           ) -> dict[str, ConfidenceResult]:
    """Reliability per decision, for the decisions where at least one item has a confidence."""
    out = {}
    for decision, its in _by_decision(items).items():
        found = [records[i.item_id] for i in its]
        if any(r.confidence is not None for r in found):
            out[decision] = confidence_result([i.human_label for i in its],
                                              [label_for(decision, r.verdict) for r in found],
                                              [r.confidence for r in found])
    return out


def fit_thresholds(items: Sequence[CalibrationItem], records: Mapping[str, DecisionRecord], *,
                   metric: FitMetric, seed: int, n_boot: int, folds: int = DEFAULT_FOLDS
                   ) -> tuple[dict[str, ThresholdFit], list[str]]:
    """A cross-validated threshold per decision a threshold can flip, and notes on those left without one."""
    fits, notes = {}, []
    for decision, its in _by_decision(items).items():
        if decision not in THRESHOLD_DECISIONS:
            notes.append(f"--fit-threshold: no threshold for {decision} (its verdict is not one value of one "
                         "field, so it has no confidence to threshold)")
            continue
        found = [records[i.item_id] for i in its]
        judge = [label_for(decision, r.verdict) for r in found]
        human = [i.human_label for i in its]
        fit = cross_validated_threshold(
            decision, [i.item_id for i in its], human, judge, [r.confidence for r in found],
            DECISION_LABELS[decision], label_order(decision, set(human) | {j for j in judge if j is not None}),
            metric=metric, folds=folds, seed=seed, n_boot=n_boot)
        if fit is None:
            with_confidence = sum(r.confidence is not None and r.verdict is not None for r in found)
            notes.append(f"--fit-threshold: {decision} has {with_confidence} judged items with a confidence; at "
                         f"least {max(MIN_FIT_ITEMS, folds)} are needed (does the provider return log-probabilities? "
                         "hosted models need --logprobs)")
            continue
        fits[decision] = fit
    return fits, notes


def thresholds_file(fits: Mapping[str, ThresholdFit], judge_signature: str, calibration_signature: str,
                    metric: FitMetric, fitted_on: dict[str, Any]) -> ThresholdsFile:
    """The thresholds file of the fits: each rule keyed on its decision's prompt hash (as the judge signature
    prints it) and schema hash, with where it came from and its cross-validated effect."""
    decisions = {}
    prompts = prompt_hashes_in(judge_signature)
    for decision, fit in sorted(fits.items()):
        decisions[decision] = ThresholdRule(
            verdict=fit.rule.verdict, threshold=fit.rule.threshold, prompt_hash=prompts.get(decision),
            schema_hash=decision_schema_hash(decision), otherwise=fit.rule.other, items=fit.n_fit,
            with_confidence=fit.with_confidence, folds=fit.folds, seed=fit.seed,
            cross_validated={metric: {"before": _metric(fit.before, metric), "after": _metric(fit.after, metric)},
                             "flipped": len(fit.flipped_ids), "mcnemar_p": None if fit.mcnemar.p_value is None
                              else round(fit.mcnemar.p_value, 6)})
    return ThresholdsFile(format=FORMAT, judge=judge_signature, metric=metric, decisions=decisions,
                          fitted_on={**fitted_on, "calibration_signature": calibration_signature})


def _metric(result: Any, metric: FitMetric) -> float | None:
    value = result.kappa if metric == "kappa" else result.balanced_accuracy
    return None if value is None else round(value, 6)
