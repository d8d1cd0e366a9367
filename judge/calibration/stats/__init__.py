"""Statistics of the calibration suite: how far the judge agrees with human assessors.

One module per level; each function returns a pydantic model (JSON-serialisable). A statistic the data cannot
give (no items, one run, a constant side, every run tied, every item in one class) is None, and the model's
`undefined` says why: one rule, `undefined.Statistics`, that the report prints as "undefined (why)".

- `agreement`: decision level, `decision_agreement` (accuracy, balanced accuracy, per-class P/R/F1, confusion
  matrix, Cohen's kappa with a percentile bootstrap CI, breakdown by group) and `agreement_by_decision` for items;
- `correlation`: report level, `correlate` / `correlate_by_key` (Pearson, Spearman, Kendall tau-b with p-values);
- `leaderboard`: run level, `leaderboard_correlation` (Kendall tau and Spearman rho with EXAM-style tie handling)
  and `ranking_agreement` (tau-b, Spearman, Pearson, tau_AP,b, Kendall@k with bootstrap intervals over requests);
- `significance`: run level, `pairwise_significance_agreement` (paired t-test and Wilcoxon win/loss/tie agreement);
- `mcnemar`: prompt A/B, `mcnemar_exact`, `mcnemar_power_warning`, `compare_prompts`;
- `redteam`: clean against attacked labels of the same items, `attack_comparison` (flip rates, McNemar);
- `confidence_calibration`: reliability table and expected calibration error (`reliability`, `confidence_result`), and a
  decision threshold on confidence fitted with seeded k-fold cross-validation (`cross_validated_threshold`).

May import numpy, scipy, pydantic, `judge.calibration.items` and `judge.metrics.undefined` (the undefined rule,
re-exported by `undefined`); nothing here calls a model. The names below are re-exported so
`from judge.calibration.stats import X` keeps working for every public name.
"""

from judge.calibration.stats.agreement import (
    NO_GROUP,
    AgreementResult,
    ClassMetrics,
    agreement_by_decision,
    cohen_kappa,
    confusion_matrix,
    decision_agreement,
    kappa_of,
)
from judge.calibration.stats.confidence_calibration import (
    FIT_METRICS,
    ConfidenceResult,
    FitMetric,
    ReliabilityBin,
    Rule,
    ThresholdFit,
    apply_rule,
    confidence_result,
    cross_validated_threshold,
    fit_threshold,
    reliability,
)
from judge.calibration.stats.correlation import CorrelationResult, correlate, correlate_by_key, finite_or_none
from judge.calibration.stats.leaderboard import (
    Coefficient,
    LeaderboardCorrelation,
    RankingAgreement,
    RunPoint,
    RunScore,
    TieMode,
    kendall_at_k,
    leaderboard_correlation,
    ranking_agreement,
    run_summaries,
    tau_ap_b,
    tie_groups,
    within_one_se,
)
from judge.calibration.stats.mcnemar import (
    MIN_DISCORDANT,
    McNemarResult,
    PromptComparison,
    compare_prompts,
    compare_prompts_on_items,
    mcnemar_exact,
    mcnemar_p,
    mcnemar_power_warning,
    min_detectable_difference,
)
from judge.calibration.stats.redteam import AttackResult, Rate, attack_comparison
from judge.calibration.stats.significance import (
    VERDICTS,
    PairOutcome,
    PairwiseAgreement,
    SignificanceAgreement,
    Verdict,
    pairwise_significance_agreement,
)
from judge.calibration.stats.undefined import Reasons, Statistics, Undefined

__all__ = [
    "FIT_METRICS", "ConfidenceResult", "FitMetric", "ReliabilityBin", "Rule", "ThresholdFit", "apply_rule",
    "confidence_result", "cross_validated_threshold", "fit_threshold", "reliability",
    "MIN_DISCORDANT", "NO_GROUP", "VERDICTS", "AgreementResult", "AttackResult", "ClassMetrics",
    "CorrelationResult", "LeaderboardCorrelation", "McNemarResult", "PairOutcome", "PairwiseAgreement",
    "PromptComparison", "Rate", "RunPoint", "RunScore", "SignificanceAgreement", "TieMode", "Verdict",
    "agreement_by_decision", "attack_comparison", "cohen_kappa", "compare_prompts", "compare_prompts_on_items",
    "confusion_matrix", "correlate", "correlate_by_key", "decision_agreement", "finite_or_none",
    "leaderboard_correlation", "ranking_agreement", "tau_ap_b", "kendall_at_k", "Coefficient",
    "RankingAgreement", "mcnemar_exact", "mcnemar_p", "mcnemar_power_warning", "min_detectable_difference",
    "pairwise_significance_agreement", "run_summaries", "tie_groups", "within_one_se",
    "Reasons", "Statistics", "Undefined", "kappa_of",
]
