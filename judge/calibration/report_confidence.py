"""The confidence sections of the calibration report: reliability per decision (table, figure, ECE) and the
fitted decision thresholds with their cross-validated effect. Laid out as blocks of `judge.calibration.document`,
like the rest of the report (judge.calibration.report renders and writes them)."""

from __future__ import annotations

from pathlib import Path

from judge.calibration.document import Block, Bullets, Caution, Code, Figure, Heading, para, table
from judge.calibration.document import number as _f
from judge.calibration.document import statistic as _s
from judge.calibration.figures import new_figure, save_png
from judge.calibration.results import CalibrationResults
from judge.calibration.stats import AgreementResult, ConfidenceResult

THRESHOLDS_NAME = "thresholds.json"


def agreement_columns(first: str, ci: str = "κ CI") -> list[str]:
    """Headers of an agreement table whose rows are `agreement_row`s."""
    return [first, "n", "failed", "accuracy", "balanced accuracy", "κ", ci,
            # both views of failures: left out (the columns before), and counted as disagreements
            "accuracy, failed = wrong", "κ, failed = wrong"]


def agreement_row(name: str, r: AgreementResult) -> list[object]:
    ci = _s(r, "kappa_ci_low") if r.kappa_ci_low is None or r.kappa_ci_high is None else \
        f"[{r.kappa_ci_low:.3f}, {r.kappa_ci_high:.3f}]"
    return [name, r.n, r.failed, _s(r, "accuracy"), _s(r, "balanced_accuracy"), _s(r, "kappa"), ci,
            _s(r, "accuracy_failed_wrong"), _s(r, "kappa_failed_wrong")]


def confidence_blocks(results: CalibrationResults) -> list[Block]:
    """Figure keys: "reliability:<decision>"."""
    if not results.confidence:
        return []
    out: list[Block] = [Heading(2, "Confidence"), para(
        "Confidence: the probability the judge's model gave to the verdict it wrote, from its token "
        "log-probabilities (null where the provider returns none; never guessed). Reliability: items binned by "
        "confidence; a calibrated judge is right in about the share of items its confidence says. ECE (expected "
        "calibration error) = Σ (n_bin / n) · |accuracy_bin − mean confidence_bin|; MCE = the largest such gap; "
        "Brier = mean (confidence − correct)². Correct: judge label = human label; failed items are left out.")]
    out.append(table(["decision", "n", "no confidence", "mean confidence", "accuracy", "ECE", "MCE", "Brier"],
                     [[d, c.n, c.without_confidence, *(_s(c, name) for name in
                                                        ("mean_confidence", "accuracy", "ece", "mce", "brier"))]
                      for d, c in sorted(results.confidence.items())], "calibration per decision"))
    for decision, c in sorted(results.confidence.items()):
        out.append(Heading(3, f"{decision}: reliability"))
        out.append(table(["bin", "count", "mean confidence", "accuracy", "gap"],
                         [[f"[{b.lower:.1f}, {b.upper:.1f}{']' if b.upper >= 1 else ')'}", b.count,
                           _s(b, "mean_confidence"), _s(b, "accuracy"),
                           _s(b, "accuracy") if b.accuracy is None or b.mean_confidence is None
                           else _f(b.accuracy - b.mean_confidence)] for b in c.bins],
                         f"reliability table {decision}"))
        out.append(Figure(f"reliability:{decision}", f"reliability diagram {decision}"))
    return out


def threshold_blocks(results: CalibrationResults) -> list[Block]:
    if not results.thresholds:
        return []
    out: list[Block] = [Heading(2, "Decision thresholds (cross-validated)"), para((
        "A rule keeps a verdict only when the judge's confidence in it reaches the threshold; below, the decision "
        "flips to the other verdict. Each item's thresholded label below comes from a rule fitted on the other "
        "folds (seeded k-fold cross-validation), so the 'after' row measures agreement on items the threshold was "
        "not fitted on. The rule written to ", Code(THRESHOLDS_NAME), " is fitted on all items; apply it with ",
        Code("argue-judge eval --thresholds FILE"), "."))]
    for decision, fit in sorted(results.thresholds.items()):
        rule = fit.rule
        out.append(Heading(3, decision))
        out.append(Bullets((
            (f"rule (all {fit.n_fit} judged items, maximising {fit.metric}): keep ", Code(rule.verdict),
             f" only at confidence ≥ {rule.threshold:.4f}, otherwise ", Code(rule.other),
             " (threshold 0: no rule helped)." if rule.threshold == 0 else "."),
            (f"{fit.folds}-fold rules (seed {fit.seed}): " + ", ".join(
                f"{r.verdict} ≥ {r.threshold:.4f}" for r in fit.fold_rules),),
            (f"items with a confidence: {fit.with_confidence} of {fit.n_fit}; flipped on held-out folds: "
             f"{len(fit.flipped_ids)}",),
            (f"McNemar exact, correctness before against after: b = {fit.mcnemar.b}, c = {fit.mcnemar.c}, "
             f"p = {_s(fit.mcnemar, 'p_value', 4)}",))))
        if fit.mcnemar.warning:
            out.append(Caution(fit.mcnemar.warning))
        out.append(table(agreement_columns("labels"),
                         [agreement_row("model (before)", fit.before),
                          agreement_row("thresholded, held out", fit.after)],
                         f"agreement before and after the threshold, {decision}"))
    return out


def plot_reliability(result: ConfidenceResult, decision: str, path: Path) -> bool:
    filled = [b for b in result.bins if b.count]
    if not filled:
        return False
    fig = new_figure(5, 5)
    ax = fig.add_subplot(1, 1, 1)
    width = result.bins[0].upper - result.bins[0].lower
    ax.bar([b.lower for b in filled], [b.accuracy for b in filled], width=width, align="edge", alpha=0.7,
           edgecolor="black", label="accuracy")
    ax.plot([0, 1], [0, 1], color="grey", linestyle="--", linewidth=0.8, label="calibrated")
    ax.plot([b.mean_confidence for b in filled], [b.accuracy for b in filled], "o", color="black",
            label="mean confidence")
    for b in filled:
        ax.annotate(str(b.count), (b.lower + width / 2, b.accuracy or 0.0), ha="center", fontsize=7,
                    xytext=(0, 3), textcoords="offset points")
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1.05)
    ax.set_xlabel("confidence")
    ax.set_ylabel("accuracy")
    ax.set_title(f"{decision}: ECE {_f(result.ece)} (n={result.n})")
    ax.legend(loc="upper left", fontsize=8)
    save_png(fig, path)
    return True
