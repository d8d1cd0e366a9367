"""Cohen's κ of a confusion matrix, the one computation behind a judge's agreement with people (judge.calibration)
and with another judge of its panel (judge.metrics.panel_agreement)."""

from __future__ import annotations

import math

import numpy as np

from judge.metrics.undefined import require


def kappa(matrix: np.ndarray, *, empty: str, one_class: str) -> float:
    """(p_o - p_e) / (1 - p_e), with p_o = trace / n and p_e = sum_k row_k * col_k / n^2. Undefined, with the reason
    the caller words, when there is no item (`empty`) or when both raters put every item in one class (p_e = 1:
    `one_class`)."""
    m = np.asarray(matrix, dtype=float)
    n = m.sum()
    require(n > 0, empty)
    observed = np.trace(m) / n
    chance = float((m.sum(axis=1) * m.sum(axis=0)).sum() / (n * n))
    require(not math.isclose(chance, 1.0, rel_tol=0.0, abs_tol=1e-12), one_class)
    return float((observed - chance) / (1.0 - chance))
