"""The calibration suite: how far each judge decision agrees with human assessors.

- `judge.calibration.items`: `CalibrationItem`, label vocabularies (`DECISION_LABELS`, `label_for`).
- `judge.calibration.importers`: AttributionBench, WiCE, nugget banks, human judgments -> items; sampling.
- `judge.calibration.stats`: agreement, correlations, leaderboard tie handling, significance, McNemar,
  confidence (reliability, ECE, cross-validated decision thresholds).
- `judge.calibration.report` (+ `report_confidence`, `figures`): calibration.md / .html / .json / PNG plots.
- `judge.calibration.confidence_by_decision`: the judge's confidence per item against the labels; thresholds.json.

- `judge.calibration.sources`: the command line's data sets -> items (sampling, one note per source).
- `judge.calibration.runner` / `suite`: items asked through judge.judging.decisions.asker.Decider; the library path.
- `judge.calibration.redteam`: the same items asked again with an attack's text in them (`calibrate --attack`).

Only `runner`/`suite`/`redteam` ask a model (through the Decider); the rest is pure. May import the domain
(decisions, judgments, metrics, formats, llm through the Decider's client); nothing but the CLI imports it.
"""

from judge.calibration.items import DECISION_LABELS, LABEL_ORDER, CalibrationItem, label_for, label_order

__all__ = ["DECISION_LABELS", "LABEL_ORDER", "CalibrationItem", "label_for", "label_order"]
