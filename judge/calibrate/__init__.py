"""The calibration suite: how far each judge decision agrees with human assessors.

- `judge.calibrate.items`: `CalibrationItem`, label vocabularies (`DECISION_LABELS`, `label_for`).
- `judge.calibrate.importers`: AttributionBench, WiCE, nugget banks, human judgments -> items; sampling.
- `judge.calibrate.stats`: agreement, correlations, leaderboard tie handling, significance, McNemar.
- `judge.calibrate.report`: calibration.md / calibration.json / PNG plots.

Nothing in this package calls a model.
"""

from judge.calibrate.items import DECISION_LABELS, LABEL_ORDER, CalibrationItem, label_for, label_order

__all__ = ["DECISION_LABELS", "LABEL_ORDER", "CalibrationItem", "label_for", "label_order"]
