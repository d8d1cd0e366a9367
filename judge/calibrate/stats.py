"""Statistics of the calibration suite: how far the judge agrees with human assessors.

Four levels, each a function returning a pydantic model (JSON-serialisable; `None` marks an undefined value):

- decision level: `decision_agreement` (accuracy, balanced accuracy, per-class P/R/F1, confusion matrix,
  Cohen's kappa with a percentile bootstrap CI, breakdown by group) and `agreement_by_decision` for items;
- report level: `correlate` / `correlate_by_key` (Pearson, Spearman, Kendall tau-b with p-values);
- run level: `leaderboard_correlation` (Kendall tau and Spearman rho with EXAM-style tie handling) and
  `pairwise_significance_agreement` (paired t-test and Wilcoxon signed-rank win/loss/tie agreement);
- prompt A/B: `mcnemar_exact`, `mcnemar_power_warning`, `compare_prompts`.

Nothing here calls a model.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Hashable, Iterable, Mapping, Sequence
from typing import Literal, NamedTuple

import numpy as np
from pydantic import BaseModel, Field
from scipy import stats as sps

from judge.calibrate.items import CalibrationItem, label_order

NO_GROUP = "(none)"


def _num(x: float | None) -> float | None:
    """A plain float, or None for NaN / infinity / None (undefined)."""
    if x is None:
        return None
    x = float(x)
    return x if math.isfinite(x) else None


# ---------------------------------------------------------------------------------------------------------------
# Decision level
# ---------------------------------------------------------------------------------------------------------------

class ClassMetrics(BaseModel):
    """One class, judge against human. precision is None when the judge never predicted the class; recall is
    None when no human label is the class; F1 is None when either is None (0 when both are 0)."""

    label: str
    precision: float | None
    recall: float | None
    f1: float | None
    support: int = Field(description="items whose human label is this class")
    predicted: int = Field(description="items whose judge label is this class")


class AgreementResult(BaseModel):
    """Decision-level agreement of the judge with the human labels.

    `confusion[i][j]` counts items with human label `labels[i]` and judge label `labels[j]`.
    Items the judge failed on (label None) are excluded from every number but `n_total`, `failed` and
    `failed_ids`.
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


def confusion_matrix(human: Sequence[str], judge: Sequence[str], labels: Sequence[str]) -> np.ndarray:
    """Counts with rows = human label, columns = judge label, in the order of `labels`."""
    index = {lab: i for i, lab in enumerate(labels)}
    k = len(labels)
    matrix = np.zeros((k, k), dtype=np.int64)
    for h, j in zip(human, judge, strict=True):
        matrix[index[h], index[j]] += 1
    return matrix


def cohen_kappa(matrix: np.ndarray) -> float | None:
    """Cohen's kappa of a confusion matrix: (p_o - p_e) / (1 - p_e).

    p_o = trace / n, p_e = sum_k row_k * col_k / n^2. Undefined (None) when n = 0 or p_e = 1, i.e. both
    raters put every item in the same single class.
    """
    m = np.asarray(matrix, dtype=float)
    n = m.sum()
    if n == 0:
        return None
    po = np.trace(m) / n
    pe = float((m.sum(axis=1) * m.sum(axis=0)).sum() / (n * n))
    if math.isclose(pe, 1.0, rel_tol=0.0, abs_tol=1e-12):
        return None
    return float((po - pe) / (1.0 - pe))


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
        precision = tp / predicted if predicted else None
        recall = tp / support if support else None
        if precision is None or recall is None:
            f1 = None
        elif precision + recall == 0:
            f1 = 0.0
        else:
            f1 = 2 * precision * recall / (precision + recall)
        if recall is not None:
            recalls.append(recall)
        per_class.append(ClassMetrics(label=lab, precision=precision, recall=recall, f1=f1,
                                      support=support, predicted=predicted))

    kappa = cohen_kappa(matrix) if n else None
    low = high = None
    undefined = 0
    if kappa is not None and n >= 2 and n_boot > 0:
        index = {lab: i for i, lab in enumerate(labels)}
        codes = np.array([index[h] * k + index[j] for h, j in pairs], dtype=np.int64)
        boots = _bootstrap_kappa(codes, k, n_boot, seed)
        valid = boots[~np.isnan(boots)]
        undefined = int(n_boot - valid.size)
        if valid.size:
            alpha = (1.0 - ci) / 2.0
            low, high = (float(v) for v in np.percentile(valid, [100 * alpha, 100 * (1 - alpha)]))

    return AgreementResult(
        labels=labels, n_total=len(human), n=n, failed=len(failed_ids), failed_ids=failed_ids,
        accuracy=float(np.trace(matrix) / n) if n else None,
        balanced_accuracy=float(np.mean(recalls)) if recalls else None,
        kappa=kappa, kappa_ci_low=low, kappa_ci_high=high, ci_level=ci, n_boot=n_boot, seed=seed,
        boot_undefined=undefined, per_class=per_class, confusion=matrix.tolist(),
    )


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
    fixed order of `judge.calibrate.items.label_order`; groups from `item.group` (breakdown only when at least
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


# ---------------------------------------------------------------------------------------------------------------
# Report level
# ---------------------------------------------------------------------------------------------------------------

class CorrelationResult(BaseModel):
    """Correlation of judge and human per-report (or per-run) values. Coefficients are None when undefined
    (fewer than 2 pairs, or a constant side)."""

    n: int = Field(description="pairs used")
    n_nan: int = Field(description="pairs left out because either value is NaN")
    n_missing: int = Field(default=0, description="keys present on one side only (correlate_by_key)")
    pearson: float | None
    pearson_p: float | None
    spearman: float | None
    spearman_p: float | None
    kendall_tau_b: float | None
    kendall_p: float | None


def correlate(judge: Sequence[float], human: Sequence[float]) -> CorrelationResult:
    """Pearson r, Spearman rho and Kendall tau-b (scipy.stats, two-sided p-values) of paired values.

    Pairs where either value is NaN (or None) are left out and counted in `n_nan`.
    """
    if len(judge) != len(human):
        raise ValueError(f"judge and human values differ in length ({len(judge)} vs {len(human)})")
    pairs = [(float(a), float(b)) for a, b in zip(judge, human)
             if a is not None and b is not None and not math.isnan(float(a)) and not math.isnan(float(b))]
    n = len(pairs)
    x = np.array([a for a, _ in pairs])
    y = np.array([b for _, b in pairs])
    r = rp = rho = rhop = tau = taup = None
    if n >= 2 and np.ptp(x) > 0 and np.ptp(y) > 0:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            pr = sps.pearsonr(x, y)
            sr = sps.spearmanr(x, y)
            kt = sps.kendalltau(x, y, variant="b")
        r, rp = _num(pr.statistic), _num(pr.pvalue)
        rho, rhop = _num(sr.statistic), _num(sr.pvalue)
        tau, taup = _num(kt.statistic), _num(kt.pvalue)
    return CorrelationResult(n=n, n_nan=len(judge) - n, pearson=r, pearson_p=rp, spearman=rho,
                             spearman_p=rhop, kendall_tau_b=tau, kendall_p=taup)


def correlate_by_key(judge: Mapping[Hashable, float], human: Mapping[Hashable, float]) -> CorrelationResult:
    """`correlate` on the keys both mappings share (sorted); keys on one side only are counted in n_missing."""
    common = sorted(set(judge) & set(human), key=str)
    result = correlate([judge[k] for k in common], [human[k] for k in common])
    return result.model_copy(update={"n_missing": len(set(judge) ^ set(human))})


# ---------------------------------------------------------------------------------------------------------------
# Run level: leaderboard correlation with EXAM tie handling
# ---------------------------------------------------------------------------------------------------------------

class RunScore(NamedTuple):
    mean: float
    se: float


def run_summaries(per_request: Mapping[str, Mapping[str, float]]) -> dict[str, RunScore]:
    """Per run: mean over requests and its standard error, SE = sample std (ddof=1) / sqrt(n); NaN values are
    left out; SE is 0 with a single request and the run is dropped with none.

    Takes the shape of `judge.scores.per_request`: {run_id: {request_id: value}}.
    """
    out: dict[str, RunScore] = {}
    for run in sorted(per_request):
        values = np.array([v for v in per_request[run].values() if not math.isnan(v)], dtype=float)
        if values.size == 0:
            continue
        se = float(values.std(ddof=1) / math.sqrt(values.size)) if values.size > 1 else 0.0
        out[run] = RunScore(float(values.mean()), se)
    return out


def within_one_se(a: RunScore, b: RunScore) -> bool:
    """The tie relation: |mean_a - mean_b| <= max(se_a, se_b)."""
    return abs(a.mean - b.mean) <= max(a.se, b.se)


def tie_groups(board: Mapping[str, RunScore]) -> list[list[str]]:
    """Tied groups of a leaderboard, best first: the connected components of the `within_one_se` graph.

    Sorted by mean (descending, then run id), every component is a contiguous stretch: if runs a > b > c (by
    mean) and a ~ c, then |a-b| < |a-c| <= max(se_a, se_c), so b ~ a (when se_a is the max) or b ~ c (else).
    Runs within a group are listed in score order.
    """
    runs = sorted(board, key=lambda r: (-board[r].mean, r))
    parent = {r: r for r in runs}

    def find(r: str) -> str:
        while parent[r] != r:
            parent[r] = parent[parent[r]]
            r = parent[r]
        return r

    for i, a in enumerate(runs):
        for b in runs[i + 1:]:
            if within_one_se(board[a], board[b]):
                parent[find(b)] = find(a)
    groups: dict[str, list[str]] = {}
    for r in runs:
        groups.setdefault(find(r), []).append(r)
    return sorted(groups.values(), key=lambda g: runs.index(g[0]))


class RunPoint(BaseModel):
    run_id: str
    judge_mean: float
    judge_se: float
    human_mean: float
    human_se: float


TieMode = Literal["pairwise", "components"]


class LeaderboardCorrelation(BaseModel):
    """Judge vs human leaderboard agreement, with and without tie handling."""

    n_runs: int
    missing_runs: list[str] = Field(description="runs on one leaderboard only (left out)")
    tie_mode: TieMode
    repetitions: int
    seed: int | None
    kendall_tau_mean: float | None
    kendall_tau_std: float | None
    spearman_rho_mean: float | None
    spearman_rho_std: float | None
    kendall_tau_b_raw: float | None = Field(description="tau-b on the means, no SE ties")
    spearman_rho_raw: float | None
    judge_tied_pairs: int = Field(description="pairs of runs within one SE on the judge leaderboard")
    human_tied_pairs: int
    judge_tie_groups: list[list[str]] = Field(description="connected components of the tie relation, best first")
    human_tie_groups: list[list[str]]
    runs: list[RunPoint]


def _clearly_above(board: Mapping[str, RunScore], runs: list[str]) -> np.ndarray:
    """above[i, j]: run i is better than run j by more than one SE (mean_i - mean_j > max(se_i, se_j))."""
    mean = np.array([board[r].mean for r in runs])
    se = np.array([board[r].se for r in runs])
    return (mean[:, None] - mean[None, :]) > np.maximum(se[:, None], se[None, :])


def _random_extension(above: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Ranks (0 = best) of a random linear extension of the strict order `above` (random topological sort:
    at each step pick uniformly among the unplaced runs that no unplaced run is clearly above)."""
    n = len(above)
    indegree = above.sum(axis=0).astype(np.int64)
    placed = np.zeros(n, dtype=bool)
    ranks = np.empty(n, dtype=float)
    for pos in range(n):
        available = np.flatnonzero((indegree == 0) & ~placed)
        pick = available[rng.integers(len(available))] if len(available) > 1 else available[0]
        ranks[pick] = pos
        placed[pick] = True
        indegree -= above[pick]
    return ranks


def _shuffled_groups(groups: list[list[str]], order: dict[str, int], rng: np.random.Generator) -> np.ndarray:
    """Ranks (0 = best) of the runs in `order` (run -> position), groups kept in order, shuffled within."""
    ranks = np.empty(len(order), dtype=float)
    pos = 0
    for group in groups:
        shuffled = [group[i] for i in rng.permutation(len(group))] if len(group) > 1 else group
        for run in shuffled:
            ranks[order[run]] = pos
            pos += 1
    return ranks


def leaderboard_correlation(
    judge: Mapping[str, RunScore | tuple[float, float]],
    human: Mapping[str, RunScore | tuple[float, float]],
    *,
    repetitions: int = 1000,
    seed: int | None = 0,
    tie_mode: TieMode = "pairwise",
) -> LeaderboardCorrelation:
    """Kendall tau and Spearman rho between the judge's and the humans' leaderboards, EXAM-style ties.

    After Sander & Dietz 2021 (EXAM): on each leaderboard separately, runs a and b count as tied when
    |mean_a - mean_b| <= max(se_a, se_b) (`within_one_se`). Each of `repetitions` repetitions turns each
    leaderboard into a strict ranking in which the order of tied runs is random, and computes Kendall tau
    (= tau-b, no ties remain) and Spearman rho between the judge's and the humans' rankings; the result is their
    mean and population std (ddof=0). Only runs on both leaderboards count. One generator,
    numpy.random.default_rng(seed), draws judge board then human board in every repetition.

    tie_mode "pairwise" (default): only tied pairs may swap. "Clearly above" (mean_a - mean_b > max(se_a, se_b))
    is a strict partial order (transitive: the gaps add up to more than either SE), and each repetition draws a
    random linear extension of it by random topological sort: repeatedly place, uniformly at random, one of
    the unplaced runs that no unplaced run is clearly above. A pair clearly apart never swaps; every order
    consistent with the SEs has positive probability (not all equal probability when ties chain).
    tie_mode "components": tied groups are the connected components of the tie relation (`tie_groups`,
    contiguous in score order); groups keep their order and each group is shuffled uniformly. Chains of ties
    can make a group span runs that are far apart, so this is the coarser reading.

    The `_raw` fields are tau-b / rho on the plain means (exactly equal means tied, no SE).
    """
    if tie_mode not in ("pairwise", "components"):
        raise ValueError(f"tie_mode must be 'pairwise' or 'components', not {tie_mode!r}")
    jb = {r: RunScore(float(v[0]), float(v[1])) for r, v in judge.items()}
    hb = {r: RunScore(float(v[0]), float(v[1])) for r, v in human.items()}
    for side, board in (("judge", jb), ("human", hb)):
        for run, score in board.items():
            if not (math.isfinite(score.mean) and math.isfinite(score.se)) or score.se < 0:
                raise ValueError(f"{side} leaderboard: run {run!r} has mean {score.mean} and SE {score.se}; "
                                 "both must be finite and SE >= 0")
    common = sorted(set(jb) & set(hb))
    missing = sorted(set(jb) ^ set(hb))
    jb = {r: jb[r] for r in common}
    hb = {r: hb[r] for r in common}
    jg, hg = tie_groups(jb), tie_groups(hb)
    ja, ha = _clearly_above(jb, common), _clearly_above(hb, common)
    n = len(common)
    points = [RunPoint(run_id=r, judge_mean=jb[r].mean, judge_se=jb[r].se, human_mean=hb[r].mean,
                       human_se=hb[r].se) for r in common]
    base = {"n_runs": n, "missing_runs": missing, "tie_mode": tie_mode, "repetitions": repetitions, "seed": seed,
            "judge_tied_pairs": n * (n - 1) // 2 - int(ja.sum()),
            "human_tied_pairs": n * (n - 1) // 2 - int(ha.sum()),
            "judge_tie_groups": jg, "human_tie_groups": hg, "runs": points}
    if n < 2 or repetitions < 1:
        return LeaderboardCorrelation(kendall_tau_mean=None, kendall_tau_std=None, spearman_rho_mean=None,
                                      spearman_rho_std=None, kendall_tau_b_raw=None, spearman_rho_raw=None, **base)

    raw = correlate([jb[r].mean for r in common], [hb[r].mean for r in common])
    order = {r: i for i, r in enumerate(common)}
    rng = np.random.default_rng(seed)
    taus = np.empty(repetitions)
    rhos = np.empty(repetitions)
    for rep in range(repetitions):
        if tie_mode == "pairwise":
            rj = _random_extension(ja, rng)
            rh = _random_extension(ha, rng)
        else:
            rj = _shuffled_groups(jg, order, rng)
            rh = _shuffled_groups(hg, order, rng)
        taus[rep] = _kendall_strict(rj, rh)
        rhos[rep] = _spearman_strict(rj, rh)
    return LeaderboardCorrelation(
        kendall_tau_mean=float(taus.mean()), kendall_tau_std=float(taus.std()),
        spearman_rho_mean=float(rhos.mean()), spearman_rho_std=float(rhos.std()),
        kendall_tau_b_raw=raw.kendall_tau_b, spearman_rho_raw=raw.spearman, **base)


def _kendall_strict(x: np.ndarray, y: np.ndarray) -> float:
    """Kendall tau of two tie-free rankings: (concordant - discordant) / (n choose 2)."""
    dx = np.sign(x[:, None] - x[None, :])
    dy = np.sign(y[:, None] - y[None, :])
    n = len(x)
    return float((dx * dy).sum() / (n * (n - 1)))


def _spearman_strict(x: np.ndarray, y: np.ndarray) -> float:
    """Spearman rho of two tie-free rankings: 1 - 6 sum d^2 / (n (n^2 - 1))."""
    n = len(x)
    d = x - y
    return float(1.0 - 6.0 * (d * d).sum() / (n * (n * n - 1)))


# ---------------------------------------------------------------------------------------------------------------
# Run level: pairwise significance agreement
# ---------------------------------------------------------------------------------------------------------------

Verdict = Literal["win", "loss", "tie"]
VERDICTS: tuple[Verdict, ...] = ("win", "loss", "tie")


class PairOutcome(BaseModel):
    """Run a against run b (a < b by id), on the requests both runs have in both tables."""

    run_a: str
    run_b: str
    n_requests: int
    judge_ttest: Verdict
    human_ttest: Verdict
    judge_wilcoxon: Verdict
    human_wilcoxon: Verdict
    judge_ttest_p: float | None
    human_ttest_p: float | None
    judge_wilcoxon_p: float | None
    human_wilcoxon_p: float | None


class SignificanceAgreement(BaseModel):
    """3x3 table: rows = human verdict, columns = judge verdict, both in order win, loss, tie."""

    test: str
    n_pairs: int
    agreement: float | None
    table: list[list[int]]


class PairwiseAgreement(BaseModel):
    alpha: float
    zero_method: str
    n_runs: int
    ttest: SignificanceAgreement
    wilcoxon: SignificanceAgreement
    pairs: list[PairOutcome]


def _ttest_verdict(d: np.ndarray, alpha: float) -> tuple[Verdict, float | None]:
    if d.size < 2 or not np.any(d):
        return "tie", None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = sps.ttest_rel(d, np.zeros_like(d))
    p = _num(res.pvalue)
    if p is None and np.ptp(d) == 0:
        p = 0.0  # constant non-zero difference on every request: as decisive as it gets (t = +-inf)
    if p is None or p >= alpha:
        return "tie", p
    return ("win" if d.mean() > 0 else "loss"), p


def _wilcoxon_verdict(d: np.ndarray, alpha: float, zero_method: str) -> tuple[Verdict, float | None]:
    if d.size == 0 or not np.any(d):
        return "tie", None  # every difference is zero
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            res = sps.wilcoxon(d, zero_method=zero_method)
        except ValueError:
            return "tie", None
    p = _num(res.pvalue)
    if p is None or p >= alpha:
        return "tie", p
    nz = d[d != 0] if zero_method == "wilcox" else d
    ranks = sps.rankdata(np.abs(nz))
    signed = float((ranks * np.sign(nz)).sum())
    if signed == 0:
        return "tie", p
    return ("win" if signed > 0 else "loss"), p


def _table(pairs: list[PairOutcome], test: str) -> SignificanceAgreement:
    table = [[0, 0, 0] for _ in range(3)]
    for p in pairs:
        h, j = getattr(p, f"human_{test}"), getattr(p, f"judge_{test}")
        table[VERDICTS.index(h)][VERDICTS.index(j)] += 1
    n = len(pairs)
    agree = sum(table[i][i] for i in range(3))
    return SignificanceAgreement(test=test, n_pairs=n, agreement=agree / n if n else None, table=table)


def pairwise_significance_agreement(
    judge: Mapping[str, Mapping[str, float]],
    human: Mapping[str, Mapping[str, float]],
    *,
    alpha: float = 0.05,
    zero_method: Literal["wilcox", "pratt", "zsplit"] = "wilcox",
) -> PairwiseAgreement:
    """For every pair of runs (a < b by id, runs in both tables), test a against b on per-request scores for the
    judge and for the humans, and compare the verdicts.

    Pairing: the requests where both runs have a non-NaN value in both the judge and the human table, so both
    sides test on the same requests. Verdict per test: "win" (a significantly better: p < alpha, positive
    direction), "loss" (significantly worse) or "tie".
    - paired t-test: scipy.stats.ttest_rel (two-sided); direction = sign of the mean difference a - b. Fewer
      than 2 requests or all differences zero = tie; a constant non-zero difference counts as p = 0.
    - Wilcoxon signed-rank: scipy.stats.wilcoxon (two-sided) with `zero_method` ("wilcox", default: zero
      differences are discarded before ranking); all differences zero = tie; direction = sign of the sum of
      signed ranks.
    Agreement rate = share of pairs with the same verdict; the 3x3 table has rows = human, columns = judge.
    """
    runs = sorted(set(judge) & set(human))
    pairs: list[PairOutcome] = []
    for i, a in enumerate(runs):
        for b in runs[i + 1:]:
            reqs = sorted(set(judge[a]) & set(judge[b]) & set(human[a]) & set(human[b]))
            reqs = [q for q in reqs if not any(math.isnan(t[r][q]) for t in (judge, human) for r in (a, b))]
            dj = np.array([judge[a][q] - judge[b][q] for q in reqs], dtype=float)
            dh = np.array([human[a][q] - human[b][q] for q in reqs], dtype=float)
            jt, jtp = _ttest_verdict(dj, alpha)
            ht, htp = _ttest_verdict(dh, alpha)
            jw, jwp = _wilcoxon_verdict(dj, alpha, zero_method)
            hw, hwp = _wilcoxon_verdict(dh, alpha, zero_method)
            pairs.append(PairOutcome(run_a=a, run_b=b, n_requests=len(reqs), judge_ttest=jt, human_ttest=ht,
                                     judge_wilcoxon=jw, human_wilcoxon=hw, judge_ttest_p=jtp, human_ttest_p=htp,
                                     judge_wilcoxon_p=jwp, human_wilcoxon_p=hwp))
    return PairwiseAgreement(alpha=alpha, zero_method=zero_method, n_runs=len(runs),
                             ttest=_table(pairs, "ttest"), wilcoxon=_table(pairs, "wilcoxon"), pairs=pairs)


# ---------------------------------------------------------------------------------------------------------------
# Prompt A/B: McNemar's exact test
# ---------------------------------------------------------------------------------------------------------------

MIN_DISCORDANT = 10  # rule of thumb below which the warning fires even if significance is reachable


class McNemarResult(BaseModel):
    n: int
    both_right: int
    b: int = Field(description="A right, B wrong")
    c: int = Field(description="A wrong, B right")
    both_wrong: int
    p_value: float
    accuracy_a: float | None
    accuracy_b: float | None
    min_detectable_difference: float | None = Field(
        description="smallest |acc_A - acc_B| that would reach p < alpha with b + c discordant items out of n")
    warning: str | None


def mcnemar_p(b: int, c: int) -> float:
    """Exact McNemar p: two-sided binomial test of min(b, c) successes in b + c trials at 0.5; 1 if b + c = 0."""
    if b + c == 0:
        return 1.0
    return float(sps.binomtest(min(b, c), b + c, 0.5, alternative="two-sided").pvalue)


def min_detectable_difference(n: int, discordant: int, alpha: float = 0.05) -> float | None:
    """The smallest accuracy difference |b - c| / n that reaches p < alpha with `discordant` = b + c items
    discordant out of n; None when no split of the discordant items can reach it (or n = 0)."""
    if n <= 0:
        return None
    for k in range(discordant // 2, -1, -1):  # k = min(b, c); fewer is more lopsided
        if mcnemar_p(k, discordant - k) < alpha:
            return (discordant - 2 * k) / n
    return None


def mcnemar_power_warning(n: int, b: int, c: int, alpha: float = 0.05) -> str | None:
    """A warning when the A/B comparison is too small to show a difference; None when it is not.

    Rule: with d = b + c discordant items, the most lopsided split (0, d) has exact p = 2 * 0.5^d, which is
    below 0.05 only from d = 6 on (d = 5 gives 0.0625). The warning fires when
      1. n itself is too small for any split of all n items to reach p < alpha (n < 6 at alpha 0.05), or
      2. no split of the d observed discordant items could reach p < alpha, or
      3. d < MIN_DISCORDANT (10): significance is reachable only with an extreme split, so the test has little
         power; the message gives the minimum detectable difference.
    """
    d = b + c
    if min_detectable_difference(n, n, alpha) is None:
        return (f"only {n} items: even if one prompt were right on every item the other gets wrong, McNemar's "
                f"test could not reach p < {alpha:g}; label more items")
    mdd = min_detectable_difference(n, d, alpha)
    if mdd is None:
        return (f"only {d} discordant items (b={b}, c={c}) of {n}: no split of them could reach p < {alpha:g}; "
                "the comparison cannot show a difference")
    if d < MIN_DISCORDANT:
        return (f"only {d} discordant items (b={b}, c={c}) of {n}, fewer than {MIN_DISCORDANT}: the test has "
                f"little power; a difference needs an accuracy gap of at least {mdd:.3f}")
    return None


def mcnemar_exact(a_correct: Sequence[bool], b_correct: Sequence[bool], alpha: float = 0.05) -> McNemarResult:
    """McNemar's exact test on paired right/wrong outcomes of prompts A and B on the same items."""
    if len(a_correct) != len(b_correct):
        raise ValueError("a_correct and b_correct must be parallel")
    n = len(a_correct)
    both_right = sum(1 for x, y in zip(a_correct, b_correct) if x and y)
    b = sum(1 for x, y in zip(a_correct, b_correct) if x and not y)
    c = sum(1 for x, y in zip(a_correct, b_correct) if not x and y)
    return McNemarResult(
        n=n, both_right=both_right, b=b, c=c, both_wrong=n - both_right - b - c, p_value=mcnemar_p(b, c),
        accuracy_a=(both_right + b) / n if n else None, accuracy_b=(both_right + c) / n if n else None,
        min_detectable_difference=min_detectable_difference(n, b + c, alpha),
        warning=mcnemar_power_warning(n, b, c, alpha))


class PromptComparison(BaseModel):
    """Prompt A against prompt B on the same human-labelled items of one decision."""

    decision: str
    name_a: str
    name_b: str
    n_items: int
    failed_a: list[str] = Field(description="items prompt A failed on (left out of the test)")
    failed_b: list[str]
    mcnemar: McNemarResult
    right_to_wrong: list[str] = Field(description="A right, B wrong")
    wrong_to_right: list[str] = Field(description="A wrong, B right")


def compare_prompts(
    decision: str,
    item_ids: Sequence[str],
    human: Sequence[str],
    judge_a: Sequence[str | None],
    judge_b: Sequence[str | None],
    *,
    name_a: str = "A",
    name_b: str = "B",
    alpha: float = 0.05,
) -> PromptComparison:
    """McNemar A/B on parallel sequences. Items where either prompt failed (None) are left out and listed."""
    if not len(item_ids) == len(human) == len(judge_a) == len(judge_b):
        raise ValueError("item_ids, human, judge_a and judge_b must be parallel")
    keep = [i for i in range(len(item_ids)) if judge_a[i] is not None and judge_b[i] is not None]
    a_ok = [judge_a[i] == human[i] for i in keep]
    b_ok = [judge_b[i] == human[i] for i in keep]
    return PromptComparison(
        decision=decision, name_a=name_a, name_b=name_b, n_items=len(item_ids),
        failed_a=[str(item_ids[i]) for i in range(len(item_ids)) if judge_a[i] is None],
        failed_b=[str(item_ids[i]) for i in range(len(item_ids)) if judge_b[i] is None],
        mcnemar=mcnemar_exact(a_ok, b_ok, alpha),
        right_to_wrong=[str(item_ids[i]) for i, x, y in zip(keep, a_ok, b_ok) if x and not y],
        wrong_to_right=[str(item_ids[i]) for i, x, y in zip(keep, a_ok, b_ok) if not x and y],
    )


def compare_prompts_on_items(
    items: Iterable[CalibrationItem],
    predictions_a: Mapping[str, str | None],
    predictions_b: Mapping[str, str | None],
    *,
    name_a: str = "A",
    name_b: str = "B",
    alpha: float = 0.05,
) -> list[PromptComparison]:
    """`compare_prompts` per decision (sorted); a missing prediction counts as a failure."""
    by_decision: dict[str, list[CalibrationItem]] = {}
    for item in items:
        by_decision.setdefault(item.decision, []).append(item)
    return [compare_prompts(d, [i.item_id for i in its], [i.human_label for i in its],
                            [predictions_a.get(i.item_id) for i in its], [predictions_b.get(i.item_id) for i in its],
                            name_a=name_a, name_b=name_b, alpha=alpha)
            for d, its in sorted(by_decision.items())]


AgreementResult.model_rebuild()
