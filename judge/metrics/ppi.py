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

The interval cannot collapse when the sample shows no disagreement between judge and humans: a pseudo-observation
of weight PRIOR_WEIGHT at each corner (y, f) of [0, 1]^2 joins the labelled units in the interval's centre and
variance (not in the point estimate). For binary values this is a Dirichlet prior on the cells of the judge-human
2x2 table, as in Bayesian PPI (Hofer et al. 2024); with lambda = 1 it is of the kind of Agresti &
Min's (2005) adjusted interval for matched proportions (they add 0.5 per cell), with lambda = 0 (human only) an
Agresti-Coull-type interval (Agresti & Coull 1998 add z^2/2 ~ 2 successes and failures; here 2 * PRIOR_WEIGHT).
It fades as 1/n, and in PPI also as the sample's own variation grows: its weight is divided by 1 + d / PRIOR_FADE,
d the sample's events (about the number of disagreements; `events`), so it widens the interval where the
variance rests on a handful of disagreements (where the plain interval fails) and hardly at all once the sample
measures the variance itself (where the plain interval covers). A sample in which the judge matched every human
value also gets at least the width of the judge errors such a sample could have missed (a Clopper-Pearson bound on
the disagreement rate, applied to the unlabelled share). Every interval is clipped to what the human mean can still
be given the labelled values (each unlabelled unit in [0, 1]).
benchmarks/ppi_coverage.py measures the coverage over a grid of judges, prevalences and sample sizes.

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
FEW_LABELS = "few labels"              # n below MIN_LABELS: coverage not checked there
NO_DISAGREEMENT = "no disagreement"    # the width comes from the errors such a sample could have missed

# Weight of the pseudo-observation at each corner (y, f) of [0, 1]^2. Agresti & Min (2005) add 0.5 per cell; on
# the coverage grid (benchmarks/ppi_coverage.py, one seed, 1,000 draws) 0.5 left PPI at 0.88-0.92 for rare
# labels (prevalence 0.05-0.1) with good judges, 1.0 at 0.90 in two rare-label cells (N = 100, n = 50).
PRIOR_WEIGHT = 0.75
# The prior's weight is PRIOR_WEIGHT * PRIOR_FADE / (PRIOR_FADE + d), d the sample's events (`events`): full
# where the sample shows (almost) no variation of its own, half at 10 disagreements, a sixth at 50. It is there
# for the samples whose variance estimate rests on a handful of disagreements (the Wald-type interval's failure);
# once the sample holds many, its own variance is the measurement and the prior only widens. On the coverage grid
# and the one-way cells (benchmarks/ppi_coverage.py --widths; a judge with 5% false positives, N = 300, n = 50 to
# 100, 2 x 2,000 draws) 10 kept every cell at 0.93 or above, 5 fell to 0.929.
PRIOR_FADE = 10.0
# Below this many labelled units the interval is flagged: the coverage grid starts at n = 10.
MIN_LABELS = 10


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
    n * Var(human-only) / Var(PPI): how many human labels the human-only estimate would need for PPI's precision.
    `status` says why an estimate is missing or cannot be fully trusted: a unit set with no labelled unit is NOT
    ESTIMABLE (never silently the judge's number); FEW_LABELS below MIN_LABELS labelled units; NO_DISAGREEMENT
    when the judge matched the humans on every labelled unit, so the width rests on the errors such a sample
    could have missed (an assumption-free bound, but not a measurement of this judge)."""

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

    @property
    def trusted(self) -> bool:
        return self.status == OK


@dataclass(frozen=True)
class Batch:
    """Intervals of many samples of the same units at once (one row per sample): what ppi_mean computes for one
    sample and benchmarks/ppi_coverage.py for thousands. Arrays of shape (samples,)."""

    n: np.ndarray
    lam: np.ndarray
    fitted: np.ndarray
    value: np.ndarray
    low: np.ndarray
    high: np.ndarray
    se: np.ndarray
    disagreement: np.ndarray    # some labelled unit has e != e_bar (the data carry variance of their own)
    rectifier: np.ndarray       # e = y - lam f per unit, shape (samples, N) (0 where unlabelled)
    rectifier_mean: np.ndarray


def ppi_mean(judge: Sequence[float] | np.ndarray, human: Sequence[float] | np.ndarray,
             inclusion: Sequence[float] | np.ndarray | None = None, confidence: float = 0.95,
             lam: float | None = None, prior_weight: float = PRIOR_WEIGHT, fade: float = PRIOR_FADE) -> Estimate:
    """Estimate the mean of the human values over all units.

    `judge`: the judge's value of every unit (finite, in [0, 1]). `human`: the human value per unit (in [0, 1]),
    NaN where the unit is not labelled. `inclusion`: per unit, the probability pi_i that the design labelled it
    (used for labelled units only); None = a simple random sample, pi = n / N. `lam`: a fixed lambda (1:
    original PPI, 0: human only); None = power-tuned and clipped to [0, 1] (PPI++). `prior_weight`: the weight
    of each corner pseudo-observation (0: the classical interval, with neither the prior nor the width of the
    errors a sample without disagreement can miss; it collapses then); `fade`: the events at which the prior's
    weight is halved (math.inf: a fixed weight).
    """
    f = np.asarray(judge, dtype=float)
    y = np.asarray(human, dtype=float)
    if f.shape != y.shape or f.ndim != 1:
        raise ValueError("judge and human values must be two 1-D arrays of the same length")
    if not np.all(np.isfinite(f)):
        raise ValueError("every unit needs a finite judge value")
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), not {confidence}")
    labelled = np.isfinite(y)
    if np.any((f < 0) | (f > 1)) or np.any((y[labelled] < 0) | (y[labelled] > 1)):
        raise ValueError("judge and human values must lie in [0, 1] (the ARGUE measures do)")
    units = len(f)
    n = int(labelled.sum())
    judge_only = float(f.mean()) if units else math.nan
    if n == 0:
        return Estimate(units, 0, judge_only, Interval.undefined(), Interval.undefined(), math.nan, math.nan,
                        NOT_ESTIMABLE, confidence)
    pi = np.full(units, n / units) if inclusion is None else np.asarray(inclusion, dtype=float)
    if pi.shape != f.shape or np.any((pi[labelled] <= 0) | (pi[labelled] > 1)):
        raise ValueError("inclusion probabilities must be in (0, 1], one per unit")
    mask = labelled[None, :]
    ppi = ppi_batch(f, y, mask, pi, confidence, lam, prior_weight, fade)
    human_only = human_only_batch(f, y, mask, pi, confidence, prior_weight)
    ppi_i = _row(ppi.value, ppi.low, ppi.high, ppi.se)
    human_i = _row(human_only.value, human_only.low, human_only.high, human_only.se)
    lam_used = float(ppi.lam[0])
    if n < 2 and not np.all(pi[labelled] == 1):
        return Estimate(units, n, judge_only, human_i, ppi_i, lam_used, math.nan, NO_INTERVAL, confidence)
    effective = _effective_labels(n, human_i.se, ppi_i.se)
    status = OK
    if n < units:
        if n < MIN_LABELS:
            status = f"{FEW_LABELS}: {n} < {MIN_LABELS}, the interval may undercover"
        elif not ppi.disagreement[0]:
            status = f"{NO_DISAGREEMENT}: the judge matched all {n} labels; width from the errors n labels can miss"
    return Estimate(units, n, judge_only, human_i, ppi_i, lam_used, effective, status, confidence)


def _row(value: np.ndarray, low: np.ndarray, high: np.ndarray, se: np.ndarray) -> Interval:
    return Interval(float(value[0]), float(low[0]), float(high[0]), float(se[0]))


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


def ppi_batch(f: np.ndarray, y: np.ndarray, labelled: np.ndarray, pi: np.ndarray | float, confidence: float,
              lam: float | None = None, prior_weight: float = PRIOR_WEIGHT, fade: float = PRIOR_FADE) -> Batch:
    """The prediction-powered estimate and interval of each sample (row of the boolean `labelled`, shape
    (samples, N)) of the same N units. lambda: fixed, or (None) the weighted regression slope clipped to [0, 1]
    per sample, fitted from 3 labelled units up (1 below, and 1 when the judge is constant on the sample: the
    sample then says nothing about lambda and original PPI loses nothing on it)."""
    f, mask, y0, pi_u, w, n, weight = _samples(f, y, labelled, pi)
    if lam is None:
        fitted = n >= 3
        f_bar = (w * f).sum(axis=1) / weight
        y_bar = (w * y0).sum(axis=1) / weight
        fc = np.where(mask, f - f_bar[:, None], 0.0)
        var_f = (w * fc ** 2).sum(axis=1) / weight
        cov = (w * fc * (y0 - y_bar[:, None])).sum(axis=1) / weight
        raw = cov / np.where(var_f > 1e-15, var_f, 1.0)
        lam_s = np.where(fitted & (var_f > 1e-15), np.clip(raw, 0.0, 1.0), 1.0)
        # a slope clipped to 0 or 1 is the fixed-lambda estimator (human only, original PPI): it costs no degree
        # of freedom, so a judge that tells nothing leaves exactly the human-only interval
        fitted = fitted & (var_f > 1e-15) & (raw > 0) & (raw < 1)
    else:
        fitted = np.zeros(len(n), dtype=bool)
        lam_s = np.full(len(n), float(lam))
    e = np.where(mask, y0 - lam_s[:, None] * f, 0.0)
    corners = _corners(lam_s)
    # the prior fades as the sample's own variation grows (PRIOR_FADE)
    a = prior_weight * (1.0 if math.isinf(fade) else fade / (fade + events(e, mask, corners)))
    e_bar, centre, low, high, se, spread = _interval(e, w, mask, pi_u, n, weight, fitted, corners, confidence,
                                                      a)
    if prior_weight > 0:
        low, high, se = _unseen_errors(centre, low, high, se, f, y0, mask, pi_u, n, fitted, lam_s, confidence)
    value = lam_s * f.mean() + e_bar
    low, high = _clip_to_feasible(value, low + lam_s * f.mean(), high + lam_s * f.mean(), y0, mask)
    return Batch(n, lam_s, fitted, value, low, high, se, spread, e, e_bar)


def human_only_batch(f: np.ndarray, y: np.ndarray, labelled: np.ndarray, pi: np.ndarray | float,
                     confidence: float, prior_weight: float = PRIOR_WEIGHT) -> Batch:
    """The human sample alone: the same interval as PPI's with lambda = 0 (the prior's pseudo-observations at 0 and
    1, the finite-population factor, clipped to the values the mean can still take), binary rates included: Wilson's
    interval dips below nominal for them (docs/ppi.md)."""
    f, mask, y0, pi_u, w, n, weight = _samples(f, y, labelled, pi)
    none = np.zeros(len(n), dtype=bool)
    y_bar, _, low, high, se, spread = _interval(y0, w, mask, pi_u, n, weight, none, _corners(np.zeros(len(n))),
                                                     confidence, prior_weight)
    low, high = _clip_to_feasible(y_bar, low, high, y0, mask)
    return Batch(n, np.zeros(len(n)), none, y_bar, low, high, se, spread, y0, y_bar)


def _samples(f: np.ndarray, y: np.ndarray, labelled: np.ndarray, pi: np.ndarray | float) -> tuple[np.ndarray, ...]:
    """The arrays both estimators read: judge values, the labelled mask, labels (0 where unlabelled), inclusion
    probabilities per unit, inverse-probability weights, and per sample the count and total weight of its labels."""
    f = np.asarray(f, dtype=float)
    mask = np.asarray(labelled, dtype=bool)
    y0 = np.where(mask, np.nan_to_num(np.asarray(y, dtype=float)), 0.0)
    pi_u = np.broadcast_to(np.asarray(pi, dtype=float), f.shape)
    w = np.where(mask, 1 / np.where(mask, pi_u, 1.0), 0.0)
    return f, mask, y0, pi_u, w, mask.sum(axis=1), w.sum(axis=1)


def _corners(lam: np.ndarray) -> np.ndarray:
    """The rectifier y - lambda f at the four corners (y, f) of [0, 1]^2, shape (samples, 4)."""
    y = np.array([0.0, 0.0, 1.0, 1.0])
    f = np.array([0.0, 1.0, 0.0, 1.0])
    return y[None, :] - lam[:, None] * f[None, :]


def _interval(e: np.ndarray, w: np.ndarray, mask: np.ndarray, pi: np.ndarray, n: np.ndarray, weight: np.ndarray,
              fitted: np.ndarray, corners: np.ndarray, confidence: float, prior_weight: float
              ) -> tuple[np.ndarray, ...]:
    """(e_bar, centre, low, high, se, spread) of the rectifier's mean with the prior: PRIOR_WEIGHT a pseudo-
    observation at each corner joins the labelled units (weights v = w n / sum_S w, summing to n):
    centre = (sum_S v e + a sum_c c) / (n + 4a), Var = (1 - mean_S pi) S^2 / (n + 4a) with
    S^2 = (sum_S (1 - pi) v^2 (e - centre)^2 / (1 - mean_S pi) + a sum_c (c - centre)^2) / (n + 4a - 1 - k)
    (k = 1 for a fitted lambda); interval centre -/+ t_{n-1-k} sqrt(Var). Without the prior (a = 0) and under a
    simple random sample this is the classical (1 - n/N) s_e^2 / n."""
    a = prior_weight
    nf = n.astype(float)
    v = w * (nf / np.where(weight > 0, weight, 1.0))[:, None]
    e_bar = (v * e).sum(axis=1) / np.maximum(nf, 1)
    centre = ((v * e).sum(axis=1) + a * corners.sum(axis=1)) / (nf + 4 * a)
    keep = np.where(mask, 1 - pi, 0.0).sum(axis=1) / np.maximum(nf, 1)
    resid = np.where(mask, e - centre[:, None], 0.0)
    spread = (np.where(mask, e - e_bar[:, None], 0.0) ** 2).sum(axis=1) > 1e-12
    df = nf - 1 - fitted
    with np.errstate(divide="ignore", invalid="ignore"):
        data = ((1 - pi) * v ** 2 * resid ** 2).sum(axis=1) / np.where(keep > 0, keep, 1.0)
        s2 = (data + a * ((corners - centre[:, None]) ** 2).sum(axis=1)) / (nf + 4 * a - 1 - fitted)
        se = np.sqrt(np.maximum(keep * s2 / (nf + 4 * a), 0.0))
        half = stats.t.ppf((1 + confidence) / 2, np.where(df >= 1, df, 1)) * se
    full = keep <= 0     # every unit labelled: the human mean itself, known exactly
    centre = np.where(full, e_bar, centre)
    se = np.where(full, 0.0, np.where(df >= 1, se, np.nan))
    half = np.where(full, 0.0, np.where(df >= 1, half, np.nan))
    return e_bar, centre, centre - half, centre + half, se, spread


def events(e: np.ndarray, mask: np.ndarray, corners: np.ndarray) -> np.ndarray:
    """Per sample, how much the rectifier varies, counted in units that could not vary more: the labelled units'
    squared distances from the rectifier's most common value, over the largest squared distance a unit's values
    in [0, 1] can give (the corners'). With lambda = 1 on binary values it is the number of judge-human
    disagreements; with lambda = 0 the number of the rarer label; a near-constant rectifier gives about 0."""
    m = _mode(e, mask)
    reach = ((corners - m[:, None]) ** 2).max(axis=1)
    return (np.where(mask, e - m[:, None], 0.0) ** 2).sum(axis=1) / np.where(reach > 0, reach, 1.0)


def _mode(e: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Per sample, the most common rectifier value among the labelled units (to 1e-9)."""
    s = np.sort(np.where(mask, np.round(e, 9), np.inf), axis=1)
    k = np.arange(s.shape[1])
    new = np.ones(s.shape, dtype=bool)
    new[:, 1:] = s[:, 1:] != s[:, :-1]
    start = np.maximum.accumulate(np.where(new, k, 0), axis=1)
    run = np.where(np.isfinite(s), k - start + 1, 0)
    finite = np.isfinite(s)
    mean = np.where(finite, s, 0.0).sum(axis=1) / np.maximum(finite.sum(axis=1), 1)
    # on a tie, the tied value nearest the sample's mean rectifier (the least distance to spread)
    distance = np.where(run == run.max(axis=1, keepdims=True), np.abs(s - mean[:, None]), np.inf)
    return np.take_along_axis(s, distance.argmin(axis=1)[:, None], axis=1)[:, 0]


def unseen_error_rate(n: np.ndarray | int, confidence: float) -> np.ndarray:
    """The largest judge-human disagreement rate that a simple random sample of n units showing none leaves
    plausible: the one-sided Clopper-Pearson upper limit for 0 of n at level c, 1 - (1 - c)^(1/n) (Clopper &
    Pearson 1934; about 3/n at c = 0.95, the "rule of three", Hanley & Lippman-Hand 1983). One-sided because
    the errors a sample misses shift the estimate one way: a rate above it goes unseen in at most 1 - c of
    samples."""
    n = np.asarray(n, dtype=float)
    with np.errstate(divide="ignore"):
        return 1 - (1 - confidence) ** (1 / np.maximum(n, 1))


def _unseen_errors(centre: np.ndarray, low: np.ndarray, high: np.ndarray, se: np.ndarray, f: np.ndarray,
                   y0: np.ndarray, mask: np.ndarray, pi: np.ndarray, n: np.ndarray, fitted: np.ndarray,
                   lam: np.ndarray, confidence: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Widen the interval of a sample in which the judge matched every human value to the error the judge can
    still make on the unlabelled units: a disagreement rate up to unseen_error_rate(n) there, each error moving
    the rectifier by at most lambda (values in [0, 1]), so the mean by lambda * rate * (1 - mean_S pi). A
    single observed disagreement already gives the t interval about this width (n = 10 to 50); the prior alone
    gave less (a judge wrong on 12% of the units, all one way, was missed at n = 20 whenever the sample showed
    none of it, 0.88^20 = 8% of samples: coverage 0.927, benchmarks/ppi_coverage.py --window)."""
    agree = ~np.any(mask & (np.abs(y0 - f[None, :]) > 1e-12), axis=1)
    keep = np.where(mask, 1 - pi, 0.0).sum(axis=1) / np.maximum(n, 1)
    margin = np.where(agree & (keep > 0) & (n >= 1), lam * keep * unseen_error_rate(n, confidence), 0.0)
    wider = np.isfinite(low) & (centre - low < margin)
    low = np.where(wider, centre - margin, low)
    high = np.where(wider, centre + margin, high)
    df = np.maximum(n - 1 - fitted, 1)
    se = np.where(wider, margin / stats.t.ppf((1 + confidence) / 2, df), se)
    return low, high, se


def _clip_to_feasible(value: np.ndarray, low: np.ndarray, high: np.ndarray, y0: np.ndarray, mask: np.ndarray
                      ) -> tuple[np.ndarray, np.ndarray]:
    """The interval around the prior-adjusted centre, widened to hold the point estimate `value` (rarely needed:
    the centre moves by O(1/n)) and clipped to what the human mean over the N units can be: between (labelled sum
    + 0 per unlabelled unit) / N and (labelled sum + 1 per unlabelled unit) / N (values in [0, 1], the labelled
    ones known)."""
    units = mask.shape[1]
    known = y0.sum(axis=1) / units
    unknown = (~mask).sum(axis=1) / units
    low, high = np.minimum(low, value), np.maximum(high, value)
    low, high = np.maximum(low, known), np.minimum(high, known + unknown)
    every = unknown == 0     # every unit labelled: width 0 on the human mean itself
    return np.where(every, value, low), np.where(every, value, high)


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


def ppi_difference(judge_a: Sequence[float] | np.ndarray, human_a: Sequence[float] | np.ndarray,
                   judge_b: Sequence[float] | np.ndarray, human_b: Sequence[float] | np.ndarray,
                   common_a: Sequence[int] | np.ndarray, common_b: Sequence[int] | np.ndarray,
                   inclusion_a: Sequence[float] | np.ndarray | None = None,
                   inclusion_b: Sequence[float] | np.ndarray | None = None,
                   confidence: float = 0.95, paired: bool = True) -> Estimate:
    """The difference of two runs' means, each estimated from ALL its labelled units (as ppi_mean), with the
    covariance their shared units induce: Var = Var_A + Var_B - 2 Cov, Cov = S_AB (n_AB / (n_A n_B) - 1/N), the
    covariance of two simple-random-sample means with n_AB units in common (the overlapping-samples formula of
    sampling on successive occasions, Cochran 1977 ch. 12), S_AB the covariance of the two rectifiers over the
    units labelled in both (`common_a[i]` of run A and `common_b[i]` of run B are the same request). Paired where both
    are labelled, independent otherwise; with whole requests sampled (every run labelled on the same requests)
    it is the paired-difference variance. `paired=False`: the two runs' units were drawn independently (a weighted
    sample file: each report on its own), Cov = 0. Interval: t with the smaller of the two runs' degrees of
    freedom."""
    a = ppi_mean(judge_a, human_a, inclusion_a, confidence)
    b = ppi_mean(judge_b, human_b, inclusion_b, confidence)
    units = len(common_a)
    labelled = a.labelled + b.labelled
    judge_only = a.judge_only - b.judge_only
    if not (a.estimable and b.estimable):
        return Estimate(units, labelled, judge_only, Interval.undefined(), Interval.undefined(), math.nan, math.nan,
                        NOT_ESTIMABLE, confidence)
    intervals = []
    for lam in (0.0, None):
        parts = []
        for f, y, pi, est in ((judge_a, human_a, inclusion_a, a), (judge_b, human_b, inclusion_b, b)):
            f, y = np.asarray(f, dtype=float), np.asarray(y, dtype=float)
            mask = np.isfinite(y)[None, :]
            p = np.full(len(f), mask.sum() / len(f)) if pi is None else np.asarray(pi, dtype=float)
            batch = human_only_batch(f, y, mask, p, confidence) if lam == 0.0 else \
                ppi_batch(f, y, mask, p, confidence)
            parts.append((batch, mask[0], est))
        intervals.append(_difference(parts, np.asarray(common_a, dtype=int), np.asarray(common_b, dtype=int),
                                     confidence, paired))
    human_only, ppi = intervals
    status = next((e.status for e in (a, b) if e.status == NO_INTERVAL), None) or \
        next((e.status for e in (a, b) if e.status != OK), OK)
    effective = _effective_labels(labelled, human_only.se, ppi.se)
    return Estimate(units, labelled, judge_only, human_only, ppi, math.nan, effective, status, confidence)


def _difference(parts: list[tuple[Batch, np.ndarray, Estimate]], common_a: np.ndarray, common_b: np.ndarray,
                 confidence: float, paired: bool = True) -> Interval:
    (batch_a, mask_a, _), (batch_b, mask_b, _) = parts
    value = float(batch_a.value[0] - batch_b.value[0])
    se_a, se_b = float(batch_a.se[0]), float(batch_b.se[0])
    df = min(int(batch_a.n[0]) - 1 - int(batch_a.fitted[0]), int(batch_b.n[0]) - 1 - int(batch_b.fitted[0]))
    if not (math.isfinite(se_a) and math.isfinite(se_b)) or df < 1:
        return Interval(value, math.nan, math.nan, math.nan)
    both = mask_a[common_a] & mask_b[common_b]
    n_ab = int(both.sum())
    covariance = 0.0
    if paired and n_ab >= 2:
        ea = batch_a.rectifier[0, common_a[both]] - batch_a.rectifier_mean[0]
        eb = batch_b.rectifier[0, common_b[both]] - batch_b.rectifier_mean[0]
        s_ab = float(np.dot(ea, eb)) / (n_ab - 1)
        units = max(len(mask_a), len(mask_b))
        covariance = s_ab * (n_ab / (int(batch_a.n[0]) * int(batch_b.n[0])) - 1 / units)
    # Cauchy-Schwarz: the difference's variance is at least (se_a - se_b)^2
    variance = max(se_a ** 2 + se_b ** 2 - 2 * covariance, (se_a - se_b) ** 2)
    se = math.sqrt(variance)
    half = float(stats.t.ppf((1 + confidence) / 2, df)) * se
    return Interval(value, value - half, value + half, se)
