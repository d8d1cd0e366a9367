"""The calibration report's section on prediction-powered inference: how many human labels PPI saves with this
judge, read off its confusion with the human labels on the calibration items.

With the power-tuned lambda, the prediction-powered estimate of a mean keeps the share
Var(Y - lambda f) / Var(Y) of the human-only variance (for a sample small beside the collection; PPI++,
Angelopoulos, Duchi & Zrnic 2023; docs/ppi.md). On a decision's 2x2 confusion (Y the human label, f the judge's)
that share is 1 - rho^2 when lambda = Cov / Var is inside [0, 1]: a judge at kappa 0.34 saves little, a good one
much. This is the decision level; `--human` measures the same on the report-level measures of a real sample
(ppi.tsv's effective_labels).
"""

from __future__ import annotations

import math

import numpy as np

from judge.calibration.document import Block, Code, Heading, para, table
from judge.calibration.document import number as _f
from judge.calibration.results import CalibrationResults
from judge.calibration.stats import AgreementResult
from judge.metrics.ppi import variance_ratio

# The human-only sample size the table translates into PPI labels.
REFERENCE_LABELS = 100


def savings_row(name: str, result: AgreementResult) -> list[object] | None:
    """One row of the section's table for a two-label confusion; None for another shape (left out)."""
    if len(result.labels) != 2:
        return None
    matrix = np.asarray(result.confusion)
    human = np.repeat([1, 1, 0, 0], [matrix[0, 0], matrix[0, 1], matrix[1, 0], matrix[1, 1]])
    judge = np.repeat([1, 0, 1, 0], [matrix[0, 0], matrix[0, 1], matrix[1, 0], matrix[1, 1]])
    lam, kept = variance_ratio(human, judge)
    rho = float(np.corrcoef(human, judge)[0, 1]) if human.std() > 0 and judge.std() > 0 else math.nan
    worth = 1 / kept if kept and math.isfinite(kept) else math.nan
    needed = REFERENCE_LABELS * kept if math.isfinite(kept) else math.nan
    return [name, int(matrix.sum()), _f(result.kappa), _f(rho), _f(lam, 2), _f(kept), _f(worth, 2),
            "–" if math.isnan(needed) else f"{math.ceil(needed)}"]


def ppi_blocks(results: CalibrationResults) -> list[Block]:
    rows = []
    for decision, result in sorted(results.decisions.items()):
        rows.append(savings_row(f"{decision}: model", result))
        if decision in results.thresholds:
            rows.append(savings_row(f"{decision}: thresholded, held out", results.thresholds[decision].after))
    rows = [r for r in rows if r is not None]
    if not rows:
        return []
    return [Heading(2, "Human labels saved by prediction-powered inference"), para((
        "With this judge's labels of every report and human labels of a sample (", Code("argue-judge score --human"),
        "), the prediction-powered estimate keeps the share Var(Y − λf) / Var(Y) of the human-only variance at the "
        "power-tuned λ (PPI++, Angelopoulos, Duchi & Zrnic 2023). Read off each confusion matrix: one human label "
        f"is worth 1 / share labels, and the interval of {REFERENCE_LABELS} human-only labels needs "
        f"{REFERENCE_LABELS} × share with PPI (a sample small beside the collection). Decision level only: the "
        "report-level figure is ppi.tsv's effective_labels on a real sample.")),
        table(["labels", "n", "κ", "correlation", "λ", "variance kept", "one label worth",
               f"labels for the width of {REFERENCE_LABELS}"], rows,
              "human labels PPI saves, per decision")]
