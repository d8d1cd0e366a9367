"""`argue-judge calibrate`: agreement of the judge with human assessors."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from judge.api import CALIBRATED_POLICIES, CalibrationProgress, calibrate, choose_attacks
from judge.calibration.document import statistic
from judge.calibration.report_confidence import THRESHOLDS_NAME
from judge.calibration.sources import WICE_PARTIAL_POLICIES
from judge.calibration.stats import FIT_METRICS
from judge.calibration.suite import CalibrationConfig, check_calibrated_judge
from judge.cli import options
from judge.cli.errors import user_errors
from judge.cli.render import console
from judge.defence.injection import Attack
from judge.judging.thresholds import choose_thresholds
from judge.llm.embedded.weights import EMBEDDED_MODEL
from judge.settings import (
    DEFAULT_INJECTION_DETECTOR,
    DEFAULT_THRESHOLDS,
    JudgeSettings,
    ModelSettings,
    PassagePolicy,
    bounds_of,
)


def calibrate_command(
    attributionbench: Annotated[Path | None, typer.Option(
        "--attributionbench", help="AttributionBench JSONL (claim, references, attribution_label).")] = None,
    wice: Annotated[Path | None, typer.Option("--wice", help="WiCE claim JSONL (claim, evidence, label).")] = None,
    wice_partial: Annotated[str, typer.Option(
        "--wice-partial", help="partially_supported: 'strict' (= not supported), 'exclude', or 'separate'.")
    ] = "strict",
    nuggets: Annotated[list[Path] | None, typer.Option(
        "--nuggets", help="v3 nugget banks: (document, nugget) pairs → the answers-nugget decision.")] = None,
    docs: Annotated[list[Path] | None, typer.Option("--docs", help="Documents for --nuggets (JSONL).")] = None,
    human: Annotated[list[Path] | None, typer.Option(
        "--human", help="Human assessors' judgments files (the judgments format).")] = None,
    judged: Annotated[list[Path] | None, typer.Option(
        "--judged", help="The judge's judgments of the same reports (from argue-judge eval).")] = None,
    sample: Annotated[str | None, typer.Option(
        "--sample", help="Stratified sample: N items per data set, or per data set "
        "(attributionbench=200,wice=150; a data set not named is used whole).")] = None,
    exclude: Annotated[Path | None, typer.Option(
        "--exclude", help="Leave out these items before sampling: an items.jsonl of an earlier calibration (e.g. "
        "the items a prompt was tuned on) or one item id per line.", exists=True, dir_okay=False)] = None,
    seed: Annotated[int, options.number(
        "--seed", bounds=bounds_of(CalibrationConfig, "seed"),
        help="Seed of the stratified sample and the bootstrap (recorded in the signature).")] = 0,
    n_boot: Annotated[int, options.number(
        "--n-boot", bounds=bounds_of(CalibrationConfig, "n_boot"),
        help="Bootstrap resamples for kappa intervals; 0 leaves the intervals undefined.")] = 1000,
    model: options.Model = EMBEDDED_MODEL,
    api_base: options.ApiBase = None,
    api_key: options.ApiKey = None,
    max_tokens: options.MaxTokens = 512,
    max_doc_chars: options.MaxDocChars = 6000,
    prompts: options.Prompts = None,
    against: Annotated[Path | None, typer.Option(
        "--against", help="Old prompt directory: compare it with --prompts on the same items (McNemar).",
        exists=True, file_okay=False)] = None,
    attack: Annotated[str | None, typer.Option(
        "--attack", help="Red team: ask every item again with these attacks (KIND[,KIND...]; 'all': the kinds in "
        "judge/data/attacks.json; 'unseen': phrasings of each attack family the learned detector never trained on, "
        "judge/data/unseen-attacks.json, whose kinds are also asked by name; with --attacks-file, the kinds of that "
        "file, 'all' for every one) and report flip rates, kappa and McNemar, clean against attacked.")] = None,
    on_injection: Annotated[str, typer.Option(
        "--on-injection", help="As eval: 'quarantine' withholds text that addresses the judge from the model; 'flag' "
        "shows it as written (to measure what an attack does to an undefended judge).")] = "quarantine",
    injection_detector: options.InjectionDetectorOption = DEFAULT_INJECTION_DETECTOR,
    attacks_file: Annotated[Path | None, typer.Option(
        "--attacks-file", help="Attack kinds of your own (the shape of judge/data/attacks.json).",
        exists=True, dir_okay=False)] = None,
    logprobs: options.Logprobs = None,
    fit_threshold: Annotated[bool, typer.Option(
        "--fit-threshold", help="Fit a confidence threshold per decision on the items (k-fold cross-validated) and "
        f"write OUT/{THRESHOLDS_NAME} for eval --thresholds.")] = False,
    thresholds: options.ThresholdsOption = None,
    fit_metric: Annotated[str, typer.Option(
        "--fit-metric", help=f"What --fit-threshold maximises: {', '.join(FIT_METRICS)}.")] = "kappa",
    panel_judge: options.PanelJudge = None,
    vote: options.Vote = None,
    concurrency: options.Concurrency = 4,
    threads: options.Threads = None,
    kernels: options.Kernels = "auto",
    cache_dir: options.Cache = options.DEFAULT_CACHE_TARGET,
    out: options.Out = Path("calibration/latest"),
    plots: Annotated[bool, typer.Option("--plots/--no-plots", help="Write PNG figures.")] = True,
    batch: options.Batch = False,
    batch_poll: options.BatchPoll = 30.0,
    debug: options.Debug = False,
) -> None:
    """Measure how far each judge decision agrees with human labels, and write a calibration report."""
    if wice_partial not in WICE_PARTIAL_POLICIES:
        raise typer.BadParameter(f"choose {', '.join(WICE_PARTIAL_POLICIES)}", param_hint="--wice-partial")
    if fit_metric not in FIT_METRICS:
        raise typer.BadParameter(f"choose {', '.join(FIT_METRICS)}", param_hint="--fit-metric")
    if on_injection not in CALIBRATED_POLICIES:
        raise typer.BadParameter(f"choose {' or '.join(CALIBRATED_POLICIES)} ('penalise' decides flagged sentences "
                                 "without the model: there is no verdict to calibrate)", param_hint="--on-injection")
    if bool(human) != bool(judged):
        raise typer.BadParameter("--human and --judged go together", param_hint="--human/--judged")
    asks = bool(attributionbench or wice or nuggets)  # without items no model is asked: none is named
    if not asks and thresholds is not None:
        raise typer.BadParameter("applies to the judge asked about items (--attributionbench, --wice, --nuggets), "
                                 "and none is given: --human with --judged compares judgments already made, whose "
                                 "records sign the thresholds they were made with", param_hint="--thresholds")
    with user_errors(debug):
        attacks = chosen_attacks(attack, attacks_file)
        model_settings = ModelSettings(model, api_base, api_key, max_tokens=max_tokens, logprobs=logprobs,
                                       threads=threads, kernels=kernels)
        # A fit is made on the model's own verdicts: rules asked for beside it are refused by the API's rule,
        # before any notice says they apply.
        if fit_threshold and thresholds is not None:
            asked = choose_thresholds(thresholds, model_settings, prompts).rules
            check_calibrated_judge(model_settings, JudgeSettings(thresholds=asked), fit_metric)
        rules = None if fit_threshold or not asks else options.judge_thresholds(thresholds, model_settings, prompts) \
            if not (panel_judge and thresholds is None) else DEFAULT_THRESHOLDS  # a panel's judges: each its own
        settings = JudgeSettings(prompts_dir=prompts, passages=PassagePolicy(max_chars=max_doc_chars),
                                 on_injection=on_injection, thresholds=rules,  # type: ignore[arg-type]
                                 injection_detector=injection_detector)  # type: ignore[arg-type]
        members = options.panel_members(panel_judge, vote, ModelSettings(
            model, api_base, api_key, max_tokens=max_tokens, logprobs=logprobs, threads=threads, kernels=kernels),
            prompts)
        with Progress(TextColumn("calibrating"), BarColumn(), MofNCompleteColumn(), TextColumn("items"),
                      TimeElapsedColumn(), console=console) as bar:
            task = bar.add_task("items", total=None)
            results = calibrate(
                attributionbench=attributionbench, wice=wice, wice_partial=wice_partial, nuggets=nuggets,
                docs=docs, human=human, judged=judged, sample=sample, exclude=exclude, seed=seed,
                **({"panel": members, "vote": vote} if members else
                   {"model": model_settings.model, "api_base": api_base, "api_key": api_key, "vote": vote}),
                judge=settings, against=against,
                attacks=attacks, fit_metric=fit_metric if fit_threshold else None, cache=cache_dir, n_boot=n_boot,
                concurrency=concurrency, out=out, plots=plots,
                progress=CalibrationProgress(start=lambda total: bar.update(task, total=total),
                                             item_done=lambda: bar.advance(task)),
                **({} if members else {"max_tokens": max_tokens, "logprobs": logprobs, "threads": threads,
                                       "kernels": kernels}), batch=batch, batch_poll=batch_poll)
        written = results.files
    for name, result in results.decisions.items():
        ci = f"[{_fmt(result, 'kappa_ci_low')}, {_fmt(result, 'kappa_ci_high')}]" \
            if result.kappa_ci_low is not None else f"CI {_fmt(result, 'kappa_ci_low')}"
        console.print(f"{name}: n={result.n} accuracy={_fmt(result, 'accuracy')} balanced="
                      f"{_fmt(result, 'balanced_accuracy')} kappa={_fmt(result, 'kappa')} {ci}"
                      f" failed={result.failed}; failed counted as wrong: accuracy="
                      f"{_fmt(result, 'accuracy_failed_wrong')} kappa={_fmt(result, 'kappa_failed_wrong')}",
                      highlight=False, soft_wrap=True)
    for judge_name, by_decision in results.judges.items():
        for name, result in by_decision.items():
            console.print(f"{name}, judge {judge_name}: n={result.n} kappa={_fmt(result, 'kappa')} "
                          f"failed={result.failed}", highlight=False, soft_wrap=True)
    for name, among in results.panel.items():
        console.print(f"{name}, among the judges: Fleiss' kappa={_fmt(among, 'fleiss_kappa')} Krippendorff's "
                      f"alpha={_fmt(among, 'krippendorff_alpha')}, split on {among.split} of {among.decisions}",
                      highlight=False, soft_wrap=True)
    for name, c in results.confidence.items():
        console.print(f"{name}: confidence on {c.n} items, ECE={_fmt(c, 'ece')} (mean confidence "
                      f"{_fmt(c, 'mean_confidence')}, accuracy {_fmt(c, 'accuracy')})", highlight=False)
    for name, fit in results.thresholds.items():
        console.print(f"{name}: threshold {fit.rule.verdict} >= {fit.rule.threshold:.4f}; held-out "
                      f"kappa {_fmt(fit.before, 'kappa')} -> {_fmt(fit.after, 'kappa')}, balanced accuracy "
                      f"{_fmt(fit.before, 'balanced_accuracy')} -> {_fmt(fit.after, 'balanced_accuracy')} "
                      f"({fit.folds}-fold)", highlight=False)
    for r in results.redteam:
        console.print(f"attack {r.attack} on {r.decision}: pairs={r.n_pairs} false-support clean "
                      f"{r.false_support_clean} attacked {r.false_support_attacked}; flips no->yes "
                      f"{r.flips_to_yes} yes->no {r.flips_to_no}; kappa={_fmt(r, 'kappa')} "
                      f"McNemar p={_fmt(r, 'mcnemar_p', 4)}; flagged attacked {r.flagged_attacked} clean "
                      f"{r.flagged_clean}" + (f"; withheld to clean {r.shown_as_clean}"
                                                     if r.shown_as_clean else ""), highlight=False, soft_wrap=True)
    if results.prompt_ab:
        console.print(f"prompt A/B: see {out / 'calibration.md'} (McNemar per decision, flipped items)")
    for note in results.notes:
        console.print(f"note: {note}", highlight=False, soft_wrap=True)
    if results.batch is not None:
        from judge.llm.batch import batch_line

        console.print(batch_line(results.batch), highlight=False, soft_wrap=True)
    console.print(f"signature: {results.signature}", highlight=False, soft_wrap=True)
    console.print(f"wrote {', '.join(str(p) for p in written)}", highlight=False, soft_wrap=True)


def _fmt(result: object, name: str, digits: int = 3) -> str:
    """A statistic as the report prints it: its value, or "undefined (why)"."""
    return statistic(result, name, digits)


def chosen_attacks(names: str | None, path: Path | None) -> tuple[Attack, ...]:
    """`--attack` (and `--attacks-file`) as attack kinds, chosen as judge.api.choose_attacks chooses them."""
    if names is None and path is not None:
        raise typer.BadParameter("--attacks-file needs --attack (KIND[,KIND...] or 'all')",
                                 param_hint="--attacks-file")
    try:
        return choose_attacks(names, path)
    except ValueError as exc:
        raise typer.BadParameter(str(exc), param_hint="--attack") from None
