"""Report level: Pearson, Spearman and Kendall tau-b between judge and human per-report (or per-run) values."""

from __future__ import annotations

import math
import warnings
from collections.abc import Hashable, Mapping, Sequence

import numpy as np
from pydantic import Field
from scipy import stats as sps

from judge.calibration.stats.undefined import Reasons, Statistics, Undefined, finite, require


def finite_or_none(x: float | None) -> float | None:
    """A plain float, or None for NaN / infinity / None (undefined)."""
    if x is None:
        return None
    x = float(x)
    return x if math.isfinite(x) else None


class CorrelationResult(Statistics):
    """Correlation of judge and human per-report (or per-run) values. Coefficients and p-values are undefined
    with fewer than 2 pairs or a constant side (`undefined` says which)."""

    n: int = Field(description="pairs used")
    n_nan: int = Field(description="pairs left out because either value is NaN")
    n_missing: int = Field(default=0, description="keys present on one side only (correlate_by_key)")
    pearson: float | None
    pearson_p: float | None
    spearman: float | None
    spearman_p: float | None
    kendall_tau_b: float | None
    kendall_p: float | None


def varying(x: np.ndarray, y: np.ndarray, *, pairs: str = "pairs", judge: str = "judge",
            human: str = "human") -> None:
    """Undefined unless there are 2 pairs or more and neither side is constant: the condition of every
    correlation here (Pearson, Spearman, Kendall, tau_AP,b, the tie-broken leaderboard ones)."""
    require(len(x) >= 2, f"fewer than 2 {pairs}")
    require(bool(np.ptp(x) > 0), f"every {judge} value is the same")
    require(bool(np.ptp(y) > 0), f"every {human} value is the same")


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
    names = ("pearson", "pearson_p", "spearman", "spearman_p", "kendall_tau_b", "kendall_p")
    why = Reasons()
    values: dict[str, float | None] = dict.fromkeys(names)
    try:
        varying(x, y)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tests = {"pearson": sps.pearsonr(x, y), "spearman": sps.spearmanr(x, y),
                     "kendall_tau_b": sps.kendalltau(x, y, variant="b")}
        for name, res in tests.items():
            p_name = "kendall_p" if name == "kendall_tau_b" else f"{name}_p"
            values[name] = why.value(name, finite, res.statistic, "scipy returned no finite value")
            values[p_name] = why.value(p_name, finite, res.pvalue, "scipy returned no finite p-value")
    except Undefined as exc:
        why.mark(exc.reason, *names)
    return CorrelationResult(n=n, n_nan=len(judge) - n, undefined=why, **values)


def correlate_by_key(judge: Mapping[Hashable, float], human: Mapping[Hashable, float]) -> CorrelationResult:
    """`correlate` on the keys both mappings share (sorted); keys on one side only are counted in n_missing."""
    common = sorted(set(judge) & set(human), key=str)
    result = correlate([judge[k] for k in common], [human[k] for k in common])
    return result.model_copy(update={"n_missing": len(set(judge) ^ set(human))})
