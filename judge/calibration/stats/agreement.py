"""Decision level: how often the judge's label equals the human label on the same items.

Accuracy, balanced accuracy, per-class precision/recall/F1, the confusion matrix and Cohen's kappa with a percentile
bootstrap CI, optionally broken down by group; `agreement_by_decision` runs it per decision of calibration items.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import numpy as np
from pydantic import Field

from judge.calibration.items import CalibrationItem, label_order
from judge.calibration.stats.undefined import Reasons, Statistics, Undefined, require
from judge.metrics.kappa import kappa

NO_GROUP = "(none)"


class ClassMetrics(Statistics):
    """One class, judge against human. precision is undefined when the judge never predicted the class; recall
    when no human label is the class; F1 when either is (0 when both are 0)."""

    label: str
    precision: float | None
    recall: float | None
    f1: float | None
    support: int = Field(description="items whose human label is this class")
    predicted: int = Field(description="items whose judge label is this class")


class AgreementResult(Statistics):
    """Decision-level agreement of the judge with the human labels.

    `confusion[i][j]` counts items with human label `labels[i]` and judge label `labels[j]`.
    Items the judge failed on (label None) are excluded from every number but `n_total`, `failed`, `failed_ids`
    and the two `*_failed_wrong` figures, which count them as disagreements: a judge that fails on the items it
    finds hard must not look better for it.
    """

    labels: list[str]
    n_total: int
    n: int = Field(description="items compared (judge did not fail)")
    failed: int
    failed_ids: list[str]
    accuracy: float | None
    balanced_accuracy: float | None
    kappa: float | None
    kappa_ci_low: float | None
    kappa_ci_high: float | None
    ci_level: float
    n_boot: int
    seed: int | None
    boot_undefined: int = Field(description="bootstrap resamples where kappa was undefined (left out of the CI)")
    per_class: list[ClassMetrics]
    confusion: list[list[int]]
    by_group: dict[str, AgreementResult] = Field(default_factory=dict)
    accuracy_failed_wrong: float | None = Field(
        default=None, description="accuracy over all n_total items, a failed item counted as wrong")
    kappa_failed_wrong: float | None = Field(
        default=None, description="Cohen's kappa over all n_total items, a failure being a judge category of its "
        "own that no human label matches")


def confusion_matrix(human: Sequence[str], judge: Sequence[str], labels: Sequence[str]) -> np.ndarray:
    """Counts with rows = human label, columns = judge label, in the order of `labels`."""
    index = {lab: i for i, lab in enumerate(labels)}
    k = len(labels)
    matrix = np.zeros((k, k), dtype=np.int64)
    for h, j in zip(human, judge, strict=True):
        matrix[index[h], index[j]] += 1
    return matrix


NO_ITEMS = "no item compared"
ONE_CLASS = "every item in one class on both sides"


def kappa_of(matrix: np.ndarray) -> float:
    """Cohen's kappa of a confusion matrix of human (rows) and judge (columns) labels (judge.metrics.kappa);
    undefined without an item or when both sides put every item in one class."""
    return kappa(matrix, empty=NO_ITEMS, one_class=ONE_CLASS)


def cohen_kappa(matrix: np.ndarray) -> float | None:
    """`kappa_of`, None where it is undefined."""
    try:
        return kappa_of(matrix)
    except Undefined:
        return None


def _bootstrap_kappa(codes: np.ndarray, k: int, n_boot: int, seed: int | None) -> np.ndarray:
    """Kappa of `n_boot` resamples (with replacement) of the items; NaN where kappa is undefined.

    `codes` holds human_index * k + judge_index per item. All resamples are drawn at once from
    numpy.random.default_rng(seed), so the result depends only on (data, n_boot, seed).
    """
    n = len(codes)
    rng = np.random.default_rng(seed)
    out = np.empty(n_boot, dtype=float)
    chunk = max(1, min(n_boot, 2_000_000 // max(n, 1)))
    for start in range(0, n_boot, chunk):
        b = min(chunk, n_boot - start)
        idx = rng.integers(0, n, size=(b, n))
        sample = codes[idx] + (k * k) * np.arange(b)[:, None]
        m = np.bincount(sample.ravel(), minlength=b * k * k).reshape(b, k, k).astype(float)
        po = np.trace(m, axis1=1, axis2=2) / n
        pe = (m.sum(axis=2) * m.sum(axis=1)).sum(axis=1) / (n * n)
        with np.errstate(divide="ignore", invalid="ignore"):
            kap = (po - pe) / (1.0 - pe)
        kap[np.isclose(pe, 1.0, rtol=0.0, atol=1e-12)] = np.nan
        out[start:start + b] = kap
    return out


def decision_agreement(
    human: Sequence[str],
    judge: Sequence[str | None],
    *,
    labels: Sequence[str] | None = None,
    item_ids: Sequence[str] | None = None,
    groups: Sequence[str | None] | None = None,
    n_boot: int = 1000,
    seed: int | None = 0,
    ci: float = 0.95,
) -> AgreementResult:
    """Agreement of judge labels with human labels on the same items (parallel sequences).

    - judge label None = the judge failed on the item: counted in `failed`, listed in `failed_ids` (item ids, or
      the 0-based positions as strings when `item_ids` is not given), excluded from all agreement numbers.
    - `labels` fixes the order of classes (confusion matrix rows/columns, per-class table); by default the sorted
      union of the labels seen. A label outside `labels` raises ValueError.
    - balanced accuracy = mean recall over the classes that occur among the human labels (of compared items);
      classes only the judge used do not enter it (as in scikit-learn).
    - kappa CI: percentile bootstrap over items, `n_boot` resamples from numpy.random.default_rng(seed);
      resamples in which kappa is undefined (p_e = 1: every item in one class for both raters) are left out
      and counted in `boot_undefined`; the CI is None when kappa itself is undefined, when n < 2, when
      n_boot = 0, or when every resample is undefined.
    - `groups`: a per-item key; each group gets its own result (same settings) in `by_group`; a None key is
      reported as "(none)".
    """
    if len(human) != len(judge):
        raise ValueError(f"human and judge label sequences differ in length ({len(human)} vs {len(judge)})")
    if item_ids is not None and len(item_ids) != len(human):
        raise ValueError("item_ids must be parallel to the labels")
    if groups is not None and len(groups) != len(human):
        raise ValueError("groups must be parallel to the labels")
    if not 0.0 < ci < 1.0:
        raise ValueError("ci must lie strictly between 0 and 1")
    if any(h is None for h in human):
        raise ValueError("a human label is None; drop items without a human label before comparing")
    ids = [str(i) for i in item_ids] if item_ids is not None else [str(i) for i in range(len(human))]

    if labels is None:
        labels = sorted(set(human) | {j for j in judge if j is not None})
    labels = list(labels)
    if len(set(labels)) != len(labels):
        raise ValueError("labels contain duplicates")
    known = set(labels)
    for pos, (h, j) in enumerate(zip(human, judge)):
        for lab in (h, j):
            if lab is not None and lab not in known:
                raise ValueError(f"label {lab!r} of item {ids[pos]} is not among labels {labels}")

    result = _agreement(list(human), list(judge), ids, labels, n_boot, seed, ci)
    if groups is not None:
        keys = [NO_GROUP if g is None else str(g) for g in groups]
        for key in sorted(set(keys)):
            pos = [i for i, g in enumerate(keys) if g == key]
            result.by_group[key] = _agreement([human[i] for i in pos], [judge[i] for i in pos],
                                              [ids[i] for i in pos], labels, n_boot, seed, ci)
    return result


def _agreement(human: list[str], judge: list[str | None], ids: list[str], labels: list[str],
               n_boot: int, seed: int | None, ci: float) -> AgreementResult:
    failed_ids = [i for i, j in zip(ids, judge) if j is None]
    pairs = [(h, j) for h, j in zip(human, judge) if j is not None]
    n = len(pairs)
    k = len(labels)
    matrix = confusion_matrix([h for h, _ in pairs], [j for _, j in pairs], labels) if n else np.zeros((k, k), int)

    per_class: list[ClassMetrics] = []
    recalls: list[float] = []
    for i, lab in enumerate(labels):
        tp = int(matrix[i, i])
        support = int(matrix[i, :].sum())
        predicted = int(matrix[:, i].sum())
        why = Reasons()
        precision = why.value("precision", _share, tp, predicted, "the judge never chose this class")
        recall = why.value("recall", _share, tp, support, "no human label is this class")
        if precision is None or recall is None:
            why.mark(why.get("precision") or why["recall"], "f1")
            f1 = None
        else:
            f1 = 0.0 if precision + recall == 0 else 2 * precision * recall / (precision + recall)
        if recall is not None:
            recalls.append(recall)
        per_class.append(ClassMetrics(label=lab, precision=precision, recall=recall, f1=f1,
                                      support=support, predicted=predicted, undefined=why))

    why = Reasons()
    kappa = why.value("kappa", kappa_of, matrix)
    low = high = None
    undefined = 0
    if kappa is None:
        why.mark(f"κ is undefined ({why['kappa']})", "kappa_ci_low", "kappa_ci_high")
    elif n < 2:
        why.mark("fewer than 2 items to resample", "kappa_ci_low", "kappa_ci_high")
    elif n_boot == 0:
        why.mark("no bootstrap resamples asked (n_boot 0)", "kappa_ci_low", "kappa_ci_high")
    else:
        index = {lab: i for i, lab in enumerate(labels)}
        codes = np.array([index[h] * k + index[j] for h, j in pairs], dtype=np.int64)
        boots = _bootstrap_kappa(codes, k, n_boot, seed)
        valid = boots[~np.isnan(boots)]
        undefined = int(n_boot - valid.size)
        if valid.size:
            alpha = (1.0 - ci) / 2.0
            low, high = (float(v) for v in np.percentile(valid, [100 * alpha, 100 * (1 - alpha)]))
        else:
            why.mark(f"κ undefined in every resample ({ONE_CLASS})", "kappa_ci_low", "kappa_ci_high")

    # Failures as a judge category of their own: a column no human row matches, so each one is a disagreement
    # and moves the chance agreement only through the judge's other columns.
    with_failures = np.zeros((k + 1, k + 1), int)
    with_failures[:k, :k] = matrix
    for h, j in zip(human, judge):
        if j is None:
            with_failures[labels.index(h), k] += 1
    n_total = len(human)
    if not recalls:
        why.mark(NO_ITEMS if not n else "no human label among the classes", "balanced_accuracy")
    return AgreementResult(
        labels=labels, n_total=n_total, n=n, failed=len(failed_ids), failed_ids=failed_ids,
        accuracy_failed_wrong=why.value("accuracy_failed_wrong", _share, int(np.trace(matrix)), n_total,
                                        "no item"),
        kappa_failed_wrong=why.value("kappa_failed_wrong", kappa_of, with_failures),
        accuracy=why.value("accuracy", _share, int(np.trace(matrix)), n, NO_ITEMS),
        balanced_accuracy=float(np.mean(recalls)) if recalls else None,
        kappa=kappa, kappa_ci_low=low, kappa_ci_high=high, ci_level=ci, n_boot=n_boot, seed=seed,
        boot_undefined=undefined, per_class=per_class, confusion=matrix.tolist(), undefined=why,
    )


def _share(k: int, n: int, reason: str) -> float:
    """k / n; undefined for `reason` when n = 0."""
    require(n > 0, reason)
    return k / n


def agreement_by_decision(
    items: Iterable[CalibrationItem],
    predictions: Mapping[str, str | None],
    *,
    n_boot: int = 1000,
    seed: int | None = 0,
    ci: float = 0.95,
) -> dict[str, AgreementResult]:
    """`decision_agreement` per decision of the items, judge labels looked up by item id.

    An item without an entry in `predictions` counts as failed, like an explicit None. Labels come in the
    fixed order of `judge.calibration.items.label_order`; groups from `item.group` (breakdown only when at least
    one item has a group).
    """
    by_decision: dict[str, list[CalibrationItem]] = {}
    for item in items:
        by_decision.setdefault(item.decision, []).append(item)
    results: dict[str, AgreementResult] = {}
    for decision in sorted(by_decision):
        its = by_decision[decision]
        judge = [predictions.get(it.item_id) for it in its]
        present = {it.human_label for it in its} | {j for j in judge if j is not None}
        groups = [it.group for it in its] if any(it.group is not None for it in its) else None
        results[decision] = decision_agreement(
            [it.human_label for it in its], judge, labels=label_order(decision, present),
            item_ids=[it.item_id for it in its], groups=groups, n_boot=n_boot, seed=seed, ci=ci)
    return results


# The model refers to itself (by_group); pydantic needs the name resolved once the class exists.
AgreementResult.model_rebuild()
