"""The calibration report: `<out>/calibration.md`, `<out>/calibration.html`, `<out>/calibration.json` and PNG plots.

`report_blocks` lays the results out once as a small document (`judge.calibration.document`); the Markdown and the
HTML are two renderings of it, so they always say the same. Markdown, HTML and JSON are deterministic (sorted
keys, fixed float formatting: 3 decimals in text, floats rounded to 6 decimals in JSON, NaN/inf as null), so a
re-run on the same results is byte-identical. The HTML page is self-contained: the PNG figures are inlined as
base64 data URIs, so it can be mailed or attached on its own. Plots use matplotlib's object-oriented API on the Agg
canvas (no pyplot, no global backend switch).

`CalibrationResults`, `results_json` and `load_calibration_json` live in `judge.calibration.results`; they are
re-exported here for the old import path.
"""

from __future__ import annotations

import math
from pathlib import Path

from judge.calibration.document import (
    Block,
    Bullets,
    Caution,
    Code,
    Figure,
    Heading,
    Span,
    para,
    table,
    to_html,
    to_markdown,
)
from judge.calibration.document import number as _f
from judge.calibration.document import statistic as _s
from judge.calibration.figures import new_figure as _figure
from judge.calibration.figures import save_png as _save
from judge.calibration.report_confidence import (
    agreement_columns,
    agreement_row,
    confidence_blocks,
    plot_reliability,
    threshold_blocks,
)
from judge.calibration.report_ppi import ppi_blocks
from judge.calibration.results import CalibrationResults, items_jsonl, load_calibration_json, results_json
from judge.calibration.stats import VERDICTS, AgreementResult, LeaderboardCorrelation
from judge.formats.atomic import write_text_atomic
from judge.formats.paths import link_name

__all__ = ["HTML_NAME", "JSON_NAME", "MARKDOWN_NAME", "CalibrationResults", "load_calibration_json", "render_html",
           "render_markdown", "report_blocks", "results_json", "write_calibration_report"]

MARKDOWN_NAME = "calibration.md"
HTML_NAME = "calibration.html"
JSON_NAME = "calibration.json"
ITEMS_NAME = "items.jsonl"
TITLE = "Calibration report"


# ---------------------------------------------------------------------------------------------------------------
# The document
# ---------------------------------------------------------------------------------------------------------------

def _p(result: object, name: str) -> str:
    """A p-value cell: 4 decimals, "<0.0001" below, or why it is undefined."""
    p = getattr(result, name)
    if p is None or not math.isfinite(p):
        return _s(result, name)
    return "<0.0001" if p < 1e-4 else f"{p:.4f}"


def _slug(name: str) -> str:
    return link_name(name, digest=False)  # judge.formats.paths: two names never share a figure's file


def _id_list(ids: list[str], limit: int = 50) -> Span:
    if not ids:
        return ("none",)
    parts: list[str | Code] = []
    for i, item_id in enumerate(ids[:limit]):
        parts += [", ", Code(item_id)] if i else [Code(item_id)]
    if len(ids) > limit:
        parts.append(f", … and {len(ids) - limit} more (all in {JSON_NAME})")
    return tuple(parts)


def report_blocks(results: CalibrationResults) -> list[Block]:
    """The report's content, in order. Figure keys: "kappa", "confusion:<decision>", "reliability:<decision>",
    "leaderboard:<metric>"."""
    out: list[Block] = [Heading(1, TITLE), para(("Signature: ", Code(results.signature)))]
    if results.notes:
        out.append(Bullets(tuple((note,) for note in results.notes)))
    out += _decision_blocks(results)
    out += _panel_blocks(results)
    out += confidence_blocks(results)
    out += threshold_blocks(results)
    out += ppi_blocks(results)
    out += _report_level_blocks(results)
    out += _run_level_blocks(results)
    out += _pairwise_blocks(results)
    out += _prompt_ab_blocks(results)
    out += _redteam_blocks(results)
    return out


def _decision_blocks(results: CalibrationResults) -> list[Block]:
    if not results.decisions:
        return []
    level = next(iter(results.decisions.values())).ci_level
    out: list[Block] = [Heading(2, "Decision level")]
    out.append(table(agreement_columns("decision", f"κ {round(level * 100):d}% CI"),
                     [agreement_row(d, r) for d, r in sorted(results.decisions.items())], "agreement per decision"))
    out.append(Figure("kappa", "κ per decision"))
    for decision, r in sorted(results.decisions.items()):
        out.append(Heading(3, decision))
        out.append(para(f"κ CI: percentile bootstrap over items, {r.n_boot} resamples, seed {r.seed}"
                        + (f"; {r.boot_undefined} resamples with undefined κ left out." if r.boot_undefined else "."),
                        (f"Failed items ({r.failed} of {r.n_total}): ", *_id_list(r.failed_ids))))
        out.append(table(["class", "precision", "recall", "F1", "support (human)", "predicted (judge)"],
                         [[c.label, _s(c, "precision"), _s(c, "recall"), _s(c, "f1"), c.support, c.predicted]
                          for c in r.per_class], "per class"))
        out.append(para("Confusion matrix (rows: human, columns: judge):"))
        out.append(table(["human \\ judge", *r.labels], [[lab, *row] for lab, row in zip(r.labels, r.confusion)],
                         "confusion matrix (rows: human, columns: judge)"))
        out.append(Figure(f"confusion:{decision}", f"confusion matrix {decision}"))
        if r.by_group:
            out.append(para("By group:"))
            out.append(table(agreement_columns("group"),
                             [agreement_row(g, gr) for g, gr in sorted(r.by_group.items())], "by group"))
    return out


def _panel_blocks(results: CalibrationResults) -> list[Block]:
    """With a panel: each judge against the human labels beside the panel's vote (the decision level above), and
    the agreement among the judges."""
    if not results.judges:
        return []
    level = next(iter(results.decisions.values())).ci_level if results.decisions else 0.95
    rows = [agreement_row(f"{decision}: {judge}", r) for judge, by_decision in results.judges.items()
            for decision, r in sorted(by_decision.items())]
    out: list[Block] = [Heading(2, "Panel of judges"),
                        para("Each judge of the panel against the human labels (the decision level above is the "
                             "panel's vote):"),
                        table(agreement_columns("decision: judge", f"κ {round(level * 100):d}% CI"), rows,
                              "each judge of the panel")]
    if results.panel:
        out.append(para("Agreement among the judges (Fleiss' κ over the items every judge decided, Krippendorff's "
                        "α nominal over the items two or more decided; Cohen's κ per pair):"))
        out.append(table(["decision", "items", "split", "Fleiss' κ", "Krippendorff's α", "Cohen's κ per pair"],
                         [[d, a.decisions, a.split, _s(a, "fleiss_kappa"), _s(a, "krippendorff_alpha"),
                           "; ".join(f"{p.judges[0]} / {p.judges[1]}: {_s(p, 'kappa')}" for p in a.pairwise)]
                          for d, a in sorted(results.panel.items())], "agreement among the judges"))
    return out


def _report_level_blocks(results: CalibrationResults) -> list[Block]:
    if not results.report_level:
        return []
    return [Heading(2, "Report level"), para("Judge against human per-report values; p-values two-sided."),
            table(["metric", "n", "NaN pairs", "missing", "Pearson r", "p", "Spearman ρ", "p", "Kendall τ-b", "p"],
                  [[m, c.n, c.n_nan, c.n_missing, _s(c, "pearson"), _p(c, "pearson_p"), _s(c, "spearman"),
                    _p(c, "spearman_p"), _s(c, "kendall_tau_b"), _p(c, "kendall_p")]
                   for m, c in sorted(results.report_level.items())], "correlation per metric")]


def _run_level_blocks(results: CalibrationResults) -> list[Block]:
    if not results.run_level:
        return []
    out: list[Block] = [Heading(2, "Run level"), para(
        "Runs within one standard error of each other (|a − b| ≤ max(SE_a, SE_b)) count as tied; each "
        "repetition breaks ties at random (pairwise: a random order consistent with every pair more than "
        "one SE apart; components: tied groups shuffled as wholes); mean ± std over repetitions. "
        "Raw: on the plain means.")]
    out.append(table(["metric", "runs", "Kendall τ", "Spearman ρ", "τ-b raw", "ρ raw", "tie mode",
                      "tied pairs (judge / human)", "repetitions", "seed"],
                     [[m, lc.n_runs, _mean_std(lc, "kendall_tau"), _mean_std(lc, "spearman_rho"),
                       _s(lc, "kendall_tau_b_raw"), _s(lc, "spearman_rho_raw"), lc.tie_mode,
                       f"{lc.judge_tied_pairs} / {lc.human_tied_pairs}", lc.repetitions, lc.seed]
                      for m, lc in sorted(results.run_level.items())], "leaderboard correlation per metric"))
    agreements = [(m, lc.agreement) for m, lc in sorted(results.run_level.items()) if lc.agreement is not None]
    if agreements:
        first = agreements[0][1]
        out.append(para(
            "Agreement as TREC's AutoJudge evaluation reports it (autojudge-evaluate's names): Kendall τ-b, "
            "Spearman ρ, Pearson r, τ_AP,b (Yilmaz, Aslam & Robertson 2008's AP correlation with ties, Urbano & "
            f"Marrero 2017) and Kendall@{first.k} (τ-b over the humans' top {first.k} runs), on the runs' means; "
            f"[{first.confidence:.0%} percentile bootstrap over requests, {first.bootstrap} draws, seed "
            f"{first.seed}]."))
        names = (("kendall", "Kendall τ-b"), ("spearman", "Spearman ρ"), ("pearson", "Pearson r"),
                 ("tauap_b", "τ_AP,b"), ("kendall@k", f"Kendall@{first.k}"))

        def cell(c) -> str:
            if c.value is None:
                return _s(c, "value")
            return f"{_f(c.value)} " + (f"[{_f(c.low)}, {_f(c.high)}]" if c.low is not None and c.high is not None
                                        else f"[interval {_s(c, 'low')}]")

        out.append(table(["metric", "runs", "requests", *(label for _, label in names)],
                         [[m, a.n_runs, a.n_requests, *(cell(a.coefficients[key]) for key, _ in names)]
                          for m, a in agreements], "leaderboard agreement with bootstrap intervals"))
    for metric, lc in sorted(results.run_level.items()):
        out.append(Heading(3, metric))
        if lc.missing_runs:
            out.append(para(("Runs on one leaderboard only (left out): ", *_id_list(lc.missing_runs))))
        lines = []
        for side, groups in (("judge", lc.judge_tie_groups), ("human", lc.human_tie_groups)):
            tied = [g for g in groups if len(g) > 1]
            lines.append(f"Tie components ({side}): "
                         + ("; ".join("{" + ", ".join(g) + "}" for g in tied) if tied else "none"))
        out.append(para(*lines, hard_breaks=True))
        out.append(table(["run", "judge mean", "judge SE", "human mean", "human SE"],
                         [[p.run_id, _f(p.judge_mean, 4), _f(p.judge_se, 4), _f(p.human_mean, 4), _f(p.human_se, 4)]
                          for p in sorted(lc.runs, key=lambda p: (-p.human_mean, p.run_id))], "runs"))
        out.append(Figure(f"leaderboard:{metric}", f"leaderboard {metric}"))
    return out


def _pairwise_blocks(results: CalibrationResults) -> list[Block]:
    if not results.pairwise:
        return []
    out: list[Block] = [Heading(2, "Pairwise significance agreement")]
    out.append(table(["metric", "runs", "pairs", "alpha", "t-test agreement", "Wilcoxon agreement"],
                     [[m, pa.n_runs, pa.ttest.n_pairs, f"{pa.alpha:g}", _s(pa.ttest, "agreement"),
                       _s(pa.wilcoxon, "agreement")] for m, pa in sorted(results.pairwise.items())],
                     "agreement per metric"))
    for metric, pa in sorted(results.pairwise.items()):
        out += [Heading(3, metric),
                para(("Paired on the requests both runs have in both tables; Wilcoxon zero_method ",
                      Code(pa.zero_method), ". Win = first run (by id) significantly better. Rows: human, "
                      "columns: judge."))]
        for test in (pa.ttest, pa.wilcoxon):
            name = "paired t-test" if test.test == "ttest" else "Wilcoxon signed-rank"
            untested = f"; {test.untested} pairs with too few shared requests left out" if test.untested else ""
            out.append(para(f"{name} (agreement {_s(test, 'agreement')} on {test.n_pairs} pairs{untested}):"))
            out.append(table(["human \\ judge", *VERDICTS], [[v, *row] for v, row in zip(VERDICTS, test.table)],
                             f"{name} verdicts (rows: human, columns: judge)"))
    return out


def _prompt_ab_blocks(results: CalibrationResults) -> list[Block]:
    if not results.prompt_ab:
        return []
    out: list[Block] = [Heading(2, "Prompt A/B (McNemar exact)")]
    out.append(table(["decision", "A", "B", "n", "acc A", "acc B", "b (A✓ B✗)", "c (A✗ B✓)", "p",
                      "min. detectable diff.", "failed A", "failed B"],
                     [[c.decision, c.name_a, c.name_b, c.mcnemar.n, _s(c.mcnemar, "accuracy_a"),
                       _s(c.mcnemar, "accuracy_b"), c.mcnemar.b, c.mcnemar.c, _p(c.mcnemar, "p_value"),
                       _s(c.mcnemar, "min_detectable_difference"), len(c.failed_a), len(c.failed_b)]
                      for c in results.prompt_ab], "McNemar per decision"))
    for c in results.prompt_ab:
        out.append(Heading(3, f"{c.decision}: {c.name_a} → {c.name_b}"))
        if c.mcnemar.warning:
            out.append(Caution(c.mcnemar.warning))
        items: list[Span] = [(f"right → wrong ({len(c.right_to_wrong)}): ", *_id_list(c.right_to_wrong, 200)),
                             (f"wrong → right ({len(c.wrong_to_right)}): ", *_id_list(c.wrong_to_right, 200))]
        if c.failed_a or c.failed_b:
            items += [(f"failed with {c.name_a}: ", *_id_list(c.failed_a)),
                      (f"failed with {c.name_b}: ", *_id_list(c.failed_b))]
        out.append(Bullets(tuple(items)))
    return out


def _redteam_blocks(results: CalibrationResults) -> list[Block]:
    if not results.redteam:
        return []
    out: list[Block] = [Heading(2, "Red team (attacks on the judge)"), para(
        "Every item asked twice through the same cache: clean, and with the attack's text in the sentence or the "
        "document. False support: the judge says yes where the human did not, over the pairs (items labelled on "
        "both sides). Flips: attacked label against clean label, over the pairs whose clean label was no (no → yes) "
        "or yes (yes → no). κ: attacked labels against clean labels. McNemar exact on b = flips to yes, "
        "c = flips to no. Flagged: items whose sentence or shown document passages, before any quarantine, the "
        "injection detector flags. "
        "Withheld to clean: under --on-injection quarantine, attacked items whose prompt, once the flagged pieces "
        "were withheld, is exactly their clean twin's (– under --on-injection flag, where the judge is shown the "
        "attack as written).")]
    out.append(table(["attack", "decision", "target", "pairs", "false support clean", "false support attacked",
                      "flips no → yes", "flips yes → no", "κ clean/attacked", "McNemar p", "flagged attacked",
                      "flagged clean", "withheld to clean", "failed clean / attacked"],
                     [[r.attack, r.decision, r.target, r.n_pairs, str(r.false_support_clean),
                       str(r.false_support_attacked), str(r.flips_to_yes), str(r.flips_to_no), _s(r, "kappa"),
                       _p(r, "mcnemar_p"), str(r.flagged_attacked), str(r.flagged_clean),
                       str(r.shown_as_clean) if r.shown_as_clean else "–",
                       f"{len(r.failed_clean)} / {len(r.failed_attacked)}"] for r in results.redteam],
                     "clean against attacked, per attack and decision"))
    for r in results.redteam:
        out.append(Heading(3, f"{r.attack} on {r.decision}"))
        if r.warning:
            out.append(Caution(r.warning))
        rules = ", ".join(f"{rule} {count}" for rule, count in r.flag_rules.items()) or "none"
        out.append(Bullets(((f"flipped no → yes ({len(r.flipped_to_yes)}): ", *_id_list(r.flipped_to_yes, 200)),
                            (f"flipped yes → no ({len(r.flipped_to_no)}): ", *_id_list(r.flipped_to_no, 200)),
                            (f"detector rules on the attacked items: {rules}",),
                            (f"attacked items the detector missed ({len(r.unflagged)}): ", *_id_list(r.unflagged)),
                            (f"accuracy clean {_s(r, 'accuracy_clean')}, attacked {_s(r, 'accuracy_attacked')}",
                             ))))
    return out


def _mean_std(lc: LeaderboardCorrelation, name: str) -> str:
    """A tie-broken coefficient's cell: mean ± std over the repetitions, or why it is undefined."""
    if getattr(lc, f"{name}_mean") is None:
        return _s(lc, f"{name}_mean")
    return f"{_s(lc, f'{name}_mean')} ± {_s(lc, f'{name}_std')}"


def render_markdown(results: CalibrationResults, figures: dict[str, str] | None = None) -> str:
    """The Markdown report; `figures` maps a figure key to its file name relative to the report."""
    return to_markdown(report_blocks(results), figures or {})


def render_html(results: CalibrationResults, figures: dict[str, bytes] | None = None) -> str:
    """The HTML report, one self-contained page; `figures` maps a figure key to its PNG bytes (inlined)."""
    return to_html(report_blocks(results), figures or {}, title=TITLE)


# ---------------------------------------------------------------------------------------------------------------
# Plots
# ---------------------------------------------------------------------------------------------------------------

def plot_confusion(result: AgreementResult, title: str, path: Path) -> None:
    k = len(result.labels)
    fig = _figure(1.6 + 1.1 * k, 1.2 + 1.0 * k)
    ax = fig.add_subplot(1, 1, 1)
    matrix = result.confusion
    ax.imshow(matrix, cmap="Blues", vmin=0, vmax=max(1, max((max(r) for r in matrix), default=1)))
    ax.set_xticks(range(k), result.labels, rotation=30, ha="right")
    ax.set_yticks(range(k), result.labels)
    ax.set_xlabel("judge")
    ax.set_ylabel("human")
    top = max((max(r) for r in matrix), default=0)
    for i in range(k):
        for j in range(k):
            ax.text(j, i, str(matrix[i][j]), ha="center", va="center",
                    color="white" if top and matrix[i][j] > top / 2 else "black")
    ax.set_title(f"{title} (n={result.n}, failed={result.failed})")
    _save(fig, path)


def plot_kappa(decisions: dict[str, AgreementResult], path: Path) -> bool:
    names = [d for d in sorted(decisions) if decisions[d].kappa is not None]
    if not names:
        return False
    fig = _figure(max(4.5, 1.5 + 1.2 * len(names)), 4)
    ax = fig.add_subplot(1, 1, 1)
    kappas = [decisions[d].kappa for d in names]
    lower = [k - (decisions[d].kappa_ci_low if decisions[d].kappa_ci_low is not None else k)
             for d, k in zip(names, kappas)]
    upper = [(decisions[d].kappa_ci_high if decisions[d].kappa_ci_high is not None else k) - k
             for d, k in zip(names, kappas)]
    ax.errorbar(range(len(names)), kappas, yerr=[lower, upper], fmt="o", capsize=5)
    ax.axhline(0.0, color="grey", linewidth=0.8)
    ax.set_xticks(range(len(names)), names, rotation=30, ha="right")
    ax.set_ylim(min(-0.1, min(k - lo for k, lo in zip(kappas, lower)) - 0.05), 1.05)
    ax.set_ylabel("Cohen's κ (95% CI)" if abs(decisions[names[0]].ci_level - 0.95) < 1e-9 else "Cohen's κ (CI)")
    ax.set_title("κ per decision")
    _save(fig, path)
    return True


def plot_leaderboard(lc: LeaderboardCorrelation, metric: str, path: Path) -> bool:
    if not lc.runs:
        return False
    fig = _figure(5.5, 5)
    ax = fig.add_subplot(1, 1, 1)
    xs = [p.human_mean for p in lc.runs]
    ys = [p.judge_mean for p in lc.runs]
    ax.errorbar(xs, ys, xerr=[p.human_se for p in lc.runs], yerr=[p.judge_se for p in lc.runs],
                fmt="o", capsize=3, alpha=0.8)
    for p in lc.runs:
        ax.annotate(p.run_id, (p.human_mean, p.judge_mean), fontsize=7, xytext=(3, 3), textcoords="offset points")
    lo, hi = min(xs + ys), max(xs + ys)
    ax.plot([lo, hi], [lo, hi], color="grey", linewidth=0.8, linestyle="--")
    ax.set_xlabel(f"human {metric}")
    ax.set_ylabel(f"judge {metric}")
    ax.set_title(f"{metric}: τ={_f(lc.kendall_tau_mean)}, ρ={_f(lc.spearman_rho_mean)} (n={lc.n_runs})")
    _save(fig, path)
    return True


# ---------------------------------------------------------------------------------------------------------------
# Writer
# ---------------------------------------------------------------------------------------------------------------

def write_calibration_report(results: CalibrationResults, out: str | Path, *, plots: bool = True) -> list[Path]:
    """Write calibration.md, calibration.html (figures inline), calibration.json, items.jsonl (one line per
    labelled item: human and judge label, confidence, error; what `calibrate --exclude` reads) and (if `plots`)
    PNGs into `out`; return the paths written.

    PNGs: confusion_<decision>.png per decision, reliability_<decision>.png per decision with confidences,
    kappa.png (κ with CI error bars), leaderboard_<metric>.png per run-level metric (judge vs human mean with SE
    error bars).
    """
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    figures: dict[str, str] = {}
    if plots:
        for decision, r in sorted(results.decisions.items()):
            name = f"confusion_{_slug(decision)}.png"
            plot_confusion(r, decision, out / name)
            figures[f"confusion:{decision}"] = name
        for decision, c in sorted(results.confidence.items()):
            name = f"reliability_{_slug(decision)}.png"
            if plot_reliability(c, decision, out / name):
                figures[f"reliability:{decision}"] = name
        if plot_kappa(results.decisions, out / "kappa.png"):
            figures["kappa"] = "kappa.png"
        for metric, lc in sorted(results.run_level.items()):
            name = f"leaderboard_{_slug(metric)}.png"
            if plot_leaderboard(lc, metric, out / name):
                figures[f"leaderboard:{metric}"] = name
        written += [out / name for name in sorted(set(figures.values()))]

    md = out / MARKDOWN_NAME
    write_text_atomic(md, render_markdown(results, figures))
    page = out / HTML_NAME
    write_text_atomic(page, render_html(results, {key: (out / name).read_bytes() for key, name in figures.items()}))
    js = out / JSON_NAME
    write_text_atomic(js, results_json(results))
    if not results.items:
        return [md, page, js, *written]
    per_item = out / ITEMS_NAME
    write_text_atomic(per_item, items_jsonl(results))
    return [md, page, js, per_item, *written]
