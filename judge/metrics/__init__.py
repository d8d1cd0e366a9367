"""Measures computed from judgments records alone (never calling a model): ARGUE's and Auto-ARGUE's.

Sources:
  * ARGUE: J. Mayfield et al., "On the Evaluation of Machine-Generated Reports", SIGIR 2024
    (sentence precision over the flowchart outcomes; nugget recall) -- `argue.py`.
  * Auto-ARGUE: W. G. Walden et al., "Auto-ARGUE: LLM-Based Report Generation Evaluation", 2025,
    arXiv:2509.26184 (sentence_support, citation_support, citation_relevance, nugget_coverage, f1 and its
    counts, under Auto-ARGUE's own names in the `autoargue.` namespace: `autoargue.f1` ...) -- `autoargue.py`.

Layout: `measure.py` (what a measure is, the registry, parsing names without eval), `facts.py` (what one judged
report says, worked out once), `argue.py` and `autoargue.py` (the measures, each with its per-report
statistics), `flagged.py` (sentences the injection detector flagged), `scoring.py` (reports and runs; macro and
micro derived from the statistics), `panel_agreement.py` (how far a panel's judges agree: Fleiss' κ, Krippendorff's
α, Cohen's κ per pair), `kappa.py` (Cohen's κ of a confusion matrix, which calibration uses too) and `undefined.py`
(the one rule for a statistic the data cannot give). May import
judge.formats.judgments, judge.labels, judge.types, judge.errors and judge.formats.scores (and numpy, scipy,
pydantic); nothing imports back.

Naming: per-request rows carry the plain measure; on a run's `all` rows a ratio measure's plain name is the
MACRO mean over reports (NaN skipped) and `micro=True` the MICRO value (pooled statistics); a count is summed.
"""

from judge.metrics import argue as _argue  # noqa: F401  (registers ARGUE's measures first: output order)
from judge.metrics import autoargue as _autoargue  # noqa: F401
from judge.metrics import flagged as _flagged  # noqa: F401  (the injection flags last)
from judge.metrics.argue import (
    F1,
    CitationRelevance,
    CitationSupport,
    Failed,
    Judged,
    NuggetRecall,
    Nuggets,
    NuggetsEarned,
    OutcomeCount,
    PrecisionUndefined,
    SentencePrecision,
    Sentences,
    SentenceSupport,
    Truncated,
    Undetermined,
)
from judge.metrics.autoargue import BY_NAME as AUTO_ARGUE_MEASURES
from judge.metrics.flagged import Flagged
from judge.metrics.measure import ALIASES, Measure, f1_score, parse_measure, register
from judge.metrics.measure import MEASURES as _REGISTERED
from judge.metrics.measure import aggregate_measures as _aggregate_measures
from judge.metrics.scoring import ReportScores, RunScores, Scores, score_judgments, score_report

# Every per-report measure, in output order; and the measures of a run's `all` rows.
MEASURES: tuple[Measure, ...] = tuple(_REGISTERED)
AGGREGATE_MEASURES: tuple[Measure, ...] = _aggregate_measures()

__all__ = [
    "AGGREGATE_MEASURES", "ALIASES", "AUTO_ARGUE_MEASURES", "F1", "MEASURES", "CitationRelevance",
    "CitationSupport", "Failed", "Flagged",
    "Judged", "Measure", "NuggetRecall", "Nuggets", "NuggetsEarned", "OutcomeCount",
    "PrecisionUndefined", "ReportScores", "RunScores", "Scores", "SentencePrecision", "SentenceSupport",
    "Sentences", "Truncated", "Undetermined", "f1_score", "parse_measure", "register", "score_judgments",
    "score_report",
]
