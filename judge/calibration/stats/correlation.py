"""Report level: Pearson, Spearman and Kendall tau-b between judge and human per-report (or per-run) values."""

from __future__ import annotations

import math
import warnings
from collections.abc import Hashable, Mapping, Sequence

import numpy as np
from pydantic import BaseModel, Field
from scipy import stats as sps


def finite_or_none(x: float | None) -> float | None:
    """A plain float, or None for NaN / infinity / None (undefined)."""
    if x is None:
        return None
    x = float(x)
    return x if math.isfinite(x) else None


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
        r, rp = finite_or_none(pr.statistic), finite_or_none(pr.pvalue)
        rho, rhop = finite_or_none(sr.statistic), finite_or_none(sr.pvalue)
        tau, taup = finite_or_none(kt.statistic), finite_or_none(kt.pvalue)
    return CorrelationResult(n=n, n_nan=len(judge) - n, pearson=r, pearson_p=rp, spearman=rho,
                             spearman_p=rhop, kendall_tau_b=tau, kendall_p=taup)


def correlate_by_key(judge: Mapping[Hashable, float], human: Mapping[Hashable, float]) -> CorrelationResult:
    """`correlate` on the keys both mappings share (sorted); keys on one side only are counted in n_missing."""
    common = sorted(set(judge) & set(human), key=str)
    result = correlate([judge[k] for k in common], [human[k] for k in common])
    return result.model_copy(update={"n_missing": len(set(judge) ^ set(human))})
