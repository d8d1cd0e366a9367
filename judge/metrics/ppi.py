"""Prediction-powered estimates of a mean: the judge's values of every unit, corrected by human values of a sample.

Sources: A. N. Angelopoulos, S. Bates, C. Fannjiang, M. I. Jordan, T. Zrnic, "Prediction-powered inference",
Science 382 (2023) (PPI); A. N. Angelopoulos, J. C. Duchi, T. Zrnic, "PPI++: Efficient prediction-powered
inference", arXiv:2311.01453 (2023) (power tuning, lambda clipped to [0, 1]). Their setting has an unlabelled set
apart from the labelled one; ours has the judge's values of ALL N units (the labelled n included) and the target
is the human mean over those N units (the collection the leaderboard reports on). The PPI++ estimator is then the
survey sampler's difference estimator (W. G. Cochran, "Sampling Techniques", 3rd ed., Wiley 1977, sec. 7.1; C.-E.
Särndal, B. Swensson, J. Wretman, "Model Assisted Survey Sampling", Springer 1992, sec. 6.3 and 5.7), whose
variance has the finite-population factor (1 - pi) and whose variance-minimising lambda is the regression
coefficient Cov(Y, f) / Var(f) (PPI++'s Cov / ((1 + n/N) Var) is the same optimum for an independent unlabelled
set). docs/ppi.md writes every formula out.

Pure numpy/scipy: no model client, no judge types; units arrive as arrays.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats

NOT_ESTIMABLE = "not estimable: no labelled report"
NO_INTERVAL = "no interval: one labelled report"
OK = "ok"


@dataclass(frozen=True)
class Interval:
    """A point estimate with its two-sided interval and standard error (NaN where undefined)."""

    value: float
    low: float
    high: float
    se: float

    @property
    def width(self) -> float:
        return self.high - self.low

    def excludes_zero(self) -> bool:
        return self.low > 0 or self.high < 0   # False when the bounds are NaN

    @classmethod
    def undefined(cls) -> Interval:
        return cls(math.nan, math.nan, math.nan, math.nan)


@dataclass(frozen=True)
class Estimate:
    """Judge-only, human-only and prediction-powered estimates of one mean over `units` units.

    `judge_only` is the judge's mean over every unit (no interval: it is biased by the judge's errors, which only
    the human sample can measure); `human_only` uses the labelled units alone; `ppi` both. `effective_labels` is
    n * Var(human-only) / Var(PPI): how many human labels the human-only estimate would need for PPI's precision
    (inf when the judge reproduces the human values on the sample exactly). `status` says why an estimate is
    missing: a unit set with no labelled unit is NOT ESTIMABLE (never silently the judge's number)."""

    units: int
    labelled: int
    judge_only: float
    human_only: Interval
    ppi: Interval
    lam: float
    effective_labels: float
    status: str
    confidence: float

    @property
    def estimable(self) -> bool:
        return self.status != NOT_ESTIMABLE


def ppi_mean(judge: Sequence[float] | np.ndarray, human: Sequence[float] | np.ndarray,
             inclusion: Sequence[float] | np.ndarray | None = None, confidence: float = 0.95,
             lam: float | None = None) -> Estimate:
    """Estimate the mean of the human values over all units.

    `judge`: the judge's value of every unit (finite). `human`: the human value per unit, NaN where the unit is
    not labelled. `inclusion`: per unit, the probability pi_i that the design labelled it (used for labelled
    units only); None = a simple random sample, pi = n / N. `lam`: a fixed lambda (1: original PPI, 0: human
    only); None = power-tuned and clipped to [0, 1] (PPI++).
    """
    f = np.asarray(judge, dtype=float)
    y = np.asarray(human, dtype=float)
    if f.shape != y.shape or f.ndim != 1:
        raise ValueError("judge and human values must be two 1-D arrays of the same length")
    if not np.all(np.isfinite(f)):
        raise ValueError("every unit needs a finite judge value")
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), not {confidence}")
    units = len(f)
    labelled = np.isfinite(y)
    n = int(labelled.sum())
    judge_only = float(f.mean()) if units else math.nan
    if n == 0:
        return Estimate(units, 0, judge_only, Interval.undefined(), Interval.undefined(), math.nan, math.nan,
                        NOT_ESTIMABLE, confidence)
    pi = np.full(units, n / units) if inclusion is None else np.asarray(inclusion, dtype=float)
    if pi.shape != f.shape or np.any((pi[labelled] <= 0) | (pi[labelled] > 1)):
        raise ValueError("inclusion probabilities must be in (0, 1], one per unit")
    f_s, y_s, pi_s = f[labelled], y[labelled], pi[labelled]
    # A lambda fitted to the sample costs one degree of freedom, as the slope of Cochran's regression estimator
    # does (s_e^2 over n - 2): without it the interval is too short at small n. It is fitted from 3 labels up.
    fitted = lam is None and n >= 3
    if lam is None:
        lam = tuned_lambda(y_s, f_s, 1 / pi_s) if fitted else 1.0
    human_only = _difference_estimate(0.0, f.mean(), f_s, y_s, pi_s, confidence, fitted=False)
    ppi = _difference_estimate(lam, f.mean(), f_s, y_s, pi_s, confidence, fitted=fitted)
    if n < 2 and not np.all(pi_s == 1):
        return Estimate(units, n, judge_only, human_only, ppi, lam, math.nan, NO_INTERVAL, confidence)
    effective = _effective_labels(n, human_only.se, ppi.se)
    return Estimate(units, n, judge_only, human_only, ppi, lam, effective, OK, confidence)


def tuned_lambda(y: np.ndarray, f: np.ndarray, weights: np.ndarray) -> float:
    """The lambda minimising the variance of the difference estimator, Cov_w(Y, f) / Var_w(f) over the labelled
    units (weights 1/pi), clipped to [0, 1] as PPI++ does. A judge constant on the sample carries no information
    there: 0 (human only). (ppi_mean fits it from three labelled units up and uses 1, original PPI, below.)"""
    if len(y) < 2:
        return 1.0
    w = weights / weights.sum()
    f_centred = f - np.dot(w, f)
    var_f = float(np.dot(w, f_centred ** 2))
    if var_f <= 1e-15:
        return 0.0
    cov = float(np.dot(w, f_centred * (y - np.dot(w, y))))
    return min(1.0, max(0.0, cov / var_f))


def _difference_estimate(lam: float, judge_mean: float, f: np.ndarray, y: np.ndarray, pi: np.ndarray,
                         confidence: float, fitted: bool) -> Interval:
    """theta = lam * mean_N(f) + sum_S w e / sum_S w, e = y - lam f, w = 1/pi (the Hajek form of the rectifier);
    Var = n/(n-1-k) * sum_S (1 - pi) w^2 (e - e_bar)^2 / (sum_S w)^2 with k = 1 when lambda was fitted to this
    sample (else 0), which is (1 - n/N) s_e^2 / n under a simple random sample; interval
    theta -/+ t_{n-1-k} sqrt(Var)."""
    n = len(y)
    w = 1 / pi
    e = y - lam * f
    e_bar = float(np.dot(w, e) / w.sum())
    value = lam * float(judge_mean) + e_bar
    if np.all(pi == 1):   # every unit labelled: the human mean itself, known exactly
        return Interval(value, value, value, 0.0)
    df = n - 1 - int(fitted)
    if df < 1:
        return Interval(value, math.nan, math.nan, math.nan)
    variance = n / df * float(np.sum((1 - pi) * w ** 2 * (e - e_bar) ** 2)) / float(w.sum()) ** 2
    se = math.sqrt(max(variance, 0.0))
    half = float(stats.t.ppf((1 + confidence) / 2, df=df)) * se
    return Interval(value, value - half, value + half, se)


def _effective_labels(n: int, se_human: float, se_ppi: float) -> float:
    if not (math.isfinite(se_human) and math.isfinite(se_ppi)):
        return math.nan
    if se_ppi == 0:
        return float(n) if se_human == 0 else math.inf
    return n * se_human ** 2 / se_ppi ** 2


def variance_ratio(human: Sequence[float], judge: Sequence[float]) -> tuple[float, float]:
    """(lambda, Var(Y - lambda f) / Var(Y)) over paired values: the share of the human-only variance PPI keeps
    at the power-tuned lambda when the sample is small beside N. 1 / ratio is the factor by which PPI multiplies
    the worth of each human label; 1 - ratio the share of labels it saves for the same interval width."""
    y = np.asarray(human, dtype=float)
    f = np.asarray(judge, dtype=float)
    var_y = float(y.var())
    if len(y) < 2 or var_y == 0:
        return math.nan, math.nan
    lam = tuned_lambda(y, f, np.ones(len(y)))
    return lam, float((y - lam * f).var()) / var_y
